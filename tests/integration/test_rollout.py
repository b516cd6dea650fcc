"""Progressive rollout (playbooks/rollout.yml) of the three rehearsal clusters of
inventories/rehearsal-multi, on three clusters of this module's own (temporary state dir): once on
kubesim, once on three real control planes.

The inventory is used as a user runs it; only the kubeconfig points at this module's clusters.
Before each test using ``fleet`` the `muse-spark` namespace is deleted on the fleet clusters (1 and 2),
so the test starts with them untouched; the canary's deployment is kept as a warm start (a rollout that
finds it Ready resumes over it), which saves a full deploy per test. The fleet update test runs second,
on the three clusters the first test left deployed. Faults are cleared after every test.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest
from deploy_helpers import DGD, get, namespace_exists, request_namespace_deletion, wait_namespace_gone

from kubesim.rehearsal import QUICK, start_rehearsal

REPO = Path(__file__).resolve().parents[2]
INVENTORY = REPO / "inventories" / "rehearsal-multi"
NAMESPACE = "muse-spark"  # k8s_namespace of inventories/local/group_vars
CANARY, GB200, MI355X = "rehearsal-gb300", "rehearsal-gb200", "rehearsal-mi355x"
CLUSTERS = (CANARY, GB200, MI355X)  # kubesim-0, -1, -2


# On three kubesim clusters and on three real control planes (4 passed in 451 s there on 2026-12-01);
# ROLLOUT_BACKENDS=kubesim (or real) runs one of them.
@pytest.fixture(scope="module", params=os.environ.get("ROLLOUT_BACKENDS", "kubesim,real").split(","))
def rollout_clusters(request, tmp_path_factory):
    cs = start_rehearsal(3, backend=request.param, state_dir=tmp_path_factory.mktemp(f"{request.param}-rollout"),
                         nodes="gb300:2,gb200:2,mi355x:1,b200:1", **QUICK)
    try:
        yield cs
    finally:
        cs.stop()


@pytest.fixture
def fleet(rollout_clusters):
    """The three clusters, with the fleet clusters (1, 2) clean and no fault anywhere."""
    dyns = [c.dynamic() for c in rollout_clusters]
    for c in rollout_clusters:
        c.clear_faults()
    for dyn in dyns[1:]:       # all at once: a real namespace controller takes 5-10 s over each
        request_namespace_deletion(dyn, NAMESPACE)
    for dyn in dyns[1:]:
        wait_namespace_gone(dyn, NAMESPACE, timeout=60)
        assert not namespace_exists(dyn, NAMESPACE)
    yield rollout_clusters, dyns
    for c in rollout_clusters:
        c.clear_faults()


@pytest.fixture
def warm_fleet(rollout_clusters):
    """The three clusters as the previous test left them, with no fault anywhere."""
    for c in rollout_clusters:
        c.clear_faults()
    yield rollout_clusters, [c.dynamic() for c in rollout_clusters]
    for c in rollout_clusters:
        c.clear_faults()


@pytest.fixture
def rollout(rollout_clusters, playbook, tmp_path):
    """``rollout(*extra_args)`` -> (PlaybookRun, summary rows by cluster) of one rollout run."""
    runs = iter(range(100))

    def run(*args: str):
        results = tmp_path / f"results-{next(runs)}"
        t0 = time.monotonic()
        r = playbook("rollout.yml", "-i", str(INVENTORY), "-e", f"cluster_kubeconfig={rollout_clusters[0].kubeconfig}",
                     "-e", f"rollout_results_dir={results}", *args, timeout=900)
        print(f"rollout {' '.join(args) or '(defaults)'}: rc={r.rc} in {time.monotonic() - t0:.0f}s")
        summaries = sorted(results.glob("*/summary.json"))
        assert len(summaries) == 1, f"expected one summary.json under {results}:\n{r.output[-3000:]}"
        assert (summaries[0].parent / "summary.md").is_file()
        rows = {row["cluster"]: row for row in json.loads(summaries[0].read_text())}
        assert list(rows) == list(CLUSTERS), rows
        return r, rows

    return run


def namespaces(dyn) -> set[str]:
    return {ns["metadata"]["name"] for ns in dyn.resources.get(api_version="v1", kind="Namespace").get().to_dict()["items"]}


def test_all_clusters_good_and_resume_changes_nothing(fleet, rollout):
    r, rows = rollout()
    assert r.rc == 0, r.output[-4000:]
    for host in CLUSTERS:
        assert rows[host]["status"] in ("installed", "unchanged"), rows[host]
        assert rows[host]["stage"] == "done", rows[host]
        assert r.recap(host)["failed"] == 0
    assert rows[GB200]["status"] == rows[MI355X]["status"] == "installed"
    assert rows[CANARY]["batch"] == "canary"
    assert rows[CANARY]["target"] == "sglang-agg-gb300"
    assert rows[GB200]["target"] == "sglang-kv-router-gb200"
    assert rows[MI355X]["target"] == "vllm-agg-mi355x"
    # the fleet clusters started clean: their first rollout changed them
    assert r.recap(GB200)["changed"] > 0 and r.recap(MI355X)["changed"] > 0

    again, rows = rollout()
    assert again.rc == 0, again.output[-4000:]
    for host in CLUSTERS:
        assert rows[host]["status"] == "unchanged", rows[host]
        assert again.recap(host)["changed"] == 0, (host, again.recap(host))


def workload_image(dyn, host) -> str:
    if host == MI355X:
        obj = get(dyn, "apps/v1", "Deployment", "muse-spark-vllm-standalone-mi355x", NAMESPACE)
        return obj["spec"]["template"]["spec"]["containers"][0]["image"]
    name = {CANARY: "muse-spark-sglang-aggregate-gb300", GB200: "muse-spark-sglang-aggregate-gb200-kv"}[host]
    obj = get(dyn, *DGD, name, NAMESPACE)
    return next(c for c in obj["spec"]["components"] if c["name"] == "Worker")["podTemplate"]["spec"]["containers"][0]["image"]


def test_a_fleet_update_that_fails_on_the_second_cluster_rolls_it_back_and_halts(warm_fleet, rollout):
    clusters, dyns = warm_fleet
    before = {host: workload_image(dyn, host) for host, dyn in zip(CLUSTERS, dyns, strict=True)}
    new = "nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.5.2"
    clusters[1].fault("image-pull", pattern="*:1.5.2")     # the new image cannot be pulled on the second cluster
    # kv-router takes all 8 GB200 GPUs: its update has no room for a surge, so it recreates its workers
    r, rows = rollout("-e", json.dumps({"rollout_serial": [1, 1, 1]}), "-e", f"engine_image={new}",
                      "-e", "update_strategy=Recreate")
    assert r.rc != 0, r.output[-4000:]
    assert (rows[CANARY]["status"], rows[CANARY]["revision"]) == ("updated", "2"), rows[CANARY]
    gb200 = rows[GB200]
    assert (gb200["status"], gb200["revision"], gb200["stage"]) == ("rolled back", "1", "wait for the rollout"), gb200
    assert re.search(r"image \S+:1\.5\.2 cannot be pulled", gb200["reason"]), gb200
    assert rows[MI355X]["status"] == "untouched" and GB200 in rows[MI355X]["reason"], rows[MI355X]
    assert f"Cluster {GB200} was rolled back to revision 1 after failing at wait for the rollout" in r.output

    assert workload_image(dyns[0], CANARY) == new
    assert workload_image(dyns[1], GB200) == before[GB200] != new          # serving the old image again
    assert workload_image(dyns[2], MI355X) == before[MI355X]
    assert not re.search(rf"^{MI355X}\s*:", r.stdout, re.M)


def test_api_down_on_second_cluster_halts_the_rollout(fleet, rollout):
    clusters, dyns = fleet
    before = namespaces(dyns[2])
    clusters[1].fault("api-down")
    r, rows = rollout("-e", json.dumps({"rollout_serial": [1, 1, 1]}))
    assert r.rc != 0, r.output[-4000:]

    assert rows[CANARY]["status"] in ("unchanged", "updated"), rows[CANARY]
    assert rows[GB200]["status"] == "failed", rows[GB200]
    assert rows[GB200]["stage"] == "preflight", rows[GB200]
    assert re.search(r"unreachable", rows[GB200]["reason"], re.I), rows[GB200]
    assert rows[MI355X]["status"] == "untouched", rows[MI355X]
    assert GB200 in rows[MI355X]["reason"], rows[MI355X]
    assert f"Cluster {GB200} failed at preflight" in r.output

    # the halted cluster was never reached: no play ran on it and nothing was created
    assert not re.search(rf"^{MI355X}\s*:", r.stdout, re.M), r.stdout[-2000:]
    assert not namespace_exists(dyns[2], NAMESPACE)
    assert namespaces(dyns[2]) == before


def test_benchmark_regression_on_the_canary_halts_the_rollout(fleet, rollout):
    clusters, dyns = fleet
    clusters[0].fault("frontend-speed", factor=0.5)  # the canary serves at half the expected speed
    r, rows = rollout("-e", "rollout_benchmark_gate=true", "-e", "rollout_benchmark_requests=24")
    assert r.rc != 0, r.output[-4000:]

    canary = rows[CANARY]
    # the canary already runs this plan (the previous test's rollout): the gate fails on it as it is, and with
    # nothing changed there is nothing to roll back to (alone, this test fails a first install the same way)
    assert canary["status"] == "failed", canary
    assert canary["stage"] == "benchmark gate", canary
    assert canary["benchmark"] == "failed", canary
    # the reason names a metric, what was measured and what was expected
    m = re.search(r"(\w+) measured ([\d.]+) vs expected ([\d.]+)", canary["reason"])
    assert m, canary
    assert float(m.group(2)) != float(m.group(3)), canary
    assert f"Cluster {CANARY} failed at benchmark gate" in r.output
    assert m.group(0) in r.output

    for host, dyn in ((GB200, dyns[1]), (MI355X, dyns[2])):
        assert rows[host]["status"] == "untouched", rows[host]
        assert CANARY in rows[host]["reason"], rows[host]
        assert not namespace_exists(dyn, NAMESPACE), host

"""Day two of gb300/agg on a rehearsal cluster of this module: deploy.yml again with changed inputs, rollback.yml
and status.yml, as a user runs them. The rehearsal operator rolls workers as the real one does (a 25% surge that
keeps the old workers until the new ones are Ready; the cluster's 8 GB300 GPUs leave room for it).

The tests run in file order on one target in one namespace, each starting from the state the previous one left
(like a user's cluster): revision 1 (1.5.1), revision 2 (1.5.2), failed updates that leave revision 2 serving,
an explicit rollback to revision 1 (recorded as revision 3), then drift.
Faults are injected by image (an image that cannot be pulled, a worker that crash-loops) or on the frontend's
speed, so that the restored revision is healthy.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
import yaml
from deploy_helpers import BACKENDS, DGD, BackgroundPlaybook, get, items, rehearsal_vars, res, write_inventory

from kubesim.rehearsal import QUICK, start_rehearsal

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
NAMESPACE = "day2"
DGD_NAME = "muse-spark-sglang-aggregate-gb300"
RUNTIME = "nvcr.io/nvidia/ai-dynamo/sglang-runtime"
GB300_AGG = ["-e", "sku=gb300", "-e", "mode=agg"]
WORKER_IMAGE = "spec.components[Worker].podTemplate.spec.containers[main].image"
WORKER_ARGS = "spec.components[Worker].podTemplate.spec.containers[main].args"
TOKEN = "hf_rehearsal_token_not_a_secret"


@pytest.fixture(scope="module", params=BACKENDS)
def cluster(request, tmp_path_factory):
    cs = start_rehearsal(1, backend=request.param, state_dir=tmp_path_factory.mktemp(f"{request.param}-day2"),
                         nodes="gb300:2", **QUICK)
    try:
        yield cs[0]
    finally:
        cs.stop()


@pytest.fixture(scope="module")
def workdir(cluster, tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("day2")
    write_inventory(tmp / "inventory.yml", cluster.kubeconfig, cluster.context, NAMESPACE,
                    engine_poll_seconds=1, model_cache_poll_seconds=1, engine_restart_budget=1,
                    release_results_dir=str(tmp / "status"))
    return tmp


@pytest.fixture
def day2(cluster, workdir, playbook):
    """``day2(playbook, *args)`` runs a playbook against this module's cluster and namespace (no fault left)."""
    def run(name: str, *args: str):
        t0 = time.monotonic()
        r = playbook(name, "-i", str(workdir / "inventory.yml"), *args, timeout=600)
        print(f"{name} {' '.join(args)}: rc={r.rc} in {time.monotonic() - t0:.0f}s")
        return r

    run.dyn = cluster.dynamic()
    run.cluster = cluster
    run.status_dir = workdir / "status"
    cluster.clear_faults()
    yield run
    cluster.clear_faults()


def dgd(dyn) -> dict:
    return get(dyn, *DGD, DGD_NAME, NAMESPACE)


def worker(obj: dict) -> dict:
    return next(c for c in obj["spec"]["components"] if c["name"] == "Worker")["podTemplate"]["spec"]["containers"][0]


def revisions(dyn) -> list[tuple[int, str, str]]:
    cms = items(dyn, "v1", "ConfigMap", NAMESPACE, "inferops.dynamo/record=revision,inferops.dynamo/target=sglang-agg-gb300")
    return sorted((int(c["metadata"]["labels"]["inferops.dynamo/revision"]), c["data"]["image"], c["data"]["source"])
                  for c in cms)


def serving_images(dyn) -> set[str]:
    pods = items(dyn, "v1", "Pod", NAMESPACE, f"nvidia.com/dynamo-graph-deployment-name={DGD_NAME}")
    return {p["spec"]["containers"][0]["image"] for p in pods if not p["metadata"].get("deletionTimestamp")}


def ready(dyn) -> bool:
    obj = dgd(dyn)
    cond = {c["type"]: c for c in obj["status"]["conditions"]}["Ready"]
    return cond["status"] == "True" and obj["status"]["observedGeneration"] == obj["metadata"]["generation"]


def report(run) -> str:
    """The message of the play's final failure (the update report)."""
    tail = run.stdout[run.stdout.rindex("fatal: [rehearsal]: FAILED!"):]
    match = re.search(r"msg: \|-\n(.*?)\n\n(?:TASK \[|PLAY RECAP)", tail, re.S)   # the Lease is given back after it
    assert match, run.stdout[-4000:]
    return "\n".join(line.strip() for line in match.group(1).splitlines())


def test_update_shows_the_diff_records_revision_2_and_then_changes_nothing(day2):
    first = day2("deploy.yml", *GB300_AGG)
    assert first.rc == 0, first.output[-4000:]
    assert "Recorded revision 1 of sglang-agg-gb300 (deploy)" in first.stdout
    cm = get(day2.dyn, "v1", "ConfigMap", f"{DGD_NAME}-revision-1", NAMESPACE)
    assert cm["metadata"]["labels"]["inferops.dynamo/record"] == "revision"
    assert cm["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "inferops.dynamo"
    # the serving object and what watches it (the rehearsal serves the monitoring CRDs)
    assert [o["kind"] for o in yaml.safe_load_all(cm["data"]["objects.yaml"])] == \
        ["NetworkPolicy", "NetworkPolicy", "DynamoGraphDeployment", "PrometheusRule", "ConfigMap"]
    # what ran: the digest of each image the pods run, and the commit of the weights the download got (the
    # rehearsal inventory pins the weights, as a deploy must: the commit is that pin)
    pins = {k: rehearsal_vars()[k] for k in ("checkpoint_revision", "draft_revision")}
    assert yaml.safe_load(cm["data"]["weights"]) == {
        "meta-models/Muse-Spark-Open-816B-A42B-NVFP4": pins["checkpoint_revision"]}
    assert set(yaml.safe_load(cm["data"]["image-digests"])) >= {f"{RUNTIME}:1.5.1"}
    # the inputs: the command line's, and the inventory's pins (the draft's too: a plan input even where the
    # target has no draft model; the rehearsal inventory sets both for every target)
    assert yaml.safe_load(cm["data"]["inputs.yaml"]) == {"sku": "gb300", "mode": "agg", **pins}
    assert cm["data"]["collection-version"] == yaml.safe_load((REPO / "galaxy.yml").read_text())["version"]
    assert cm["data"]["recorded-by"] and re.match(r"\d{4}-\d\d-\d\dT", cm["data"]["recorded-at"])
    assert TOKEN not in json.dumps(cm)

    # --check --diff: the change is shown field by field and nothing is written
    generation = dgd(day2.dyn)["metadata"]["generation"]
    check = day2("deploy.yml", *GB300_AGG, "-e", f"engine_image={RUNTIME}:1.5.2", "--check", "--diff")
    assert check.rc == 0, check.output[-4000:]
    assert f"~ {WORKER_IMAGE}: {RUNTIME}:1.5.1 -> {RUNTIME}:1.5.2" in " ".join(check.stdout.split())
    assert "Rolls every worker (Worker)" in check.stdout
    assert dgd(day2.dyn)["metadata"]["generation"] == generation
    assert revisions(day2.dyn) == [(1, f"{RUNTIME}:1.5.1", "deploy")]

    update = day2("deploy.yml", *GB300_AGG, "-e", f"engine_image={RUNTIME}:1.5.2")
    assert update.rc == 0, update.output[-4000:]
    flat = " ".join(update.stdout.split())
    assert f"~ {WORKER_IMAGE}: {RUNTIME}:1.5.1 -> {RUNTIME}:1.5.2" in flat
    assert "Rolls every worker (Worker)" in flat and "Smoke test passed" in flat
    assert "Recorded revision 2 of sglang-agg-gb300 (deploy)" in flat
    assert revisions(day2.dyn) == [(1, f"{RUNTIME}:1.5.1", "deploy"), (2, f"{RUNTIME}:1.5.2", "deploy")]
    assert serving_images(day2.dyn) == {f"{RUNTIME}:1.5.2"} and ready(day2.dyn)      # the workers rolled

    again = day2("deploy.yml", *GB300_AGG, "-e", f"engine_image={RUNTIME}:1.5.2")
    assert again.rc == 0, again.output[-3000:]
    assert again.recap("rehearsal")["changed"] == 0
    assert "No change to the serving objects of sglang-agg-gb300" in again.stdout
    assert "Revision 2 of sglang-agg-gb300 stays current" in again.stdout


@pytest.mark.parametrize("fault, image, cause", [
    (("image-pull", {"pattern": "*:broken"}), "broken", r"image \S+:broken cannot be pulled \((ErrImagePull|ImagePullBackOff)\)"),
    (("crashloop", {"image": "*:crashy"}), "crashy", r"restarted \d+ times \(budget 1\), now CrashLoopBackOff"),
])
def test_a_failed_update_is_rolled_back_and_serves_again(day2, fault, image, cause):
    day2.cluster.fault(fault[0], **fault[1])
    run = day2("deploy.yml", *GB300_AGG, "-e", f"engine_image={RUNTIME}:{image}")
    assert run.rc != 0 and run.recap("rehearsal")["failed"] == 1
    text = report(run)
    assert text.startswith("Update of sglang-agg-gb300 on rehearsal (namespace day2) failed at the wait for the "
                           "rollout and was rolled back to revision 2."), text
    assert f"~ {WORKER_IMAGE}: {RUNTIME}:1.5.2 -> {RUNTIME}:{image}" in text        # what was tried
    assert re.search(cause, text), text                                              # why it failed
    assert "Restored: revision 2 (recorded " in text and f"image {RUNTIME}:1.5.2); it is Ready and its smoke " \
           "test passed." in text
    # the operator rolls with a surge: the old workers kept serving beside the failing new ones, and the restore
    # removed only the new ones
    assert text.endswith("The target kept serving throughout: the pods that served before the update still serve "
                         "(the restore removed only the new ones)."), text
    assert serving_images(day2.dyn) == {f"{RUNTIME}:1.5.2"} and ready(day2.dyn)
    assert revisions(day2.dyn)[-1][:2] == (2, f"{RUNTIME}:1.5.2")                   # a failed update records nothing


def test_an_update_that_is_ready_but_regresses_the_benchmark_gate_is_rolled_back(day2):
    day2.cluster.fault("frontend-speed", factor=0.5)
    run = day2("deploy.yml", *GB300_AGG, "-e", f"engine_image={RUNTIME}:1.5.3", "-e", "deploy_benchmark_gate=true",
               "-e", "deploy_benchmark_requests=16")
    assert run.rc != 0
    assert "Smoke test passed" in run.stdout                 # Ready and answering: only the gate caught it
    text = report(run)
    assert text.startswith("Update of sglang-agg-gb300 on rehearsal (namespace day2) failed at the benchmark gate "
                           "and was rolled back to revision 2."), text
    measured = re.search(r"(\w+) measured ([\d.]+) vs expected ([\d.]+) \(fail", text)
    assert measured and float(measured.group(2)) < float(measured.group(3)), text
    assert re.search(r"did not serve for at most \d+ s \(from \S+, when the restore replaced the workers", text), text
    assert serving_images(day2.dyn) == {f"{RUNTIME}:1.5.2"} and ready(day2.dyn)
    assert [r[0] for r in revisions(day2.dyn)] == [1, 2]


def test_an_update_waits_for_a_rollout_in_progress_and_stops_when_it_does_not_settle(day2):
    day2.cluster.fault("never-ready", pattern=DGD_NAME)     # the current workers are (still) loading their model
    generation = dgd(day2.dyn)["metadata"]["generation"]
    run = day2("deploy.yml", *GB300_AGG, "-e", f"engine_image={RUNTIME}:1.5.4", "-e", "release_settle_timeout=4")
    assert run.rc != 0
    flat = " ".join(run.stdout.split())
    assert re.search(rf"The rollout of {DGD_NAME} on rehearsal is still in progress after 4 s \(1 pod\(s\) starting "
                     r"\(\S+\)\)\. Changing a DynamoGraphDeployment mid-rollout can delete serving components "
                     r"\(ai-dynamo/dynamo#13620\): let it settle, then run this again\. Nothing was applied\.", flat), flat
    assert dgd(day2.dyn)["metadata"]["generation"] == generation


def test_a_failed_rollout_that_still_moves_is_not_reverted_and_the_play_says_why(day2):
    day2.cluster.fault("never-ready", image="*:1.5.4")      # the new workers load forever, the old ones serve
    run = day2("deploy.yml", *GB300_AGG, "-e", f"engine_image={RUNTIME}:1.5.4", "-e", "engine_ready_timeout=6",
               "-e", "release_settle_timeout=4")
    assert run.rc != 0
    text = report(run)
    assert text.startswith("Update of sglang-agg-gb300 on rehearsal (namespace day2) failed at the wait for the "
                           "rollout and was NOT rolled back."), text
    assert f"{DGD_NAME} did not become Ready within 6 s" in text
    assert re.search(r"Not rolled back: the rollout is still in progress \(\d pod\(s\) starting \(", text), text
    assert "ai-dynamo/dynamo#13620" in text and "playbooks/rollback.yml -l rehearsal -e sku=gb300" in text
    assert text.count("-e revision=2") == 1
    assert text.endswith("The target still served at the failure, from the workers the rolling update keeps until "
                         "new ones are Ready; nothing was restored."), text
    assert worker(dgd(day2.dyn))["image"] == f"{RUNTIME}:1.5.4"           # left as it is, mid-rollout
    assert f"{RUNTIME}:1.5.2" in serving_images(day2.dyn)                 # the old worker still serves
    assert [r[0] for r in revisions(day2.dyn)] == [1, 2]


def test_rollback_to_an_explicit_revision_and_a_missing_one_is_refused_with_the_list(day2):
    run = day2("rollback.yml", *GB300_AGG, "-e", "revision=1")
    assert run.rc == 0, run.output[-4000:]
    flat = " ".join(run.stdout.split())
    assert "Restoring sglang-agg-gb300 revision 1: " in flat
    # from the update left mid-rollout by the previous test, once it has settled
    assert f"~ {WORKER_IMAGE}: {RUNTIME}:1.5.4 -> {RUNTIME}:1.5.1" in flat and "Smoke test passed" in flat
    assert "Recorded revision 3 of sglang-agg-gb300 (rollback to revision 1)" in flat
    assert revisions(day2.dyn)[-1] == (3, f"{RUNTIME}:1.5.1", "rollback to revision 1")
    assert serving_images(day2.dyn) == {f"{RUNTIME}:1.5.1"} and ready(day2.dyn)

    generation = dgd(day2.dyn)["metadata"]["generation"]
    missing = day2("rollback.yml", *GB300_AGG, "-e", "revision=9")
    assert missing.rc != 0
    flat = " ".join(missing.stdout.split())
    assert "sglang-agg-gb300 on rehearsal has no revision 9. Revisions: revision 3 (current): " in flat
    for n, image in ((2, "1.5.2"), (1, "1.5.1")):
        assert re.search(rf"revision {n}: \S+ by \S+, image {re.escape(RUNTIME)}:{image}, deploy", flat), flat
    assert "Nothing was changed." in flat
    assert dgd(day2.dyn)["metadata"]["generation"] == generation


def edit_worker_args(dyn, extra: list[str]) -> None:
    """What `kubectl edit` does: an update of the live object under the field manager kubectl-edit."""
    obj = dgd(dyn)
    components = obj["spec"]["components"]
    worker(obj)["args"] = worker(obj)["args"] + extra
    res(dyn, *DGD).patch(name=DGD_NAME, namespace=NAMESPACE, body={"spec": {"components": components}},
                         content_type="application/merge-patch+json", field_manager="kubectl-edit")


def status(day2, *args: str) -> tuple[list[dict], str]:
    run = day2("status.yml", *args)
    assert run.rc == 0, run.output[-3000:]
    assert run.recap("rehearsal")["changed"] == 0
    reports = sorted(day2.status_dir.glob("*/status.json"))
    assert reports, run.stdout[-2000:]
    rows = json.loads(reports[-1].read_text())
    assert (reports[-1].parent / "status.md").is_file()
    return rows, run.stdout


def test_a_kubectl_edit_shows_as_drift_and_the_next_deploy_restores_it(day2):
    rows, _ = status(day2)
    assert [(r["target"], r["revision"], r["image"], r["ready"], r["drift"]) for r in rows] == \
        [("sglang-agg-gb300", 3, f"{RUNTIME}:1.5.1", "yes", [])]

    edit_worker_args(day2.dyn, ["--log-level", "debug"])
    generation = dgd(day2.dyn)["metadata"]["generation"]
    rows, out = status(day2)
    assert dgd(day2.dyn)["metadata"]["generation"] == generation          # status changed nothing
    (row,) = rows
    assert [(d["field"], d["op"], d["managers"]) for d in row["drift_fields"]] == \
        [(WORKER_ARGS, "changed", ["kubectl-edit"])]
    flat = " ".join(out.split())
    assert "Drift of sglang-agg-gb300 on rehearsal since revision 3:" in flat
    assert f"{WORKER_ARGS} changed by kubectl-edit: added --log-level debug" in flat
    md = (sorted(day2.status_dir.glob("*/status.md"))[-1]).read_text()
    assert f"`{WORKER_ARGS}`: changed by kubectl-edit" in md

    run = day2("deploy.yml", *GB300_AGG)
    assert run.rc == 0, run.output[-4000:]
    flat = " ".join(run.stdout.split())
    assert f"{WORKER_ARGS}: removed --log-level debug [changed outside the collection by kubectl-edit: restored]" in flat
    assert f"Took back 1 field(s) changed outside the collection: {WORKER_ARGS}" in flat
    assert "--log-level" not in worker(dgd(day2.dyn))["args"] and ready(day2.dyn)
    assert "Revision 3 of sglang-agg-gb300 stays current" in flat
    rows, _ = status(day2)
    assert rows[0]["drift"] == [] and "live" not in rows[0]


def test_status_says_when_the_clusters_prometheus_cannot_be_read(day2):
    # nothing listens on port 9 of the loopback: the figures are reported unreadable, the rest of the status stays
    rows, out = status(day2, "-e", "prometheus_url=http://127.0.0.1:9")
    (row,) = rows
    assert row["ready"] == "yes" and row["live"] is None and row["alerts"] == []
    assert row["live_error"].startswith("Prometheus at http://127.0.0.1:9 did not answer /api/v1/query")
    flat = " ".join(out.split())
    assert "Live (p90, errors, rate)" in flat and "unreadable: Prometheus at http://127.0.0.1:9" in flat


def lease_holder(dyn) -> str:
    lease = get(dyn, "coordination.k8s.io/v1", "Lease", f"{DGD_NAME}-release", NAMESPACE)
    return ((lease or {}).get("spec") or {}).get("holderIdentity") or ""


def wait_for(predicate, what: str, timeout: float = 120):
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.5)


def test_two_updates_at_once_never_interleave_and_record_one_revision_each(day2, workdir):
    inventory = ["-i", str(workdir / "inventory.yml")]
    # A's new workers take their time (they load until the fault is cleared): A holds the release meanwhile
    day2.cluster.fault("never-ready", image="*:1.5.5")
    a = BackgroundPlaybook(workdir, "deploy.yml", *inventory, *GB300_AGG, "-e", f"engine_image={RUNTIME}:1.5.5")
    wait_for(lambda: worker(dgd(day2.dyn))["image"] == f"{RUNTIME}:1.5.5" and lease_holder(day2.dyn),
             "update A to apply under the release Lease")
    holder = lease_holder(day2.dyn)

    # a run that will not wait is refused naming A, and applies nothing
    c = day2("deploy.yml", *GB300_AGG, "-e", f"engine_image={RUNTIME}:1.5.7", "-e", "release_lease_wait=1")
    assert c.rc != 0
    flat = " ".join(c.stdout.split())
    assert f"Another update of sglang-agg-gb300 on rehearsal is in progress: {holder} has been updating it since" \
        in flat, flat[-3000:]
    assert "Nothing was applied" in flat and f"kubectl delete lease -n {NAMESPACE} {DGD_NAME}-release" in flat
    assert worker(dgd(day2.dyn))["image"] == f"{RUNTIME}:1.5.5"

    # B waits for A, then updates after it
    b = BackgroundPlaybook(workdir, "deploy.yml", *inventory, *GB300_AGG, "-e", f"engine_image={RUNTIME}:1.5.6")
    wait_for(lambda: "TASK [inferops.dynamo.release : Wait for any other update" in b.stdout_so_far(),
             "update B to reach the release Lease")
    time.sleep(2)
    assert worker(dgd(day2.dyn))["image"] == f"{RUNTIME}:1.5.5"          # B has not applied during A's wait
    day2.cluster.clear_faults()
    ra, rb = a.wait(), b.wait()
    assert ra.rc == 0, ra.output[-4000:]
    assert rb.rc == 0, rb.output[-4000:]
    assert "Recorded revision 4 of sglang-agg-gb300 (deploy)" in ra.stdout
    flat = " ".join(rb.stdout.split())
    assert "Recorded revision 5 of sglang-agg-gb300 (deploy)" in flat
    assert re.search(rf"Waited [\d.]+ s for the update of sglang-agg-gb300 by {re.escape(holder)} to finish", flat), flat
    assert revisions(day2.dyn)[-2:] == [(4, f"{RUNTIME}:1.5.5", "deploy"), (5, f"{RUNTIME}:1.5.6", "deploy")]
    assert serving_images(day2.dyn) == {f"{RUNTIME}:1.5.6"} and ready(day2.dyn)
    assert lease_holder(day2.dyn) == ""                                  # given back
    rows, _ = status(day2)
    assert [(r["revision"], r["image"], r["drift"]) for r in rows] == [(5, f"{RUNTIME}:1.5.6", [])]


def tamper_revision(dyn, number: int, change) -> None:
    """What anyone with ConfigMap edit rights in the namespace can do to a recorded revision."""
    name = f"{DGD_NAME}-revision-{number}"
    objects = [o for o in yaml.safe_load_all(get(dyn, "v1", "ConfigMap", name, NAMESPACE)["data"]["objects.yaml"]) if o]
    change(objects)
    res(dyn, "v1", "ConfigMap").patch(name=name, namespace=NAMESPACE,
                                      body={"data": {"objects.yaml": yaml.safe_dump_all(objects)}})


def test_a_restore_applies_what_the_collection_renders_and_refuses_an_altered_record(day2):
    planted = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "planted-admin", "namespace": NAMESPACE},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
               "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": NAMESPACE}]}
    tamper_revision(day2.dyn, 1, lambda objects: objects.append(planted))
    generation = dgd(day2.dyn)["metadata"]["generation"]
    refused = day2("rollback.yml", *GB300_AGG, "-e", "revision=1")
    assert refused.rc != 0
    flat = " ".join(refused.stdout.split())
    assert ("revision 1 of sglang-agg-gb300 was altered: it holds objects the collection does not render for "
            f"sglang-agg-gb300 in namespace {NAMESPACE}: RoleBinding {NAMESPACE}/planted-admin") in flat
    assert get(day2.dyn, "rbac.authorization.k8s.io/v1", "RoleBinding", "planted-admin", NAMESPACE) is None
    assert dgd(day2.dyn)["metadata"]["generation"] == generation

    # a change inside an object the collection does render is not applied either: the restore renders it again
    def host_path(objects):
        graph = next(o for o in objects if o["kind"] == "DynamoGraphDeployment")
        pod = next(c for c in graph["spec"]["components"] if c["name"] == "Worker")["podTemplate"]["spec"]
        pod["volumes"].append({"name": "host", "hostPath": {"path": "/"}})
    tamper_revision(day2.dyn, 2, host_path)
    restored = day2("rollback.yml", *GB300_AGG, "-e", "revision=2")
    assert restored.rc == 0, restored.output[-4000:]
    volumes = next(c for c in dgd(day2.dyn)["spec"]["components"] if c["name"] == "Worker")["podTemplate"]["spec"]
    assert all("hostPath" not in v for v in volumes["volumes"])
    assert serving_images(day2.dyn) == {f"{RUNTIME}:1.5.2"}

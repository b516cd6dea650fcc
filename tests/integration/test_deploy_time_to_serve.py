"""Time to serve on the rehearsal cluster: the transfers overlap, the workers start once the weights are
complete, the pre-pull Job goes afterwards, the play says where the time went, and a rerun does nothing."""

from __future__ import annotations

import pytest
from deploy_helpers import DeployEnv, get, items, new_namespace, write_inventory

PULL_S, DOWNLOAD_S = 3.0, 4.0


@pytest.fixture(scope="module")
def slow_cluster(tmp_path_factory):
    """A cluster whose engine image takes PULL_S to pull on each node (gb300 nodes only)."""
    from kubesim.rehearsal import start_rehearsal

    cs = start_rehearsal(1, state_dir=tmp_path_factory.mktemp("kubesim-tts"), nodes="gb300:2", ready_seconds=1.0,
                         download_seconds=DOWNLOAD_S, image_pull_seconds=PULL_S, trace_seconds=1.0)
    yield cs[0]
    cs.stop()


def _ts(value: str) -> float:
    import calendar
    import time

    return calendar.timegm(time.strptime(value, "%Y-%m-%dT%H:%M:%SZ"))


def test_overlapped_deploy_prepulls_and_reports_its_phases(slow_cluster, tmp_path):
    ns = new_namespace("tts")
    env = DeployEnv(slow_cluster, ns, write_inventory(tmp_path / "inv.yml", slow_cluster.kubeconfig,
                                                       slow_cluster.context, ns), slow_cluster.dynamic())
    first = env.run("deploy.yml", "-e", "sku=gb300", "-e", "mode=agg")
    assert first.rc == 0, first.output[-3000:]
    assert "Pull the runtime image on the SKU's nodes, nvcr.io/nvidia/ai-dynamo/sglang-runtime" in first.stdout
    assert "Time to serve on rehearsal (this run; transfers overlapped)" in first.stdout
    # the report is printed as YAML, which doubles the apostrophe inside a quoted string
    assert "pull: the pre-pull Job on the SKU''s nodes, while the download ran" in first.stdout

    # the pre-pull Job is gone, and the kubelets list the runtime image on both nodes
    jobs = {j["metadata"]["name"] for j in items(env.dyn, "batch/v1", "Job", ns)}
    assert jobs == {"model-download", "stage-benchmark-trace"}
    marker = "Pull the runtime image on the SKU's nodes, "
    image = next(w for w in first.stdout.splitlines() if marker in w).split(marker, 1)[1].split(" ")[0].rstrip("]")
    for node in items(env.dyn, "v1", "Node"):
        assert image in [n for i in node["status"].get("images") or [] for n in i["names"]]

    # the workers started once the weights were complete, and found the image already there
    done = _ts(get(env.dyn, "batch/v1", "Job", "model-download", ns)["status"]["completionTime"])
    workers = items(env.dyn, "v1", "Pod", ns, "nvidia.com/dynamo-component-type=worker")
    assert workers and all(_ts(p["metadata"]["creationTimestamp"]) >= done for p in workers)
    events = items(env.dyn, "v1", "Event", ns)
    pulled_by_workers = [e for e in events if e["reason"] == "Pulling"
                         and e["involvedObject"]["name"] in {p["metadata"]["name"] for p in workers}]
    assert pulled_by_workers == []

    again = env.run("deploy.yml", "-e", "sku=gb300", "-e", "mode=agg")
    assert again.rc == 0, again.output[-3000:]
    assert again.recap("rehearsal")["changed"] == 0
    assert "download: complete before this run (not run again)" in again.stdout


def test_a_bad_model_source_is_refused_before_anything_is_created(slow_cluster, tmp_path):
    ns = new_namespace("tts")
    env = DeployEnv(slow_cluster, ns, write_inventory(tmp_path / "inv.yml", slow_cluster.kubeconfig,
                                                       slow_cluster.context, ns), slow_cluster.dynamic())
    run = env.run("deploy.yml", "-e", "sku=gb300", "-e", "mode=agg",
                  "-e", '{"model_cache_source": {"type": "s3", "bucket": "weights", "region": "eu"}}',
                  "-e", "model_cache_download_retries=-1")
    assert run.rc != 0
    # the plan refuses them, every one at once, with the other inputs
    assert "Plan refused: 4 rules broken" in run.output
    assert "needs secret" in run.output and "must be an s3:// URL" in run.output
    assert "model_cache_download_retries=-1 must be 0" in run.output
    assert "model_cache_source.region='eu' is not a region" in run.output
    assert get(env.dyn, "v1", "Namespace", ns) is None

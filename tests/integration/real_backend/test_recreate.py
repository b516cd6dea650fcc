"""Recreate on a full cluster, through the real Dynamo operator: the collection writes the strategy on each worker's
pod template, where the operator reads it (it ignores the DGD's metadata), so the old workers stop before the new
ones start and the update fits on GPUs the graph already holds. Were the strategy where the operator does not read
it, the workers would roll with a surge: the new pod would stay Pending on the full nodes and the update would never
finish."""

from __future__ import annotations

import pytest
from deploy_helpers import DGD, get, items, write_inventory

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

RUNTIME = "nvcr.io/nvidia/ai-dynamo/sglang-runtime"
KV = "muse-spark-sglang-aggregate-gb300-kv"
TARGET = ["-e", "sku=gb300", "-e", "mode=kv-router"]


@pytest.fixture(scope="module")
def full_cluster(tmp_path_factory):
    """Two GB300 nodes: the kv-router target's two 4-GPU workers take every GPU."""
    from kubesim.rehearsal import QUICK, start_rehearsal

    cs = start_rehearsal(1, backend="real", state_dir=tmp_path_factory.mktemp("recreate"), nodes="gb300:2", **QUICK)
    try:
        yield cs[0]
    finally:
        cs.stop()


def test_a_recreate_update_on_full_nodes_stops_the_old_workers_first_and_finishes(full_cluster, playbook, tmp_path):
    inv = write_inventory(tmp_path / "inv.yml", full_cluster.kubeconfig, full_cluster.context, "full",
                          engine_poll_seconds=1, model_cache_poll_seconds=1)
    dyn = full_cluster.dynamic()
    first = playbook("deploy.yml", "-i", str(inv), *TARGET, timeout=600)
    assert first.rc == 0, first.output[-4000:]

    # a rolling update needs a surge pod the full nodes cannot hold: refused before anything is sent
    rolling = playbook("deploy.yml", "-i", str(inv), *TARGET, "-e", f"engine_image={RUNTIME}:1.5.2", timeout=600)
    assert rolling.rc != 0 and "-e update_strategy=Recreate" in " ".join(rolling.output.split())

    recreate = playbook("deploy.yml", "-i", str(inv), *TARGET, "-e", f"engine_image={RUNTIME}:1.5.2",
                        "-e", "update_strategy=Recreate", "-e", "engine_ready_timeout=300", timeout=900)
    assert recreate.rc == 0, recreate.output[-4000:]
    dgd = get(dyn, *DGD, KV, "full")
    assert dgd["status"]["state"] == "successful"
    workers = [p for p in items(dyn, "v1", "Pod", "full", f"nvidia.com/dynamo-graph-deployment-name={KV}")
               if p["metadata"]["labels"].get("nvidia.com/dynamo-component-type") == "worker"
               and not p["metadata"].get("deletionTimestamp")]
    assert {p["spec"]["containers"][0]["image"] for p in workers} == {f"{RUNTIME}:1.5.2"}
    assert all(p["status"].get("phase") == "Running" for p in workers), [p["status"] for p in workers]

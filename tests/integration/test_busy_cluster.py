"""A busy cluster: GPUs already held by other workloads, a rolling update that needs surge room, a failed first
install, and a checkpoint change. On a rehearsal cluster of this module (two GB300 nodes, 8 GPUs; one MI355X node).

The tests run in file order: tenant-a's aggregated GB300 target holds 4 of the 8 GB300 GPUs in the first test and
is torn down in the second; the MI355X tests share tenant-c.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from deploy_helpers import DGD, get, items, namespace_exists, write_inventory

from kubesim.rehearsal import QUICK, start_rehearsal

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
RUNTIME = "nvcr.io/nvidia/ai-dynamo/sglang-runtime"
AGG = "muse-spark-sglang-aggregate-gb300"
KV = "muse-spark-sglang-aggregate-gb300-kv"
MI355X = "muse-spark-vllm-standalone-mi355x"


# kubesim only, to keep `make test` within its budget: the GPU counting reads the same Node and Pod fields on
# both backends; the real scheduler's own refusal is tested in real_backend/test_serving.py.
@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    cs = start_rehearsal(1, state_dir=tmp_path_factory.mktemp("kubesim-busy"), nodes="gb300:2,mi355x:1", **QUICK)
    try:
        yield cs[0]
    finally:
        cs.stop()


@pytest.fixture
def tenant(cluster, playbook, tmp_path_factory):
    """``tenant(namespace)(playbook, *args)``: run a playbook as the owner of that namespace."""
    cluster.clear_faults()

    def make(namespace: str):
        inv = tmp_path_factory.getbasetemp() / f"busy-{namespace}.yml"
        if not inv.exists():
            write_inventory(inv, cluster.kubeconfig, cluster.context, namespace, engine_poll_seconds=1,
                            model_cache_poll_seconds=1)

        def run(name: str, *args: str):
            t0 = time.monotonic()
            r = playbook(name, "-i", str(inv), *args, timeout=600)
            print(f"{namespace}: {name} {' '.join(args)}: rc={r.rc} in {time.monotonic() - t0:.0f}s")
            return r
        return run

    make.dyn = cluster.dynamic()
    make.cluster = cluster
    yield make
    cluster.clear_faults()


def flat(run) -> str:
    return " ".join(run.output.split())


def test_a_target_that_cannot_fit_beside_another_is_refused_naming_who_holds_the_gpus(tenant):
    a = tenant("tenant-a")("deploy.yml", "-e", "sku=gb300", "-e", "mode=agg")
    assert a.rc == 0, a.output[-3000:]
    b = tenant("tenant-b")("deploy.yml", "-e", "sku=gb300", "-e", "mode=kv-router")
    assert b.rc != 0 and b.recap("rehearsal")["failed"] == 1
    text = flat(b)
    assert ("sglang-kv-router-gb300 does not fit on rehearsal: it needs 2 Worker pod(s) of 4 nvidia.com/gpu (new) "
            "on nodes labelled nvidia.com/gpu.product=NVIDIA-GB300; the 2 node(s) have 8 nvidia.com/gpu allocatable, "
            "4 requested by running pods") in text
    assert "so 1 pod(s) cannot be placed" in text
    assert f"Held by: tenant-a/DynamoGraphDeployment/{AGG}: 4 nvidia.com/gpu (1 pod(s))." in text
    assert "Ways out: tear down what holds them" in text and "another cluster" in text and "Nothing was applied." in text
    assert not namespace_exists(tenant.dyn, "tenant-b")          # refused before anything was applied


def test_a_rolling_update_that_needs_surge_room_is_refused_and_recreate_goes_through(tenant):
    down = tenant("tenant-a")("teardown.yml", "-e", "sku=gb300", "-e", "mode=agg")
    assert down.rc == 0, down.output[-3000:]
    assert items(tenant.dyn, "v1", "ConfigMap", "tenant-a", "inferops.dynamo/record=revision") == []
    b = tenant("tenant-b")
    first = b("deploy.yml", "-e", "sku=gb300", "-e", "mode=kv-router")
    assert first.rc == 0, first.output[-3000:]                  # 8 of 8 GPUs now

    generation = get(tenant.dyn, *DGD, KV, "tenant-b")["metadata"]["generation"]
    refused = b("deploy.yml", "-e", "sku=gb300", "-e", "mode=kv-router", "-e", f"engine_image={RUNTIME}:1.5.2")
    assert refused.rc != 0
    text = flat(refused)
    assert ("The rolling update of sglang-kv-router-gb300 does not fit on rehearsal: it needs 1 Worker pod(s) of "
            "4 nvidia.com/gpu (surge)") in text
    assert "The current pods of sglang-kv-router-gb300 hold 8 nvidia.com/gpu and keep serving" in text
    assert "-e update_strategy=Recreate" in text and "Nothing was applied." in text
    assert get(tenant.dyn, *DGD, KV, "tenant-b")["metadata"]["generation"] == generation

    recreate = b("deploy.yml", "-e", "sku=gb300", "-e", "mode=kv-router", "-e", f"engine_image={RUNTIME}:1.5.2",
                 "-e", "update_strategy=Recreate")
    assert recreate.rc == 0, recreate.output[-4000:]
    # the preview shows the worker's pod template gaining the strategy annotation (its first annotation: the whole
    # metadata block is new), where the operator reads it
    assert "spec.components[Worker].podTemplate.metadata" in flat(recreate), flat(recreate)[-4000:]
    assert "nvidia.com/deployment-strategy" in flat(recreate) and "Recreate" in flat(recreate)
    dgd = get(tenant.dyn, *DGD, KV, "tenant-b")
    # where the Dynamo operator reads it: each worker's pod template (a DGD metadata annotation is ignored)
    workers = [c for c in dgd["spec"]["components"] if c["type"] == "worker"]
    assert workers and all(c["podTemplate"]["metadata"]["annotations"]["nvidia.com/deployment-strategy"] == "Recreate"
                           for c in workers)
    assert "nvidia.com/deployment-strategy" not in dgd["metadata"].get("annotations", {})
    pods = items(tenant.dyn, "v1", "Pod", "tenant-b", f"nvidia.com/dynamo-graph-deployment-name={KV}")
    assert {p["spec"]["containers"][0]["image"] for p in pods} == {f"{RUNTIME}:1.5.2"}


def amd_pods(dyn, namespace):
    return [p for p in items(dyn, "v1", "Pod", namespace)
            if any("amd.com/gpu" in ((c.get("resources") or {}).get("limits") or {}) for c in p["spec"]["containers"])]


def test_a_failed_first_install_with_deploy_atomic_leaves_nothing_that_holds_gpus(tenant):
    tenant.cluster.fault("image-pull", pattern="*rocm*")
    run = tenant("tenant-c")("deploy.yml", "-e", "sku=mi355x", "-e", "mode=agg", "-e", "checkpoint_repo=org/ckpt-a",
                             "-e", "deploy_atomic=true")
    assert run.rc != 0
    text = flat(run)
    assert "First install of vllm-agg-mi355x on rehearsal (namespace tenant-c) failed at the wait for the rollout." in text
    assert "cannot be pulled" in text
    assert (f"deploy_atomic=true: removed NetworkPolicy/{MI355X}-server, Deployment/{MI355X}, Service/{MI355X}-frontend, "
            f"PodMonitor/{MI355X}-server, "
            f"PrometheusRule/{MI355X}-objectives, ConfigMap/{MI355X}-dashboard, so nothing of this target "
            "holds GPUs; the model cache and the token Secret stay.") in text
    assert get(tenant.dyn, "apps/v1", "Deployment", MI355X, "tenant-c") is None
    assert amd_pods(tenant.dyn, "tenant-c") == []
    assert get(tenant.dyn, "v1", "PersistentVolumeClaim", "shared-model-cache", "tenant-c") is not None
    assert get(tenant.dyn, "v1", "Secret", "hf-token-secret", "tenant-c") is not None


def model_args(dyn) -> list[str]:
    """The server's command line (``vllm serve <checkpoint> ...``)."""
    main = get(dyn, "apps/v1", "Deployment", MI355X, "tenant-c")["spec"]["template"]["spec"]["containers"][0]
    return main["command"] + main["args"]


def test_a_changed_checkpoint_downloads_beside_the_old_one_and_switches_once_complete(tenant):
    c = tenant("tenant-c")
    cache = Path(tenant.cluster.kubeconfig).parent / "0" / "volumes" / "tenant-c" / "shared-model-cache" / "hub"
    first = c("deploy.yml", "-e", "sku=mi355x", "-e", "mode=agg", "-e", "checkpoint_repo=org/ckpt-a")
    assert first.rc == 0, first.output[-3000:]
    assert "org/ckpt-a" in model_args(tenant.dyn)
    assert (cache / "models--org--ckpt-a").is_dir()

    tenant.cluster.fault("job-fail", pattern="model-download")
    failed = c("deploy.yml", "-e", "sku=mi355x", "-e", "mode=agg", "-e", "checkpoint_repo=org/ckpt-b")
    assert failed.rc != 0
    assert "Job model-download failed after" in failed.output
    # the download failed: the workers were never touched and still serve the old weights, which stay
    assert "org/ckpt-a" in model_args(tenant.dyn) and "org/ckpt-b" not in model_args(tenant.dyn)
    assert (cache / "models--org--ckpt-a").is_dir()
    revs = items(tenant.dyn, "v1", "ConfigMap", "tenant-c", "inferops.dynamo/record=revision")
    assert [r["metadata"]["labels"]["inferops.dynamo/revision"] for r in revs] == ["1"]

    tenant.cluster.clear_faults()
    switched = c("deploy.yml", "-e", "sku=mi355x", "-e", "mode=agg", "-e", "checkpoint_repo=org/ckpt-b")
    assert switched.rc == 0, switched.output[-3000:]
    assert "org/ckpt-b" in model_args(tenant.dyn)
    assert (cache / "models--org--ckpt-b").is_dir() and (cache / "models--org--ckpt-a").is_dir()
    assert "Recorded revision 2 of vllm-agg-mi355x (deploy)" in flat(switched)

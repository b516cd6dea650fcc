"""deploy.yml and benchmark.yml on the real control plane: the stand-ins (operator, kubelet side, model
servers on pod IPs, runnable pods) are clients of the real API server, everything else is real. Each
test asserts what a real cluster shows: the real Job controller's conditions, the real service proxy,
pod logs through the kubelet endpoint, the scheduler's placement."""

from __future__ import annotations

import json
import time
import uuid

import pytest
from deploy_helpers import DGD, TARGET_ARGS, get, items, release_namespaces, write_inventory

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

GB300_AGG = ["-e", "sku=gb300", "-e", "mode=agg"]
DGD_NAME = "muse-spark-sglang-aggregate-gb300"
SGLANG_IMAGE = "nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.5.1"


@pytest.fixture
def real_env(real_cluster, real_dyn, tmp_path):
    """A fresh namespace on the session's real cluster and an inventory for it; faults cleared after."""
    ns = "r-" + uuid.uuid4().hex[:8]
    inv = write_inventory(tmp_path / "inv.yml", real_cluster.kubeconfig, real_cluster.context, ns)
    real_cluster.clear_faults()
    yield ns, inv
    real_cluster.clear_faults()
    release_namespaces(real_dyn, ns, timeout=60)


def failed(run, *words):
    assert run.rc != 0, run.output[-3000:]
    for w in words:
        assert w in run.output, f"{w!r} not in the output:\n{run.output[-4000:]}"


def test_deploy_serves_through_the_real_service_proxy_and_reruns_unchanged(real_dyn, real_env, playbook):
    ns, inv = real_env
    first = playbook("deploy.yml", "-i", str(inv), *GB300_AGG)
    assert first.rc == 0, first.output[-4000:]
    assert "Smoke test passed" in first.stdout
    dgd = get(real_dyn, *DGD, DGD_NAME, ns)
    assert dgd["status"]["observedGeneration"] == dgd["metadata"]["generation"]
    assert dgd["status"]["state"] == "successful"
    svc = get(real_dyn, "v1", "Service", f"{DGD_NAME}-frontend", ns)
    assert svc["spec"]["clusterIP"].startswith("10.96.")                  # allocated by the real API server
    slices = items(real_dyn, "discovery.k8s.io/v1", "EndpointSlice", ns,
                   f"kubernetes.io/service-name={DGD_NAME}-frontend")
    addresses = [a for s in slices for e in s.get("endpoints") or [] for a in e["addresses"]]
    assert addresses and all(a.startswith("10.244.") for a in addresses)  # written by the real controller
    # the runtime discovers its peers as the operator configured it (DYN_DISCOVERY_BACKEND=kubernetes): each worker
    # publishes its own endpoints in a DynamoWorkerMetadata as its pod's discovery ServiceAccount
    workers = items(real_dyn, "v1", "Pod", ns, "nvidia.com/dynamo-component-type=worker")
    published = {m["metadata"]["name"]: m["spec"]["data"]
                 for m in items(real_dyn, "nvidia.com/v1alpha1", "DynamoWorkerMetadata", ns)}
    assert workers and all(published.get(p["metadata"]["name"], {}).get("endpoints") for p in workers), published
    assert {p["spec"]["serviceAccountName"] for p in workers} == {f"{DGD_NAME}-k8s-service-discovery"}
    job = get(real_dyn, "batch/v1", "Job", "model-download", ns)
    assert any(c["type"] == "Complete" and c["status"] == "True" for c in job["status"]["conditions"])

    second = playbook("deploy.yml", "-i", str(inv), *GB300_AGG)
    assert second.rc == 0 and second.recap("rehearsal")["changed"] == 0, second.output[-4000:]

    # The gate's figures depend on this machine's load; what must hold is the path: the real AIPerf ran
    # as a pod, reached the frontend by the Service's name, and its summary came back through the log. The real
    # frontend tokenizes on the CPU the parallel pass saturates: TTFT p50 470.8 ms there (2.6x the published
    # 177.9, make test 2026-12-07), so the gate here allows five times the published figures.
    results = inv.parent / "results"
    bench = playbook("benchmark.yml", "-i", str(inv), *GB300_AGG, "-e", "benchmark_tolerance=4.0",
                     "-e", '{"benchmark_concurrency": [8, 16]}', "-e", f"benchmark_results_dir={results}")
    assert bench.rc == 0, bench.output[-4000:]
    summaries = {json.loads(f.read_text())["context"]["concurrency"]: json.loads(f.read_text())
                 for f in results.rglob("summary.json")}
    assert list(results.rglob("sweep.json")), "the sweep wrote no sweep.json"
    assert set(summaries) >= {8, 16}, sorted(results.rglob("*"))
    for point in (8, 16):
        assert summaries[point]["context"]["request_count"] == 36 and summaries[point]["failures"]["count"] == 0
    assert summaries[16]["context"]["gated"] and not summaries[8]["context"]["gated"]


def test_download_job_failure_is_the_real_job_controllers(real_cluster, real_dyn, real_env, playbook):
    ns, inv = real_env
    real_cluster.fault("job-fail", pattern="model-download")
    # one retry: the real Job controller replaces the failed pod once (after its 10 s backoff), then gives up
    run = playbook("deploy.yml", "-i", str(inv), *GB300_AGG, "-e", "model_cache_download_retries=1")
    failed(run, "Job model-download failed after", "BackoffLimitExceeded",
           "kubesim injected failure (fault job-fail)")
    job = get(real_dyn, "batch/v1", "Job", "model-download", ns)
    assert any(c["type"] == "Failed" and c["reason"] == "BackoffLimitExceeded" for c in job["status"]["conditions"])
    assert job["status"].get("failed") == 2                          # the first pod and its one retry
    assert get(real_dyn, *DGD, DGD_NAME, ns) is None


def test_image_that_cannot_be_pulled_fails_fast_with_the_kubelets_state(real_cluster, real_env, playbook):
    _ns, inv = real_env
    real_cluster.fault("image-pull", pattern="*sglang-runtime*")
    start = time.monotonic()
    run = playbook("deploy.yml", "-i", str(inv), *GB300_AGG)
    failed(run, SGLANG_IMAGE, f"DynamoGraphDeployment {DGD_NAME} will not become Ready")
    assert any(w in run.output for w in ("ErrImagePull", "ImagePullBackOff"))
    assert time.monotonic() - start < 240


def test_crash_loop_past_the_budget_names_the_cause_from_the_log(real_cluster, real_env, playbook):
    _ns, inv = real_env
    real_cluster.fault("crashloop", pattern=DGD_NAME)
    run = playbook("deploy.yml", "-i", str(inv), *GB300_AGG)
    failed(run, "CrashLoopBackOff", "Not enough memory")


@pytest.fixture
def gb300_nodes_tainted(real_dyn):
    """Every GB300 node tainted NoSchedule (a maintenance taint the workers do not tolerate): the
    preflight sees the GPUs free, only the real scheduler knows the pods cannot land."""
    api = real_dyn.resources.get(api_version="v1", kind="Node")
    names = [n["metadata"]["name"] for n in api.get().to_dict()["items"]
             if n["metadata"]["labels"].get("node.kubernetes.io/instance-type") == "gb300"]
    assert names
    taint = {"key": "maintenance.example.com/drain", "value": "true", "effect": "NoSchedule"}
    for name in names:
        api.patch(name=name, body={"spec": {"taints": [taint]}}, content_type="application/merge-patch+json")
    yield names
    for name in names:
        api.patch(name=name, body={"spec": {"taints": None}}, content_type="application/merge-patch+json")


def test_pods_the_scheduler_cannot_place_fail_fast_with_the_real_schedulers_message(real_dyn, real_env, playbook,
                                                                                    gb300_nodes_tainted):
    ns, inv = real_env
    start = time.monotonic()
    run = playbook("deploy.yml", "-i", str(inv), *GB300_AGG, "-e", "engine_unschedulable_grace=20")
    # kube-scheduler's own FailedScheduling text, quoted in the diagnosis
    failed(run, "unschedulable for", "0/", "nodes are available", "node(s) had untolerated taint")
    assert time.monotonic() - start < 300
    (pod,) = items(real_dyn, "v1", "Pod", ns, "nvidia.com/dynamo-component-type=worker")
    scheduled = {c["type"]: c for c in pod["status"]["conditions"]}["PodScheduled"]
    assert scheduled["status"] == "False" and scheduled["reason"] == "Unschedulable"


def test_a_dgd_that_never_becomes_ready_times_out_with_the_operators_reason(real_cluster, real_dyn, real_env, playbook):
    ns, inv = real_env
    real_cluster.fault("never-ready", pattern=DGD_NAME)
    run = playbook("deploy.yml", "-i", str(inv), *GB300_AGG, "-e", "engine_ready_timeout=10")
    failed(run, f"DynamoGraphDeployment {DGD_NAME}", "Ready")
    ready = {c["type"]: c for c in get(real_dyn, *DGD, DGD_NAME, ns)["status"]["conditions"]}["Ready"]
    # the real operator names the resource that is not ready (its Deployment not Available); why is in the pods
    assert ready["status"] == "False" and ready["reason"] == "some_resources_are_not_ready"
    assert "Component deployment not ready" in ready["message"], ready


def test_the_api_server_stopped_mid_run_and_restarted_converges(real_cluster, real_dyn, real_env, playbook):
    ns, inv = real_env
    real_cluster.fault("api-down")
    down = playbook("deploy.yml", "-i", str(inv), *GB300_AGG)
    failed(down, "is unreachable or refused the credentials")
    real_cluster.clear_faults()                        # kube-apiserver starts again on the same etcd
    up = playbook("deploy.yml", "-i", str(inv), *GB300_AGG)
    assert up.rc == 0, up.output[-4000:]
    again = playbook("deploy.yml", "-i", str(inv), *GB300_AGG)
    assert again.rc == 0 and again.recap("rehearsal")["changed"] == 0
    assert len(items(real_dyn, *DGD, ns)) == 1
    assert len(items(real_dyn, "v1", "Pod", ns, "nvidia.com/dynamo-component-type=worker")) == 1


@pytest.mark.parametrize("target", ["sglang-disagg-gb200", "sglang-kv-router-gb300", "vllm-agg-gb200",
                                    "vllm-agg-b200", "vllm-agg-mi355x"])
def test_the_molecule_targets_deploy_rerun_unchanged_and_tear_down_keeping_the_cache(real_dyn, real_env, playbook,
                                                                                     target):
    """The targets of molecule/ (which run on kubesim), on the real control plane: the disaggregated
    GB200 target's ComputeDomain channels are allocated by the real scheduler's DRA plugin."""
    ns, inv = real_env
    args = ["-i", str(inv), *TARGET_ARGS[target]]
    first = playbook("deploy.yml", *args)
    assert first.rc == 0 and "Smoke test passed" in first.stdout, first.output[-4000:]
    second = playbook("deploy.yml", *args)
    assert second.rc == 0 and second.recap("rehearsal")["changed"] == 0, second.output[-4000:]
    if target == "sglang-disagg-gb200":
        claims = items(real_dyn, "resource.k8s.io/v1", "ResourceClaim", ns)
        assert len(claims) == 2 and all(c["status"]["allocation"]["devices"]["results"][0]["driver"]
                                        == "compute-domain.nvidia.com" for c in claims)
    down = playbook("teardown.yml", *args)
    assert down.rc == 0, down.output[-4000:]
    assert get(real_dyn, "v1", "PersistentVolumeClaim", "shared-model-cache", ns)["status"]["phase"] == "Bound"

"""playbooks/deploy.yml failures: the real playbook against a rehearsal cluster that lacks something.

Each test asserts the play failed, the key words of the message the user sees and, where the failure
is caught before anything is written, that nothing was created (the target namespace does not exist)."""

import re
import time
from pathlib import Path

import pytest
import yaml
from deploy_helpers import DGD, get, items, namespace_exists

pytestmark = pytest.mark.cluster

GB300_AGG = ["-e", "sku=gb300", "-e", "mode=agg"]
DGD_NAME = "muse-spark-sglang-aggregate-gb300"
SGLANG_IMAGE = "nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.5.1"


def failed(run, *words):
    assert run.rc != 0, run.output[-3000:]
    assert run.recap("rehearsal")["failed"] == 1
    for w in words:
        assert w in run.output, f"{w!r} not in the output:\n{run.output[-4000:]}"


@pytest.fixture(scope="module")
def small_cluster(kubesim_factory):
    """One GB200 and one GB300 node, and no StorageClass at all."""
    return kubesim_factory(nodes="gb200:1,gb300:1", storage_classes="none")


# ------------------------------------------------------------------------- before anything is created
@pytest.mark.parametrize("storage_class, words", [
    ("shared-rwx", ["StorageClass 'shared-rwx' does not exist on rehearsal", "Available: none"]),
    ("", ["No StorageClass on rehearsal can serve ReadWriteMany", "-e storage_class=NAME"]),
])
def test_no_storage_class(deploy_env, small_cluster, storage_class, words):
    env = deploy_env(cluster=small_cluster, storage_class=storage_class)
    run = env.run("deploy.yml", *GB300_AGG)
    failed(run, *words)
    assert not namespace_exists(env.dyn, env.namespace)


def test_storage_class_that_does_not_exist(deploy_env):
    env = deploy_env(storage_class="fast-nfs")
    run = env.run("deploy.yml", *GB300_AGG)
    failed(run, "StorageClass 'fast-nfs' does not exist on rehearsal", "Available: ", "shared-rwx", "local-rwo")
    assert not namespace_exists(env.dyn, env.namespace)


def test_not_enough_gpus(deploy_env, small_cluster):
    env = deploy_env(cluster=small_cluster)
    run = env.run("deploy.yml", "-e", "sku=gb200", "-e", "mode=kv-router")
    failed(run, "Not enough GPUs for sglang-kv-router-gb200 on rehearsal", "needs 8 nvidia.com/gpu",
           "found 1 such node(s) with 4 allocatable in total")
    assert not namespace_exists(env.dyn, env.namespace)


def test_api_unreachable_closed_port(deploy_env, kubesim_cluster, tmp_path):
    import socket

    with socket.socket() as s:      # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    kc = yaml.safe_load(Path(kubesim_cluster.kubeconfig).read_text())
    for c in kc["clusters"]:
        c["cluster"]["server"] = f"http://127.0.0.1:{port}"
    bad = tmp_path / "closed-port-kubeconfig"
    bad.write_text(yaml.safe_dump(kc))
    env = deploy_env(cluster_kubeconfig=str(bad))
    run = env.run("deploy.yml", *GB300_AGG)
    failed(run, "The Kubernetes API of rehearsal is unreachable or refused the credentials",
           str(bad), "cluster_kubeconfig / cluster_context")
    assert not namespace_exists(env.dyn, env.namespace)


def test_api_down_fault(deploy_env, kubesim_faults):
    env = deploy_env()
    kubesim_faults.fault("api-down")
    try:
        run = env.run("deploy.yml", *GB300_AGG)
    finally:
        kubesim_faults.fault("clear-api-down")
    failed(run, "The Kubernetes API of rehearsal is unreachable or refused the credentials", "kubesim-0")
    assert not namespace_exists(env.dyn, env.namespace)


def test_crd_missing(deploy_env, kubesim_factory):
    cluster = kubesim_factory(nodes="gb300:1")      # a cluster of its own: the CRD is deleted for good
    dyn = cluster.dynamic()
    crds = dyn.resources.get(api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition")
    if get(dyn, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "dynamographdeployments.nvidia.com"):
        crds.delete(name="dynamographdeployments.nvidia.com")
    env = deploy_env(cluster=cluster)
    run = env.run("deploy.yml", *GB300_AGG)
    failed(run, "The DynamoGraphDeployment CRD (dynamographdeployments.nvidia.com, version v1beta1) is not",
           "Install the Dynamo platform")
    assert not namespace_exists(env.dyn, env.namespace)


def test_forbidden_kind_is_named_by_preflight(deploy_env, kubesim_faults):
    env = deploy_env()
    kubesim_faults.fault("forbid", resource="jobs.batch", namespace=env.namespace)
    run = env.run("deploy.yml", *GB300_AGG)
    failed(run, "These credentials may not create jobs.batch", f"in namespace {env.namespace} on rehearsal",
           "nothing was created")
    assert not namespace_exists(env.dyn, env.namespace)


@pytest.mark.parametrize("args, words", [
    (["-e", "sku=gb300", "-e", "mode=pd"], ["[invalid-mode] mode='pd' is not valid. Valid: agg, disagg, kv-router."]),
    (["-e", "sku=h100", "-e", "mode=agg"], ["[unknown-sku]", "Valid: b200, gb200, gb300, mi350x, mi355x."]),
    (["-e", "sku=gb200", "-e", "mode=agg", "-e", "checkpoint=bf16"],
     ["2 rules broken: placeholder-checkpoint, weights-exceed-hbm."]),
    (["-e", "sku=mi355x", "-e", "mode=agg", "-e", "framework=vllm"], ["[placeholder-checkpoint]"]),
])
def test_wrong_extra_var_fails_in_plan(deploy_env, args, words):
    env = deploy_env()
    run = env.run("deploy.yml", *args)
    failed(run, *words)
    assert "inferops.dynamo.preflight" not in run.stdout
    assert not namespace_exists(env.dyn, env.namespace)


# ------------------------------------------------------------------------- after the cache or the engine
@pytest.mark.slow
def test_download_job_failure_reports_the_log_tail(deploy_env, kubesim_faults):
    env = deploy_env()
    kubesim_faults.fault("job-fail", pattern="model-download")
    run = env.run("deploy.yml", *GB300_AGG)
    failed(run, "Job model-download failed after", "BackoffLimitExceeded",
           "kubesim injected failure (fault job-fail)")
    assert get(env.dyn, *DGD, DGD_NAME, env.namespace) is None      # the engine was never applied
    # kept for inspection; the PVC stays
    assert get(env.dyn, "batch/v1", "Job", "model-download", env.namespace) is not None
    assert get(env.dyn, "v1", "PersistentVolumeClaim", "shared-model-cache", env.namespace) is not None


@pytest.mark.slow
def test_dgd_that_never_becomes_ready(deploy_env, kubesim_faults):
    env = deploy_env()
    kubesim_faults.fault("never-ready", pattern=DGD_NAME)
    start = time.monotonic()
    run = env.run("deploy.yml", *GB300_AGG, "-e", "engine_ready_timeout=8")
    failed(run, f"DynamoGraphDeployment {DGD_NAME}", "Ready")
    # the wait that ran out of time says so and names the state it ended in, once: one task waited, no retries
    assert "Unknown error" not in run.stdout and "RETRYING" not in run.stdout
    assert f"DynamoGraphDeployment {DGD_NAME} did not become Ready within 8 s" in run.stdout
    assert f"State: DGD {DGD_NAME}: 1/2 components ready" in run.stdout
    assert "TASK [inferops.dynamo.engine : Check the answer]" not in run.stdout      # no smoke test
    assert time.monotonic() - start < 120
    dgd = get(env.dyn, *DGD, DGD_NAME, env.namespace)
    assert dgd is not None and {c["type"]: c["status"] for c in dgd["status"]["conditions"]}["Ready"] == "False"


@pytest.mark.slow
def test_smoke_test_wrong_answer(deploy_env):
    env = deploy_env()
    run = env.run("deploy.yml", *GB300_AGG, "-e", "engine_smoke_expected=SOMETHING_ELSE")
    # the rehearsal's engines answer with token ids, not words: the message quotes whatever came back
    failed(run, f"Smoke test failed: {DGD_NAME}-frontend answered \"", 'expected "SOMETHING_ELSE"')


@pytest.mark.slow
def test_smoke_test_frontend_errors(deploy_env, kubesim_faults):
    """Deployed and Ready, then the engines stop answering (the real frontend says 503 "not ready", then 404 once the
    model's last worker has left discovery): the next deploy's smoke test fails on the status it got."""
    env = deploy_env()
    assert env.run("deploy.yml", *GB300_AGG).rc == 0
    kubesim_faults.fault("frontend-errors", rate=1.0, status=503)
    run = env.run("deploy.yml", *GB300_AGG, "-e", "engine_smoke_retries=1")
    failed(run, "Send the smoke-test chat completion")
    assert re.search(r"answered (503|404) \(expected 200\)|Status code was (503|404)", run.output), run.output[-3000:]
    assert "Smoke test passed" not in run.stdout


@pytest.mark.slow
def test_image_that_cannot_be_pulled_fails_fast(deploy_env, kubesim_faults):
    env = deploy_env()
    kubesim_faults.fault("image-pull", pattern="*sglang-runtime*")
    start = time.monotonic()
    run = env.run("deploy.yml", *GB300_AGG)         # engine_ready_timeout stays 7200 s
    elapsed = time.monotonic() - start
    failed(run, SGLANG_IMAGE, f"DynamoGraphDeployment {DGD_NAME} will not become Ready")
    assert any(w in run.output for w in ("ErrImagePull", "ImagePullBackOff"))
    assert elapsed < 120, f"took {elapsed:.0f} s"
    pods = items(env.dyn, "v1", "Pod", env.namespace, "nvidia.com/dynamo-component-type=worker")
    assert pods and all(not p["status"].get("containerStatuses", [{}])[0].get("ready") for p in pods)

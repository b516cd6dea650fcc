"""inferops.dynamo.service_request through the kubesim API service proxy, run via ansible-playbook:
the recipe's smoke prompt is answered, a 5xx answer fails with its status, check mode, a missing service."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from module_runner import run_tasks as run_module_tasks

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
IMAGE = "nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.5.1"
MODEL = "meta-models/Muse-Spark-Open-816B-A42B-NVFP4"
SMOKE = {"model": MODEL, "messages": [{"role": "user", "content": "Reply with exactly: READY"}],
         "temperature": 0, "max_tokens": 64}


def run_tasks(tmp_path: Path, cluster, tasks: list[dict], check: bool = False) -> list[dict]:
    return run_module_tasks(tmp_path, cluster, tasks, check=check)[0]


def request_task(namespace: str, service: str, **opts) -> dict:
    return {"name": "request", "inferops.dynamo.service_request": {
        "namespace": namespace, "service": service, "port": 8000, **opts}}


@pytest.fixture(scope="module")
def served(kubesim_cluster):
    """A ready DGD (frontend + GB300 worker) in its own namespace: (namespace, frontend service name)."""
    dyn = kubesim_cluster.dynamic()
    ns = "svc-req"
    nsr = dyn.resources.get(api_version="v1", kind="Namespace")
    nsr.create(body={"metadata": {"name": ns}})
    dgd = dyn.resources.get(api_version="nvidia.com/v1beta1", kind="DynamoGraphDeployment")
    dgd.create(namespace=ns, body={
        "apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment", "metadata": {"name": "smoke"},
        "spec": {"backendFramework": "sglang", "components": [
            {"name": "Frontend", "type": "frontend", "replicas": 1, "podTemplate": {"spec": {"containers": [
                {"name": "main", "image": IMAGE, "command": ["python3", "-m", "dynamo.frontend"]}]}}},
            {"name": "Worker", "type": "worker", "replicas": 1, "podTemplate": {"spec": {
                "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-GB300"},
                "containers": [{"name": "main", "image": IMAGE, "command": ["python3", "-m", "dynamo.sglang"],
                                "args": ["--model-path", MODEL, "--served-model-name", MODEL],
                                "resources": {"limits": {"nvidia.com/gpu": "4"}}}]}}}]}})
    deadline = time.time() + 30
    while time.time() < deadline:
        conds = (dgd.get(namespace=ns, name="smoke").to_dict().get("status") or {}).get("conditions") or []
        if any(c["type"] == "Ready" and c["status"] == "True" for c in conds):
            break
        time.sleep(0.2)
    else:
        pytest.fail("the smoke DGD did not become Ready")
    yield ns, "smoke-frontend"
    nsr.delete(name=ns)


def test_smoke_prompt_round_trip(tmp_path, kubesim_faults, served):
    ns, svc = served
    r, models = run_tasks(tmp_path, kubesim_faults, [
        request_task(ns, svc, path="/v1/chat/completions", method="POST", body=SMOKE, timeout=30),
        request_task(ns, svc, path="/v1/models"),
    ])
    assert r.get("failed") is False and r["changed"] is False and r["status"] == 200, r
    # the answer is the model server's (a rehearsal engine emits token ids, not the recipe's READY): the module
    # returns the body as it came and its JSON
    assert r["json"]["choices"][0]["message"]["content"].strip(), r["json"]
    assert r["json"]["model"] == MODEL and json.loads(r["content"]) == r["json"] and r["content_truncated"] is False
    assert r["url"].endswith(f"/api/v1/namespaces/{ns}/services/{svc}:8000/proxy/v1/chat/completions")
    assert r["elapsed"] < 10
    assert MODEL in [m["id"] for m in models["json"]["data"]]


def test_5xx_fails_with_status(tmp_path, kubesim_cluster, k8s_dynamic, served):
    """A Service with no Ready pod behind it: the API server's service proxy answers 503 itself, whatever serves."""
    ns, _ = served
    k8s_dynamic.resources.get(api_version="v1", kind="Service").create(namespace=ns, body={
        "metadata": {"name": "nobody-home"},
        "spec": {"selector": {"app": "nobody-home"}, "ports": [{"port": 8000, "targetPort": 8000}]}})
    r, accepted = run_tasks(tmp_path, kubesim_cluster, [
        request_task(ns, "nobody-home", path="/v1/chat/completions", method="POST", body=SMOKE),
        request_task(ns, "nobody-home", path="/v1/chat/completions", method="POST", body=SMOKE,
                     status_code=[200, 503]),
    ])
    assert r["failed"] is True and r["status"] == 503, r
    assert "answered 503" in r["msg"] and f"{ns}/nobody-home:8000" in r["msg"], r["msg"]
    assert accepted.get("failed") is False and accepted["status"] == 503


def test_check_mode_and_truncation(tmp_path, kubesim_faults, served):
    ns, svc = served
    (r,) = run_tasks(tmp_path, kubesim_faults, [
        request_task(ns, svc, path="/v1/chat/completions", method="POST", body=SMOKE, max_content_chars=20)],
        check=True)
    assert r.get("failed") is False and r["status"] == 200 and r["changed"] is False
    assert len(r["content"]) == 20 and r["content_truncated"] is True
    assert r["json"]["choices"][0]["message"]["content"].strip()     # parsed from the whole body


def test_missing_service_fails_with_api_status(tmp_path, kubesim_cluster, served):
    ns, _ = served
    (r,) = run_tasks(tmp_path, kubesim_cluster, [request_task(ns, "no-such-frontend", path="/v1/models")])
    assert r["failed"] is True and r["status"] == 404, r
    assert "answered 404" in r["msg"] and "no-such-frontend" in r["msg"], r["msg"]

"""inferops.dynamo.workload_status run for real through ansible-playbook against a kubesim cluster:
a ready DGD, an image that cannot be pulled, a crash-looping worker, an unschedulable pod, a failing Job,
a downloading Job (progress + the progress callback) and an unreachable API."""

from __future__ import annotations

import socket
import sys
import time
import uuid
from pathlib import Path

import pytest
import yaml
from module_runner import run_tasks

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
IMAGE = "nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.5.1"
MODEL = "meta-models/Muse-Spark-Open-816B-A42B-NVFP4"


def status_task(name: str, namespace: str, kind: str = "DynamoGraphDeployment", **opts) -> dict:
    return {"name": f"status {name}", "inferops.dynamo.workload_status": {
        "kind": kind, "name": name, "namespace": namespace, "poll_interval": 0.5, **opts}}


def dgd(name: str, *, worker_image: str = IMAGE, gpus: str | None = "4", product: str = "NVIDIA-GB300") -> dict:
    worker_ctr = {"name": "main", "image": worker_image, "command": ["python3", "-m", "dynamo.sglang"],
                  "args": ["--model-path", MODEL, "--served-model-name", MODEL, "--tp", "4"]}
    worker_spec: dict = {"containers": [worker_ctr]}
    if gpus:
        worker_ctr["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
        worker_spec["nodeSelector"] = {"nvidia.com/gpu.product": product}
    return {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment", "metadata": {"name": name},
            "spec": {"backendFramework": "sglang", "components": [
                {"name": "Frontend", "type": "frontend", "replicas": 1, "podTemplate": {"spec": {"containers": [
                    {"name": "main", "image": IMAGE, "command": ["python3", "-m", "dynamo.frontend"]}]}}},
                {"name": "Worker", "type": "worker", "replicas": 1, "podTemplate": {"spec": worker_spec}}]}}


def create(k8s_dynamic, namespace: str, body: dict):
    res = k8s_dynamic.resources.get(api_version=body["apiVersion"], kind=body["kind"])
    return res.create(namespace=namespace, body=body)


def uniq(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def test_ready_dgd(tmp_path, kubesim_cluster, k8s_dynamic, k8s_namespace):
    create(k8s_dynamic, k8s_namespace, dgd("ready"))
    (r,), _ = run_tasks(tmp_path, kubesim_cluster, [status_task("ready", k8s_namespace, wait_seconds=30)])
    assert r["ready"] is True and r["exists"] is True and r["fatal"] is False and r["changed"] is False
    assert r["progress"].startswith("DGD ready: 2/2 components ready"), r["progress"]
    assert r["pod_selector"] == "nvidia.com/dynamo-graph-deployment-name=ready"
    pods = r["diagnosis"]["pods"]
    assert {p["component_type"] for p in pods} == {"frontend", "worker"} and all(p["ready"] for p in pods)
    assert any(c["type"] == "Ready" and c["status"] == "True" for c in r["diagnosis"]["conditions"])
    assert r["elapsed"] < 25


def test_missing_workload_is_not_an_error(tmp_path, kubesim_cluster, k8s_namespace):
    (r,), _ = run_tasks(tmp_path, kubesim_cluster, [status_task("nope", k8s_namespace)])
    assert r.get("failed") is False and r["exists"] is False and r["ready"] is False
    assert r["progress"] == "DGD nope: not found"


def test_image_pull_is_fatal_within_seconds(tmp_path, kubesim_faults, k8s_dynamic, k8s_namespace):
    bad = f"nvcr.io/nvidia/ai-dynamo/sglang-runtime:{uniq('missing')}"
    kubesim_faults.fault("image-pull", pattern=bad)
    create(k8s_dynamic, k8s_namespace, dgd("pull", worker_image=bad, gpus=None))
    (r,), _ = run_tasks(tmp_path, kubesim_faults, [status_task("pull", k8s_namespace, wait_seconds=30)])
    assert r["fatal"] is True and r["ready"] is False
    assert r["elapsed"] < 10, r["elapsed"]
    reason = r["fatal_reasons"][0]
    assert bad in reason and "cannot be pulled" in reason and "container main" in reason, reason
    assert "pull-worker-" in reason
    assert any(e["reason"] == "Failed" and bad in e["message"] for e in r["diagnosis"]["events"])


def test_crash_looping_worker(tmp_path, kubesim_faults, k8s_dynamic, k8s_namespace):
    name = uniq("crash")
    kubesim_faults.fault("crashloop", pattern=f"{name}-worker-*")
    create(k8s_dynamic, k8s_namespace, dgd(name, gpus=None))
    (r,), _ = run_tasks(tmp_path, kubesim_faults,
                        [status_task(name, k8s_namespace, wait_seconds=30, restart_budget=1, log_lines=10)])
    assert r["fatal"] is True, r["progress"]
    reason = r["fatal_reasons"][0]
    assert f"{name}-worker-" in reason and "restarted" in reason and "budget 1" in reason, reason
    assert "CrashLoopBackOff" in reason and "exit code 1" in reason, reason
    worker = next(p for p in r["diagnosis"]["pods"] if p.get("component_type") == "worker")
    assert worker["restarts"] > 1 and "CrashLoopBackOff" in worker["state"]
    tails = r["diagnosis"]["log_tail"]
    assert tails and tails[0]["pod"] == worker["name"] and 0 < len(tails[0]["lines"]) <= 10
    assert any("crashloop" in line for line in tails[0]["lines"]), tails
    assert r["elapsed"] < 15


def test_unschedulable_after_grace_only(tmp_path, kubesim_cluster, k8s_dynamic, k8s_namespace):
    create(k8s_dynamic, k8s_namespace, dgd("huge", gpus="64"))
    time.sleep(0.5)
    first, second = run_tasks(tmp_path, kubesim_cluster, [
        status_task("huge", k8s_namespace),  # default grace 60 s: a fresh Pending pod is not fatal
        status_task("huge", k8s_namespace, wait_seconds=15, unschedulable_grace_seconds=2),
    ])[0]
    assert first["fatal"] is False and first["ready"] is False
    assert "Pending (Unschedulable)" in first["progress"], first["progress"]
    assert second["fatal"] is True
    reason = second["fatal_reasons"][0]
    assert "huge-worker-" in reason and "unschedulable for" in reason and "Insufficient nvidia.com/gpu" in reason, reason
    worker = next(p for p in second["diagnosis"]["pods"] if p.get("component_type") == "worker")
    assert worker["unschedulable"]["reason"] == "Unschedulable"
    assert any(e["reason"] == "FailedScheduling" for e in second["diagnosis"]["events"])


def test_failed_job_has_log_tail(tmp_path, kubesim_faults, k8s_dynamic, k8s_namespace):
    name = uniq("bench")
    kubesim_faults.fault("job-fail", pattern=name)
    create(k8s_dynamic, k8s_namespace, {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
        "spec": {"backoffLimit": 0, "template": {"spec": {"restartPolicy": "Never", "containers": [
            {"name": "aiperf", "image": "nvcr.io/nvidia/ai-dynamo/aiperf:0.13", "command": ["aiperf", "profile"]}]}}}})
    (r,), _ = run_tasks(tmp_path, kubesim_faults, [status_task(name, k8s_namespace, kind="Job", wait_seconds=20)])
    assert r["fatal"] is True and r["job_failed"] is True and r["complete"] is False and r["ready"] is False
    assert r["fatal_reasons"][0].startswith(f"Job {name} failed: BackoffLimitExceeded"), r["fatal_reasons"]
    assert r["pod_selector"] in (f"job-name={name}",) or "controller-uid" in r["pod_selector"]
    lines = [line for t in r["diagnosis"]["log_tail"] for line in t["lines"]]
    assert any("kubesim injected failure" in line for line in lines), r["diagnosis"]["log_tail"]
    assert r["elapsed"] < 15


def test_download_job_progress_and_callback(tmp_path, kubesim_faults, k8s_dynamic, k8s_namespace):
    name = uniq("download")
    # Long enough for the first poll to find it running on a loaded machine: with 4 s, the parallel pass's load (the
    # real Dynamo runtime serving every session cluster) once let the pod finish before ansible-playbook's first poll.
    kubesim_faults.fault("slow-download", seconds=15)
    create(k8s_dynamic, k8s_namespace, {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
        "spec": {"backoffLimit": 0, "template": {"spec": {"restartPolicy": "Never", "containers": [
            {"name": "download", "image": "python:3.11-slim",
             "command": ["bash", "-c", f"hf download {MODEL}"]}]}}}})
    task = {"name": "wait for the download", "inferops.dynamo.workload_status": {
        "kind": "Job", "name": name, "namespace": k8s_namespace, "wait_seconds": 1, "poll_interval": 0.5},
        "until": "r0.complete or r0.fatal", "retries": 40, "delay": 0}
    (r,), out = run_tasks(tmp_path, kubesim_faults, [task],
                          env={"ANSIBLE_CALLBACKS_ENABLED": "inferops.dynamo.progress"})
    assert r["complete"] is True and r["ready"] is True and r["fatal"] is False, r
    assert r["progress"].startswith(f"Job {name}: complete"), r["progress"]
    shown = [line for line in out.splitlines() if line.startswith("[localhost] wait for the download: ")]
    assert any("Downloading " + MODEL in line and "%" in line for line in shown), out[-3000:]


def test_one_task_waits_for_the_download_showing_progress_and_no_failure(tmp_path, kubesim_faults, k8s_dynamic,
                                                                         k8s_namespace):
    """As the roles wait: one task, no until loop, its progress shown as plain lines (no FAILED - RETRYING)."""
    name = uniq("download")
    kubesim_faults.fault("slow-download", seconds=8)
    create(k8s_dynamic, k8s_namespace, {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
        "spec": {"backoffLimit": 0, "template": {"spec": {"restartPolicy": "Never", "containers": [
            {"name": "download", "image": "python:3.11-slim",
             "command": ["bash", "-c", f"hf download {MODEL}"]}]}}}})
    task = {"name": "wait for the download", "inferops.dynamo.workload_status": {
        "kind": "Job", "name": name, "namespace": k8s_namespace, "wait_seconds": 120, "poll_interval": 0.5,
        "progress_interval": 1, "stop_when_absent": True}}
    (r,), out = run_tasks(tmp_path, kubesim_faults, [task])
    assert r["complete"] is True and r["fatal"] is False and r["looks"] > 1, r
    shown = [line for line in out.splitlines() if line.startswith("[localhost] ")]
    assert any("Downloading " + MODEL in line and "%" in line for line in shown), out[-3000:]
    assert not [line for line in out.splitlines() if "FAILED" in line or "fatal" in line or "ERROR" in line], out


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_api_names_what_it_tried(tmp_path, kubesim_cluster):
    kc = yaml.safe_load(Path(kubesim_cluster.kubeconfig).read_text())
    port = _closed_port()
    for cl in kc["clusters"]:
        cl["cluster"]["server"] = f"http://127.0.0.1:{port}"
    path = tmp_path / "dead-kubeconfig"
    path.write_text(yaml.safe_dump(kc))
    (r,), _ = run_tasks(tmp_path, kubesim_cluster, [status_task("any", "default")], kubeconfig=str(path))
    assert r["failed"] is True
    msg = r["msg"]
    assert "cannot reach the Kubernetes API" in msg, msg
    assert str(path) in msg and kubesim_cluster.context in msg and f"127.0.0.1:{port}" in msg, msg
    assert r["elapsed"] < 10

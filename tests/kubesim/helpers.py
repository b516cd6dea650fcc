"""Helpers shared by the kubesim tests."""

from __future__ import annotations

import time


def wait_for(fn, timeout: float = 15.0, interval: float = 0.1, what: str = "condition"):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what}; last={last!r}")


def cond(obj, ctype):
    for c in ((obj.to_dict() if hasattr(obj, "to_dict") else obj).get("status") or {}).get("conditions") or []:
        if c["type"] == ctype:
            return c
    return None


# Images carry MAJOR.MINOR.PATCH tags: the real Dynamo operator's webhook refuses a DGD whose image tag states no
# runtime version (without runtimeVersionOverride).
def dgd_body(name, *, gpus="4", product="NVIDIA-GB300", replicas=1, pvc="shared-model-cache", claim_template=None,
             model="meta-models/muse-spark", annotations=None, node_count=None):
    worker_spec = {
        "nodeSelector": {"nvidia.com/gpu.product": product},
        "containers": [{"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.5.1",
                        "command": ["/bin/bash", "-lc"],
                        "args": [f"exec python3 -m dynamo.sglang --model-path {model} --served-model-name {model} --tp 4"],
                        "resources": {"limits": {"nvidia.com/gpu": gpus}}}],
    }
    if pvc:
        worker_spec["containers"][0]["volumeMounts"] = [{"name": "shared-model-cache", "mountPath": "/model"}]
        worker_spec["volumes"] = [{"name": "shared-model-cache", "persistentVolumeClaim": {"claimName": pvc}}]
    if claim_template:
        worker_spec["resourceClaims"] = [{"name": "compute-domain-channel", "resourceClaimTemplateName": claim_template}]
        worker_spec["containers"][0]["resources"]["claims"] = [{"name": "compute-domain-channel"}]
    worker = {"name": "Worker", "type": "worker", "replicas": replicas, "podTemplate": {"spec": worker_spec}}
    if node_count:
        worker["multinode"] = {"nodeCount": node_count}
    meta = {"name": name, "labels": {"app.kubernetes.io/managed-by": "inferops.dynamo"}}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment", "metadata": meta,
            "spec": {"backendFramework": "sglang", "components": [
                {"name": "Frontend", "type": "frontend", "replicas": 1, "podTemplate": {"spec": {"containers": [
                    {"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.5.1",
                     "command": ["python3", "-m", "dynamo.frontend"], "args": ["--http-port", "8000"]}]}}},
                worker]}}


def job_body(name, script, image="python:3.12-slim", **spec):
    """A Job of one pod that runs ``script`` in a shell and is not retried (an image the backends run for real)."""
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"backoffLimit": 0, **spec, "template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": "main", "image": image, "command": ["/bin/sh", "-c", script]}]}}}}


def pvc_body(name="shared-model-cache", sc=None, mode="ReadWriteMany"):
    spec = {"accessModes": [mode], "resources": {"requests": {"storage": "100Gi"}}}
    if sc is not None:
        spec["storageClassName"] = sc
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name}, "spec": spec}


def token(cluster) -> str:
    from pathlib import Path

    import yaml

    return yaml.safe_load(Path(cluster.kubeconfig).read_text())["users"][0]["user"]["token"]


def http(cluster, method, path, body=None, ctype="application/json", timeout=30):
    """Raw request to the API server: (status, parsed JSON or bytes)."""
    import json

    import urllib3

    data = body if isinstance(body, bytes | str) or body is None else json.dumps(body)
    r = urllib3.PoolManager().request(method, cluster.base_url + path, body=data, timeout=timeout,
                                      headers={"Content-Type": ctype, "Authorization": "Bearer " + token(cluster)})
    try:
        return r.status, json.loads(r.data)
    except ValueError:
        return r.status, r.data

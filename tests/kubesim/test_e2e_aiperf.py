"""End to end: model download Job (simulated) -> DGD Ready -> AIPerf Job executed locally; the real
`aiperf` talks to the real Dynamo frontend (the runtime's model server) through the Service name and writes its artifacts on the PVC."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from helpers import cond, dgd_body, pvc_body, wait_for
from kubernetes.client import CoreV1Api

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

SCRIPT = """set -e
curl -s http://$ENDPOINT/v1/models
aiperf profile -m "$TARGET_MODEL" --tokenizer "$TARGET_MODEL" --url "http://${ENDPOINT}" --endpoint-type chat \
  --streaming --ui simple --isl 64 --osl 16 --concurrency 2 --request-count 6 \
  --artifact-dir "${ROOT_ARTIFACT_DIR}/${JOB_NAME}"
"""


@pytest.mark.skipif(shutil.which("aiperf", path=str(Path(sys.executable).parent)) is None, reason="no aiperf")
def test_aiperf_job_against_simulated_frontend(kubesim_cluster, k8s_dynamic, k8s_client, k8s_namespace):
    ns = k8s_namespace

    def r(av, kind):
        return k8s_dynamic.resources.get(api_version=av, kind=kind)
    jobs = r("batch/v1", "Job")
    r("v1", "PersistentVolumeClaim").create(namespace=ns, body=pvc_body())
    r("nvidia.com/v1beta1", "DynamoGraphDeployment").create(namespace=ns, body=dgd_body(
        "m", annotations={"inferops.dynamo/expected-ttft-p50-ms": "20",
                          "inferops.dynamo/expected-output-tps-per-user-p50": "400"}))
    mount = {"volumeMounts": [{"name": "c", "mountPath": "/model-cache"}]}
    vols = [{"name": "c", "persistentVolumeClaim": {"claimName": "shared-model-cache"}}]
    jobs.create(namespace=ns, body={"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "model-download"},
                                    "spec": {"template": {"spec": {"restartPolicy": "Never", "volumes": vols,
                                                                   "containers": [{
                                                                       "name": "d", "image": "python:3.12-slim",
                                                                       "command": ["sh", "-c"],
                                                                       "args": ["hf download meta-models/muse-spark"],
                                                                       "env": [{"name": "HF_HOME", "value": "/model-cache"}],
                                                                       **mount}]}}}})
    wait_for(lambda: cond(jobs.get(namespace=ns, name="model-download"), "Complete"), timeout=20, what="download")
    dgds = r("nvidia.com/v1beta1", "DynamoGraphDeployment")
    wait_for(lambda: (x := cond(dgds.get(namespace=ns, name="m"), "Ready")) and x["status"] == "True", timeout=20,
             what="DGD Ready")
    env = [{"name": "HF_HOME", "value": "/model-cache"}, {"name": "HF_HUB_OFFLINE", "value": "1"},
           {"name": "ENDPOINT", "value": "m-frontend:8000"}, {"name": "TARGET_MODEL", "value": "meta-models/muse-spark"},
           {"name": "ROOT_ARTIFACT_DIR", "value": "/model-cache/perf"},
           {"name": "JOB_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['job-name']"}}}]
    jobs.create(namespace=ns, body={"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "bench"},
                                    "spec": {"backoffLimit": 0, "activeDeadlineSeconds": 240, "template": {"spec": {
                                        "restartPolicy": "Never", "volumes": vols, "containers": [{
                                            "name": "bench", "image": "python:3.12-slim",
                                            "command": ["/bin/bash", "-lc"], "args": [SCRIPT], "env": env, **mount}]}}}})
    wait_for(lambda: cond(jobs.get(namespace=ns, name="bench"), "Complete")
             or cond(jobs.get(namespace=ns, name="bench"), "Failed"), timeout=240, interval=0.5, what="bench done")
    core = CoreV1Api(k8s_client)
    pod = core.list_namespaced_pod(ns, label_selector="job-name=bench").items[0]
    log = core.read_namespaced_pod_log(pod.metadata.name, ns)
    assert cond(jobs.get(namespace=ns, name="bench"), "Complete"), log[-3000:]
    import kubesim

    state = Path(kubesim.status(Path(kubesim_cluster.kubeconfig).parent)["state_dir"])
    out = state / "0" / "volumes" / ns / "shared-model-cache" / "perf" / "bench" / "profile_export_aiperf.json"
    assert out.exists(), log[-3000:]
    summary = json.loads(out.read_text())
    assert summary  # the real aiperf summary, to be parsed by the collection's aiperf_results module

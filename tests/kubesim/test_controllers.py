"""Controllers: PVC binding, Jobs (executed and simulated), the Dynamo operator, ComputeDomain,
Deployments, frontends behind the service proxy."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers import cond, dgd_body, http, pvc_body, wait_for
from kubernetes.client import CoreV1Api

pytestmark = pytest.mark.cluster
sys.path.insert(0, str(Path(__file__).parent))


def res(dyn, api_version, kind):
    return dyn.resources.get(api_version=api_version, kind=kind)


def pvc_dir(cluster, ns, name):
    import kubesim

    info = kubesim.status(Path(cluster.kubeconfig).parent)
    return Path(info["state_dir"]) / str(cluster.index) / "volumes" / ns / name


def events(dyn, ns):
    return [(e.reason, e.message) for e in res(dyn, "v1", "Event").get(namespace=ns).items]


def test_pvc_binding_and_failures(k8s_dynamic, k8s_namespace, kubesim_cluster):
    pvc = res(k8s_dynamic, "v1", "PersistentVolumeClaim")
    ns = k8s_namespace
    pvc.create(namespace=ns, body=pvc_body("cache"))  # default class: shared-rwx
    pvc.create(namespace=ns, body=pvc_body("rwo", sc="local-rwo", mode="ReadWriteOnce"))
    pvc.create(namespace=ns, body=pvc_body("nosc", sc="fast-nvme"))
    pvc.create(namespace=ns, body=pvc_body("badmode", sc="local-rwo", mode="ReadWriteMany"))
    wait_for(lambda: pvc.get(namespace=ns, name="cache").status.phase == "Bound", what="cache Bound")
    wait_for(lambda: pvc.get(namespace=ns, name="rwo").status.phase == "Bound", what="rwo Bound")
    c = pvc.get(namespace=ns, name="cache")
    assert c.spec.volumeName and c.status.accessModes == ["ReadWriteMany"]
    assert res(k8s_dynamic, "v1", "PersistentVolume").get(name=c.spec.volumeName).spec.claimRef.name == "cache"
    d = pvc_dir(kubesim_cluster, ns, "cache")
    assert d.is_dir()
    # two controllers refuse, each in its own time: the volume controller a class that does not exist, and the
    # provisioner stand-in both backends run an access mode its class cannot serve
    missing_class = ("ProvisioningFailed", 'storageclass.storage.k8s.io "fast-nvme" not found')
    bad_mode = ("ProvisioningFailed", 'failed to provision volume with StorageClass "local-rwo": rpc error: '
                "code = InvalidArgument desc = access mode ReadWriteMany is not supported")
    wait_for(lambda: {missing_class, bad_mode} <= set(events(k8s_dynamic, ns)), what="both ProvisioningFailed events")
    assert pvc.get(namespace=ns, name="nosc").status.phase == "Pending"
    assert pvc.get(namespace=ns, name="badmode").status.phase == "Pending"
    # the provisioner marks a claim for its class's provisioner and grows a volume of an expandable class
    assert c.metadata.annotations["volume.kubernetes.io/storage-provisioner"] == "nfs.csi.k8s.io"
    pvc.patch(namespace=ns, name="rwo", body={"spec": {"resources": {"requests": {"storage": "200Gi"}}}},
              content_type="application/merge-patch+json")
    wait_for(lambda: pvc.get(namespace=ns, name="rwo").status.capacity.storage == "200Gi", what="rwo grown")
    pvc.delete(namespace=ns, name="cache")
    wait_for(lambda: not d.exists(), what="volume dir removed")
    pvs = res(k8s_dynamic, "v1", "PersistentVolume")
    wait_for(lambda: c.spec.volumeName not in [p.metadata.name for p in pvs.get().items], what="released volume deleted")


def test_job_executes_locally_with_env_pvc_and_logs(k8s_dynamic, k8s_client, k8s_namespace, kubesim_cluster):
    ns = k8s_namespace
    res(k8s_dynamic, "v1", "PersistentVolumeClaim").create(namespace=ns, body=pvc_body())
    res(k8s_dynamic, "v1", "Secret").create(namespace=ns, body={"metadata": {"name": "hf"},
                                                                "stringData": {"HF_TOKEN": "s3cr3t-value"}})
    res(k8s_dynamic, "v1", "Secret").create(namespace=ns, body={"metadata": {"name": "hf2"},
                                                                "data": {"TOK": "czNjcjN0LXZhbHVl"}})
    script = ("set -e; echo job=$JOB_NAME ns=$NS; python -c 'import sys; print(sys.prefix)'; "
              "mkdir -p /model-cache/perf && echo hello > /model-cache/perf/out.txt; "
              'test "$HF_TOKEN" = s3cr3t-value && echo token-ok; test "$TOK" = s3cr3t-value && echo tok2-ok; '
              "echo dir=$ROOT")
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "bench"},
           "spec": {"backoffLimit": 0, "template": {"spec": {"restartPolicy": "Never", "containers": [{
               "name": "bench", "image": "python:3.12-slim", "command": ["/bin/sh", "-c"], "args": [script],
               "env": [{"name": "JOB_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['job-name']"}}},
                       {"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                       {"name": "ROOT", "value": "/model-cache/perf"},
                       {"name": "TOK", "valueFrom": {"secretKeyRef": {"name": "hf2", "key": "TOK"}}}],
               "envFrom": [{"secretRef": {"name": "hf"}}],
               "volumeMounts": [{"name": "cache", "mountPath": "/model-cache"}]}],
               "volumes": [{"name": "cache", "persistentVolumeClaim": {"claimName": "shared-model-cache"}}]}}}}
    jobs = res(k8s_dynamic, "batch/v1", "Job")
    jobs.create(namespace=ns, body=job)
    done = wait_for(lambda: cond(jobs.get(namespace=ns, name="bench"), "Complete"), timeout=30, what="job Complete")
    assert done["status"] == "True"
    j = jobs.get(namespace=ns, name="bench")
    assert j.status.succeeded == 1 and j.status.startTime and j.status.completionTime and not j.status.active
    core = CoreV1Api(k8s_client)
    pod = core.list_namespaced_pod(ns, label_selector="job-name=bench").items[0]
    assert pod.status.phase == "Succeeded"
    log = core.read_namespaced_pod_log(pod.metadata.name, ns, container="bench")
    assert "job=bench ns=" + ns in log and "token-ok" in log and "tok2-ok" in log
    assert sys.prefix in log  # the daemon's venv python is first on PATH
    vol = pvc_dir(kubesim_cluster, ns, "shared-model-cache")
    assert (vol / "perf" / "out.txt").read_text() == "hello\n"
    assert f"dir={vol}/perf" in log
    assert core.read_namespaced_pod_log(pod.metadata.name, ns, tail_lines=1).strip() == f"dir={vol}/perf"
    # secrets never reach the daemon log
    daemon_log = (Path(kubesim_cluster.kubeconfig).parent / "daemon.log").read_text()
    assert "s3cr3t-value" not in daemon_log and "czNjcjN0LXZhbHVl" not in daemon_log


def test_job_failure_backoff_and_deadline(k8s_dynamic, k8s_namespace):
    ns = k8s_namespace
    jobs = res(k8s_dynamic, "batch/v1", "Job")

    def job(name, script, **spec):
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
                "spec": {**spec, "template": {"spec": {"restartPolicy": "Never", "containers": [
                    {"name": "c", "image": "curlimages/curl", "command": ["sh", "-c", script]}]}}}}
    jobs.create(namespace=ns, body=job("fails", "echo boom; exit 3", backoffLimit=1))
    jobs.create(namespace=ns, body=job("slow", "sleep 30", activeDeadlineSeconds=1))
    f = wait_for(lambda: cond(jobs.get(namespace=ns, name="fails"), "Failed"), timeout=30, what="Failed")
    assert f["reason"] == "BackoffLimitExceeded"
    assert jobs.get(namespace=ns, name="fails").status.failed == 2
    d = wait_for(lambda: cond(jobs.get(namespace=ns, name="slow"), "Failed"), timeout=30, what="deadline")
    assert d["reason"] == "DeadlineExceeded"


def test_model_download_is_simulated(k8s_dynamic, k8s_client, k8s_namespace, kubesim_cluster):
    ns = k8s_namespace
    res(k8s_dynamic, "v1", "PersistentVolumeClaim").create(namespace=ns, body=pvc_body())
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "model-download"},
           "spec": {"backoffLimit": 3, "template": {"spec": {"restartPolicy": "Never", "containers": [{
               "name": "model-download", "image": "python:3.12-slim", "command": ["sh", "-c"],
               "args": ["set -eux\npip install huggingface_hub\nhf download meta-models/muse-spark\n"],
               "env": [{"name": "HF_HOME", "value": "/model-cache"}],
               "volumeMounts": [{"name": "c", "mountPath": "/model-cache"}]}],
               "volumes": [{"name": "c", "persistentVolumeClaim": {"claimName": "shared-model-cache"}}]}}}}
    jobs = res(k8s_dynamic, "batch/v1", "Job")
    jobs.create(namespace=ns, body=job)
    wait_for(lambda: cond(jobs.get(namespace=ns, name="model-download"), "Complete"), timeout=20, what="download")
    core = CoreV1Api(k8s_client)
    pod = core.list_namespaced_pod(ns, label_selector="job-name=model-download").items[0]
    log = core.read_namespaced_pod_log(pod.metadata.name, ns)
    assert "Downloading meta-models/muse-spark: 10%" in log and "100%" in log
    hub = pvc_dir(kubesim_cluster, ns, "shared-model-cache") / "hub" / "models--meta-models--muse-spark"
    assert hub.is_dir(), list(hub.parent.parent.rglob("*"))[:10]


def test_dgd_ready_service_proxy_and_worker_restart(k8s_dynamic, k8s_client, k8s_namespace, kubesim_cluster):
    ns = k8s_namespace
    res(k8s_dynamic, "v1", "PersistentVolumeClaim").create(namespace=ns, body=pvc_body())
    dgds = res(k8s_dynamic, "nvidia.com/v1beta1", "DynamoGraphDeployment")
    dgds.create(namespace=ns, body=dgd_body("muse", annotations={"inferops.dynamo/expected-ttft-p50-ms": "20",
                                                                "inferops.dynamo/expected-output-tps-per-user-p50": "500"}))
    ready = wait_for(lambda: (c := cond(dgds.get(namespace=ns, name="muse"), "Ready")) and c["status"] == "True" and c,
                     timeout=20, what="DGD Ready")
    assert ready["reason"]
    d = dgds.get(namespace=ns, name="muse")
    assert d.status.state == "successful" and d.status.observedGeneration == 1
    core = CoreV1Api(k8s_client)
    pods = core.list_namespaced_pod(ns, label_selector="nvidia.com/dynamo-graph-deployment-name=muse").items
    types = sorted(p.metadata.labels["nvidia.com/dynamo-component-type"] for p in pods)
    assert types == ["frontend", "worker"]
    svc = core.read_namespaced_service("muse-frontend", ns)
    assert svc.spec.ports[0].port == 8000
    # the typed client's proxy call (it returns the body as a str)
    models = core.connect_get_namespaced_service_proxy_with_path("muse-frontend:8000", ns, "v1/models")
    assert "'id': 'meta-models/muse-spark'" in str(models) or '"id": "meta-models/muse-spark"' in str(models)
    code, out = http(kubesim_cluster, "POST",
                     f"/api/v1/namespaces/{ns}/services/http:muse-frontend:8000/proxy/v1/chat/completions",
                     {"model": "meta-models/muse-spark", "max_tokens": 4, "messages": [{"role": "user", "content": "hi"}]})
    assert code == 200 and out["choices"][0]["message"]["content"]
    code, out = http(kubesim_cluster, "POST", f"/api/v1/namespaces/{ns}/services/muse-frontend:8000/proxy/v1/chat/completions",
                     {"model": "meta-models/muse-spark", "max_tokens": 4, "stream": True,
                      "messages": [{"role": "user", "content": "hi"}]})
    assert code == 200 and b"data: [DONE]" in out
    # the benchmark restarts workers by deleting them: Ready goes False, then True again
    core.delete_collection_namespaced_pod(ns, label_selector="nvidia.com/dynamo-graph-deployment-name=muse,"
                                                             "nvidia.com/dynamo-component-type=worker")
    wait_for(lambda: cond(dgds.get(namespace=ns, name="muse"), "Ready")["status"] == "False", timeout=5,
             interval=0.05, what="Ready=False after worker delete")
    wait_for(lambda: cond(dgds.get(namespace=ns, name="muse"), "Ready")["status"] == "True", timeout=15,
             what="Ready again")
    # spec change: generation bump, pods re-rolled, observedGeneration follows
    old = {p.metadata.name for p in core.list_namespaced_pod(ns, label_selector="nvidia.com/dynamo-component=Worker").items}
    body = dgd_body("muse", replicas=2, gpus="2")  # template change + scale
    dgds.server_side_apply(namespace=ns, body=body, field_manager="inferops.dynamo", force_conflicts=True)
    wait_for(lambda: dgds.get(namespace=ns, name="muse").status.observedGeneration == 2
             and cond(dgds.get(namespace=ns, name="muse"), "Ready")["status"] == "True", timeout=20, what="gen 2")
    new = {p.metadata.name for p in core.list_namespaced_pod(ns, label_selector="nvidia.com/dynamo-component=Worker").items}
    assert len(new) == 2 and not (old & new)
    dgds.delete(namespace=ns, name="muse")
    wait_for(lambda: not core.list_namespaced_pod(ns).items, what="pods gone")


def test_dgd_unschedulable_missing_pvc_and_claims(k8s_dynamic, k8s_client, k8s_namespace):
    ns = k8s_namespace
    dgds = res(k8s_dynamic, "nvidia.com/v1beta1", "DynamoGraphDeployment")
    # 3 x 4 GPUs on GB300 while there are 2 GB300 nodes of 4
    dgds.create(namespace=ns, body=dgd_body("toobig", replicas=3, pvc=None))
    dgds.create(namespace=ns, body=dgd_body("nopvc", pvc="missing-cache", product="NVIDIA-B200"))
    dgds.create(namespace=ns, body=dgd_body("nocd", pvc=None, product="NVIDIA-GB200", claim_template="cd-channel"))

    def ready(name):
        return cond(dgds.get(namespace=ns, name=name), "Ready")
    c = wait_for(lambda: (r := ready("toobig")) and r["reason"] == "insufficient_capacity" and r, what="toobig")
    assert c["status"] == "False" and "Insufficient nvidia.com/gpu" in c["message"]
    assert "0/7 nodes are available" in c["message"]
    assert dgds.get(namespace=ns, name="toobig").status.state == "pending"
    core = CoreV1Api(k8s_client)
    pending = [p for p in core.list_namespaced_pod(ns, label_selector="nvidia.com/dynamo-graph-deployment-name=toobig").items
               if p.status.phase == "Pending"]
    assert pending
    ps = next(x for x in pending[0].status.conditions if x.type == "PodScheduled")
    assert ps.status == "False" and ps.reason == "Unschedulable"

    def not_ready_because(name: str, cause: str):
        # "pods_not_ready" first says the components are starting; the pod's own cause follows when the kubelet
        # reports it (a loaded machine caught the first message, 2026-12-06)
        return wait_for(lambda: (r := ready(name)) and r["reason"] == "pods_not_ready" and cause in r["message"] and r,
                        what=f"{name}: pods_not_ready naming {cause!r}")

    not_ready_because("nopvc", 'persistentvolumeclaim "missing-cache" not found')
    not_ready_because("nocd", 'resourceclaimtemplate.resource.k8s.io "cd-channel" not found')
    # a ComputeDomain creates the claim template; the DGD becomes Ready
    cds = res(k8s_dynamic, "resource.nvidia.com/v1beta1", "ComputeDomain")
    cds.create(namespace=ns, body={"apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomain",
                                   "metadata": {"name": "cd"}, "spec": {"numNodes": 0, "channel": {
                                       "allocationMode": "Single", "resourceClaimTemplate": {"name": "cd-channel"}}}})
    wait_for(lambda: (cds.get(namespace=ns, name="cd").to_dict().get("status") or {}).get("status") == "Ready",
             what="CD Ready")
    assert res(k8s_dynamic, "resource.k8s.io/v1", "ResourceClaimTemplate").get(namespace=ns, name="cd-channel")
    wait_for(lambda: ready("nocd")["status"] == "True", timeout=15, what="nocd Ready")
    # freeing capacity lets the big one fit partially -> deleting it frees GPUs for others
    dgds.delete(namespace=ns, name="toobig")


def test_deployment_statefulset_and_frontend(k8s_dynamic, k8s_namespace, kubesim_cluster):
    ns = k8s_namespace
    deps = res(k8s_dynamic, "apps/v1", "Deployment")
    tmpl = {"metadata": {"labels": {"app": "vllm"}}, "spec": {
        "nodeSelector": {"amd.com/gpu.product-name": "AMD_Instinct_MI355X"},
        "containers": [{"name": "vllm", "image": "vllm/vllm-openai-rocm",
                        "args": ["vllm", "serve", "org/model-a", "--tensor-parallel-size", "8"],
                        "resources": {"limits": {"amd.com/gpu": "8"}}}]}}
    deps.create(namespace=ns, body={"metadata": {"name": "vllm"}, "spec": {
        "replicas": 1, "selector": {"matchLabels": {"app": "vllm"}}, "template": tmpl}})
    res(k8s_dynamic, "v1", "Service").create(namespace=ns, body={"metadata": {"name": "vllm-frontend"}, "spec": {
        "selector": {"app": "vllm"}, "ports": [{"port": 8000, "targetPort": 8000}]}})

    def st():
        return deps.get(namespace=ns, name="vllm").to_dict().get("status") or {}
    # Ready once its model server answers: the runtime's frontend and engine start in a few seconds, more on a loaded
    # machine
    wait_for(lambda: st().get("availableReplicas") == 1, timeout=60, what="deployment available")
    s = st()
    assert s["replicas"] == s["readyReplicas"] == s["updatedReplicas"] == 1 and "unavailableReplicas" not in s
    assert s["observedGeneration"] == 1
    assert {c["type"]: c["status"] for c in s["conditions"]} == {"Available": "True", "Progressing": "True"}
    def models():
        code, out = http(kubesim_cluster, "GET", f"/api/v1/namespaces/{ns}/services/vllm-frontend:8000/proxy/v1/models")
        return out if code == 200 else None
    assert wait_for(models, what="frontend")["data"][0]["id"] == "org/model-a"
    # a second one does not fit (1 MI355X node with 8 GPUs): Pending, unavailable
    deps.create(namespace=ns, body={"metadata": {"name": "vllm2"}, "spec": {
        "replicas": 1, "selector": {"matchLabels": {"app": "vllm2"}},
        "template": {**tmpl, "metadata": {"labels": {"app": "vllm2"}}}}})
    s2 = wait_for(lambda: (deps.get(namespace=ns, name="vllm2").to_dict().get("status") or {}).get("unavailableReplicas")
                  and deps.get(namespace=ns, name="vllm2").to_dict()["status"], what="vllm2 unavailable")
    assert s2.get("availableReplicas", 0) == 0
    sts = res(k8s_dynamic, "apps/v1", "StatefulSet")
    sts.create(namespace=ns, body={"metadata": {"name": "db"}, "spec": {
        "replicas": 2, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
        "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}})
    wait_for(lambda: (sts.get(namespace=ns, name="db").to_dict().get("status") or {}).get("readyReplicas") == 2,
             timeout=15, what="sts ready")
    deps.delete(namespace=ns, name="vllm")
    wait_for(lambda: models() is None, what="frontend stop")
    code, out = http(kubesim_cluster, "GET", f"/api/v1/namespaces/{ns}/services/vllm-frontend:8000/proxy/v1/models")
    assert code == 503 and out["reason"] == "ServiceUnavailable"


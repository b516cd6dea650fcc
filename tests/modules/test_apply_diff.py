"""inferops.dynamo.apply_diff through ansible-playbook against the rehearsal cluster: a server-side apply dry run
compared with the live object, field by field; a field another manager changed is marked; nothing is written;
a missing object is reported as created. Also workload_status's update and settle verdicts on the same DGD."""

from __future__ import annotations

import copy

import pytest
from module_runner import run_tasks

pytestmark = pytest.mark.cluster

IMAGE = "nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.5.1"


def dgd(namespace: str, image: str = IMAGE, replicas: int = 1) -> dict:
    worker = {"name": "main", "image": image, "args": ["--model-path", "m", "--tp", "1"],
              "resources": {"limits": {"nvidia.com/gpu": "1"}}}
    return {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": "preview", "namespace": namespace, "labels": {"app": "x"}},
            "spec": {"backendFramework": "sglang", "components": [
                {"name": "Frontend", "type": "frontend", "replicas": 1,
                 "podTemplate": {"spec": {"containers": [{"name": "main", "image": IMAGE}]}}},
                {"name": "Worker", "type": "worker", "replicas": replicas,
                 "podTemplate": {"spec": {"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-GB300"},
                                          "containers": [worker]}}}]}}


def apply(k8s_dynamic, body: dict, manager: str = "inferops.dynamo"):
    res = k8s_dynamic.resources.get(api_version=body["apiVersion"], kind=body["kind"])
    return res.server_side_apply(body=body, namespace=body["metadata"]["namespace"], name=body["metadata"]["name"],
                                 field_manager=manager, force_conflicts=True)


def preview(tmp_path, cluster, definitions):
    (r,), out = run_tasks(tmp_path, cluster, [{"name": "preview", "inferops.dynamo.apply_diff": {
        "definitions": definitions}}])
    assert not r.get("failed"), out[-3000:]
    return r


def test_a_changed_image_is_one_field_that_rolls_the_workers_and_nothing_is_written(tmp_path, kubesim_cluster,
                                                                                    k8s_dynamic, k8s_namespace):
    live = apply(k8s_dynamic, dgd(k8s_namespace)).to_dict()
    r = preview(tmp_path, kubesim_cluster, [dgd(k8s_namespace, image=IMAGE.replace("1.5.1", "1.5.2"))])
    assert r["changed"] is False and r["pending"] is True and r["rolls_workers"] is True
    (obj,) = r["objects"]
    assert [(c["field"], c["op"], c["before"], c["after"]) for c in obj["changes"]] == [
        ("spec.components[Worker].podTemplate.spec.containers[main].image", "change", IMAGE, IMAGE.replace("1.5.1", "1.5.2"))]
    assert r["lines"][0] == f"DynamoGraphDeployment preview (namespace {k8s_namespace}): 1 field(s) change"
    after = k8s_dynamic.resources.get(api_version="nvidia.com/v1beta1", kind="DynamoGraphDeployment").get(
        namespace=k8s_namespace, name="preview").to_dict()
    # a dry run only (status writes of the operator move resourceVersion, the spec did not change)
    assert after["metadata"]["generation"] == live["metadata"]["generation"]
    assert after["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]["image"] == IMAGE

    same = preview(tmp_path, kubesim_cluster, [dgd(k8s_namespace)])
    assert same["pending"] is False and same["lines"] == [
        f"DynamoGraphDeployment preview (namespace {k8s_namespace}): no change"]
    scaled = preview(tmp_path, kubesim_cluster, [dgd(k8s_namespace, replicas=2)])
    assert scaled["rolls_workers"] is False and scaled["objects"][0]["impact"]["scaled"] == ["Worker 1 -> 2"]


def test_a_field_another_manager_changed_is_marked_and_a_missing_object_is_created(tmp_path, kubesim_cluster,
                                                                                  k8s_dynamic, k8s_namespace):
    apply(k8s_dynamic, dgd(k8s_namespace))
    edited = copy.deepcopy(dgd(k8s_namespace))
    edited["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]["args"].append("--debug")
    res = k8s_dynamic.resources.get(api_version="nvidia.com/v1beta1", kind="DynamoGraphDeployment")
    res.patch(name="preview", namespace=k8s_namespace, body={"spec": edited["spec"]},
              content_type="application/merge-patch+json", field_manager="kubectl-edit")
    other = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "new-one", "namespace": k8s_namespace},
             "data": {"a": "1"}}
    r = preview(tmp_path, kubesim_cluster, [dgd(k8s_namespace), other])
    changes = r["objects"][0]["changes"]
    assert [(c["field"].rsplit(".", 1)[1], c["text"], c["outside"]) for c in changes] == [
        ("args", "removed --debug", ["kubectl-edit"])]
    assert r["restores_outside"] == ["spec.components[Worker].podTemplate.spec.containers[main].args"]
    assert "[changed outside the collection by kubectl-edit: restored]" in r["lines"][1]
    assert r["objects"][1]["exists"] is False
    assert r["lines"][-1] == f"ConfigMap new-one (namespace {k8s_namespace}): new, will be created"


def test_workload_status_tells_an_unfinished_update_and_a_settled_rollout(tmp_path, kubesim_cluster, k8s_dynamic,
                                                                         k8s_namespace):
    apply(k8s_dynamic, dgd(k8s_namespace))
    task = {"name": "status", "inferops.dynamo.workload_status": {
        "kind": "DynamoGraphDeployment", "name": "preview", "namespace": k8s_namespace, "poll_interval": 0.5}}
    (ready,), _ = run_tasks(tmp_path, kubesim_cluster, [{**task, "inferops.dynamo.workload_status": {
        **task["inferops.dynamo.workload_status"], "wait_seconds": 30}}])
    assert ready["ready"] and ready["serving"] and ready["settled"] and ready["update_pending"] == []
    assert ready["generation"] == ready["observed_generation"]
    kubesim_cluster.fault("image-pull", pattern="*-broken")
    apply(k8s_dynamic, dgd(k8s_namespace, image=IMAGE.replace("1.5.1", "1.5.1-broken")))
    (stuck,), _ = run_tasks(tmp_path, kubesim_cluster, [{**task, "inferops.dynamo.workload_status": {
        **task["inferops.dynamo.workload_status"], "wait_seconds": 30, "wait_for": "settled",
        "unschedulable_grace_seconds": 0}}])
    kubesim_cluster.clear_faults()
    # the new pods cannot pull their image: not ready and stuck rather than moving; the rolling update keeps
    # the old ones, which still serve
    assert not stuck["ready"] and stuck["serving"] and stuck["settled"] and stuck["activity"] == []
    assert stuck["update_pending"], stuck
    assert any("cannot be pulled" in r for r in stuck["fatal_reasons"])

"""The Dynamo operator stand-in's decisions (shared by both rehearsal backends)."""

import copy

from kubesim.standins import operator_rules as op

NOW = "2026-12-01T00:00:00Z"


def dgd(worker_image="img:1", replicas=1, frontend_image="fe:1", annotations=None, generation=1):
    return {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": "d", "namespace": "n", "uid": "u1", "generation": generation,
                         "annotations": annotations or {}},
            "spec": {"components": [
                {"name": "Frontend", "type": "frontend", "replicas": 1,
                 "podTemplate": {"spec": {"containers": [{"name": "main", "image": frontend_image}]}}},
                {"name": "Worker", "type": "worker", "replicas": replicas,
                 "podTemplate": {"spec": {"containers": [{"name": "main", "image": worker_image}]}}},
            ]}}


def views(obj, ready=True, **overrides):
    """One ready pod per wanted pod at the current revisions."""
    revs = op.revisions(op.components(obj))
    out = []
    for c in op.components(obj):
        for i in range(c.pods_wanted):
            out.append(op.PodView(f"{c.name.lower()}-{i}", c.name, revs[c.name], ready))
    return out


def test_a_new_dgd_gets_one_pod_per_replica_and_a_frontend_service():
    plan = op.reconcile(dgd(replicas=2), [], NOW)
    assert sorted(c["component"] for c in plan.create) == ["Frontend", "Worker", "Worker"]
    assert plan.status["state"] == "initializing" and plan.status["observedGeneration"] == 1
    assert plan.frontend_service["metadata"]["name"] == "d-frontend"
    assert plan.frontend_service["spec"]["ports"][0]["port"] == 8000


def test_all_pods_ready_at_the_current_revision_is_ready():
    obj = dgd()
    plan = op.reconcile(obj, views(obj), NOW)
    ready = next(c for c in plan.status["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"], ready["observedGeneration"]) == ("True", "all_resources_are_ready", 1)
    assert plan.status["state"] == "successful" and not plan.create and not plan.delete
    assert plan.status["components"]["Worker"] == {"componentKind": "Deployment", "componentNames": ["d-worker"],
                                                   "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1,
                                                   "availableReplicas": 1, "gpusPerEngine": 0, "gpusPerReplica": 0}
    assert "gpusPerEngine" not in plan.status["components"]["Frontend"]


def test_a_workers_gpus_per_engine_count_every_node_of_a_replica():
    obj = dgd()
    worker = next(c for c in obj["spec"]["components"] if c["name"] == "Worker")
    worker["multinode"] = {"nodeCount": 2}
    worker.setdefault("podTemplate", {}).setdefault("spec", {})["containers"] = [
        {"name": "main", "resources": {"limits": {"nvidia.com/gpu": "4"}}}]
    status = op.reconcile(obj, views(obj), NOW).status["components"]["Worker"]
    assert (status["gpusPerEngine"], status["gpusPerReplica"]) == (8, 8)


def test_a_worker_change_rolls_with_surge_keeping_the_old_pod_until_the_new_one_is_ready():
    old_obj = dgd("img:1")
    pods = views(old_obj)
    new_obj = dgd("img:2", generation=2)
    step1 = op.reconcile(new_obj, pods, NOW)
    assert [c["component"] for c in step1.create] == ["Worker"] and not step1.delete
    assert step1.status["rollingUpdate"]["phase"] == "InProgress"
    ready = next(c for c in step1.status["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"], ready["observedGeneration"]) == ("False", "updating", 2)

    rev = op.revisions(op.components(new_obj))["Worker"]
    surge = op.PodView("worker-new", "Worker", rev, ready=False, problem=("not_ready", "loading"))
    with_status = {**new_obj, "status": step1.status}
    step2 = op.reconcile(with_status, [*pods, surge], NOW)
    assert not step2.create and not step2.delete, "the old worker keeps serving while the new one loads"
    assert step2.status["components"]["Worker"]["updatedReplicas"] == 1

    surge.ready, surge.problem = True, None
    step3 = op.reconcile({**new_obj, "status": step2.status}, [*pods, surge], NOW)
    assert step3.delete == ["worker-0"]

    step4 = op.reconcile({**new_obj, "status": step3.status}, [p for p in pods if p.name != "worker-0"] + [surge],
                         "2026-12-01T00:05:00Z")
    ru = step4.status["rollingUpdate"]
    assert ru["phase"] == "Completed" and ru["endTime"] == "2026-12-01T00:05:00Z" and ru["updatedComponents"] == ["Worker"]
    assert next(c for c in step4.status["conditions"] if c["type"] == "Ready")["status"] == "True"


def test_a_frontend_change_updates_the_frontend_only():
    obj = dgd()
    plan = op.reconcile(dgd(frontend_image="fe:2", generation=2), views(obj), NOW)
    assert [c["component"] for c in plan.create] == ["Frontend"]
    assert "rollingUpdate" not in plan.status


def test_a_replica_change_rolls_nothing():
    obj = dgd(replicas=1)
    plan = op.reconcile(dgd(replicas=2, generation=2), views(obj), NOW)
    assert [c["component"] for c in plan.create] == ["Worker"] and not plan.delete
    assert "rollingUpdate" not in plan.status


def test_recreate_stops_old_workers_first():
    old_obj = dgd("img:1")
    new = dgd("img:2")
    new["spec"]["components"][1]["podTemplate"]["metadata"] = {"annotations": {op.STRATEGY_ANNOTATION: "Recreate"}}
    plan = op.reconcile(new, views(old_obj), NOW)
    assert plan.delete == ["worker-0"] and not [c for c in plan.create if c["component"] == "Worker"]


def test_recreate_on_the_dgds_metadata_is_ignored_as_the_operator_ignores_it():
    old_obj = dgd("img:1")
    plan = op.reconcile(dgd("img:2", annotations={op.STRATEGY_ANNOTATION: "Recreate"}), views(old_obj), NOW)
    assert not plan.delete and [c for c in plan.create if c["component"] == "Worker"]


def test_reverting_mid_rollout_removes_the_broken_new_pod_not_the_serving_one():
    good = dgd("img:1")
    pods = views(good)
    bad_rev = op.revisions(op.components(dgd("img:bad")))["Worker"]
    broken = op.PodView("worker-bad", "Worker", bad_rev, ready=False, problem=("image_pull", "ErrImagePull"))
    plan = op.reconcile(good, [*pods, broken], NOW)
    assert plan.delete == ["worker-bad"] and not plan.create


def test_reasons_name_the_cause():
    obj = dgd()
    unsched = [op.PodView("w", "Worker", op.revisions(op.components(obj))["Worker"], False,
                          problem=("unschedulable", "0/7 nodes are available: 7 Insufficient nvidia.com/gpu."))]
    st = op.reconcile(obj, unsched, NOW).status
    ready = next(c for c in st["conditions"] if c["type"] == "Ready")
    assert ready["reason"] == "insufficient_capacity" and "Insufficient nvidia.com/gpu" in ready["message"]
    crash = copy.deepcopy(unsched)
    crash[0].problem = ("crash_loop", "component Worker: pod w: container main waiting: CrashLoopBackOff")
    st = op.reconcile(obj, crash, NOW).status
    assert next(c for c in st["conditions"] if c["type"] == "Ready")["reason"] == "pods_not_ready"
    assert st["state"] == "failed"


def test_pod_problem_reads_the_pod_as_a_kubelet_reports_it():
    pod = {"metadata": {"name": "w"}, "status": {"phase": "Pending", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/7 nodes are available"}]}}
    assert op.pod_problem(pod, "Worker") == ("unschedulable", "component Worker: pod w is Pending: 0/7 nodes are available")
    pod = {"metadata": {"name": "w"}, "status": {"phase": "Pending", "containerStatuses": [
        {"name": "main", "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling"}}}]}}
    assert op.pod_problem(pod, "Worker")[0] == "image_pull"


def test_every_pod_is_labelled_for_the_operators_pod_monitors_unless_metrics_are_turned_off():
    plan = op.reconcile(dgd(), [], NOW)
    assert {c["labels"].get(op.METRICS_LABEL) for c in plan.create} == {"true"}
    off = op.reconcile(dgd(annotations={op.METRICS_ANNOTATION: "false"}), [], NOW)
    assert all(op.METRICS_LABEL not in c["labels"] for c in off.create)


def test_the_operator_completes_each_pod_with_its_dynamo_namespace_and_its_metrics_port_once():
    d = dgd()
    spec = {"containers": [{"name": "main"}, {"name": "sidecar"}]}
    worker = op.operator_pod_spec(spec, "prefill", d)
    assert worker["containers"][0]["ports"] == [{"name": "system", "containerPort": 9090, "protocol": "TCP"}]
    assert "ports" not in worker["containers"][1] and "ports" not in spec["containers"][0]     # a copy
    namespace = f'{d["metadata"]["namespace"]}-{d["metadata"]["name"]}'
    assert [{e["name"]: e["value"] for e in c["env"]} for c in worker["containers"]] == [
        {"DYN_NAMESPACE": namespace, "DYN_PARENT_DGD_K8S_NAME": d["metadata"]["name"],
         "DYN_PARENT_DGD_K8S_NAMESPACE": d["metadata"]["namespace"]}] * 2
    frontend = op.operator_pod_spec(spec, "frontend", d)
    assert frontend["containers"][0]["ports"][0]["name"] == "http"
    assert op.operator_pod_spec(frontend, "frontend", d) == frontend                              # already there
    planner = op.operator_pod_spec(spec, "planner", d)
    assert planner["containers"][0]["ports"] == [{"name": "metrics", "containerPort": 9085, "protocol": "TCP"}]
    plan = op.reconcile(d, [], NOW)
    assert {c["labels"][op.DYNAMO_NAMESPACE_LABEL] for c in plan.create} == {namespace}


def test_the_operators_pod_monitors_are_valid_against_the_real_crd_and_owned_by_every_dgd():
    from kubesim.control_plane import build
    from kubesim.openapi import load_crd, validate_custom_object

    a, b = dgd(), copy.deepcopy(dgd())
    b["metadata"].update(name="e", uid="u2")
    monitors = {m["metadata"]["name"]: m for m in op.pod_monitors("n", [a, b])}
    assert set(monitors) == {"dynamo-frontend", "dynamo-worker", "dynamo-planner"}
    crd = load_crd(build.monitoring_crd("podmonitors"))
    for m in monitors.values():
        assert validate_custom_object(m, crd) == []
        assert [r["uid"] for r in m["metadata"]["ownerReferences"]] == ["u1", "u2"]
    worker = monitors["dynamo-worker"]["spec"]
    assert worker["selector"]["matchExpressions"][0]["values"] == ["worker", "prefill", "decode"]
    (endpoint,) = worker["podMetricsEndpoints"]
    assert endpoint["port"] == "system" and endpoint["path"] == "/metrics"
    # the planner filters the frontend's series by dynamo_namespace: each monitor copies it from the pod's label
    for m in monitors.values():
        assert m["spec"]["podMetricsEndpoints"][0]["relabelings"] == [
            {"action": "replace", "targetLabel": "dynamo_namespace",
             "sourceLabels": ["__meta_kubernetes_pod_label_nvidia_com_dynamo_namespace"]}]

"""object_diff: field-by-field changes, field ownership, the worker-roll rule and drift."""

import copy

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import object_diff as od

ARGS = ["--model-path", "m", "--mem-fraction-static", "0.90", "--page-size", "64"]


def dgd(image="img:1", args=None, worker_replicas=1, frontend_image="img:1", labels=None):
    return {
        "apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
        "metadata": {"name": "d", "namespace": "ns", "labels": labels or {"app.kubernetes.io/managed-by": "inferops.dynamo"},
                     "generation": 3, "resourceVersion": "9"},
        "spec": {"backendFramework": "sglang", "components": [
            {"name": "Frontend", "type": "frontend", "replicas": 1,
             "podTemplate": {"spec": {"containers": [{"name": "main", "image": frontend_image}]}}},
            {"name": "Worker", "type": "worker", "replicas": worker_replicas,
             "podTemplate": {"spec": {"containers": [{"name": "main", "image": image, "args": list(args or ARGS),
                                                      "env": [{"name": "A", "value": "1"}]}]}}},
        ]},
        "status": {"state": "successful"},
    }


def fields(changes):
    return [c["field"] for c in changes]


def test_an_image_change_is_one_field_and_rolls_every_worker():
    changes = od.diff(dgd(), dgd(image="img:2"))
    assert fields(changes) == ["spec.components[Worker].podTemplate.spec.containers[main].image"]
    assert changes[0]["text"] == "img:1 -> img:2"
    verdict = od.impact("DynamoGraphDeployment", changes, dgd(), dgd(image="img:2"))
    assert verdict["rolls_workers"] and verdict["workers"] == ["Worker"]
    assert verdict["summary"].startswith("Rolls every worker (Worker)")


def test_an_argument_change_names_the_tokens():
    args = list(ARGS)
    args[3] = "0.85"
    changes = od.diff(dgd(), dgd(args=args))
    assert changes[0]["field"].endswith("containers[main].args")
    assert changes[0]["text"] == "0.90 -> 0.85 (after --mem-fraction-static)"
    added = od.diff(dgd(), dgd(args=[*ARGS, "--enable-x"]))[0]["text"]
    assert added == "added --enable-x (after 64)"


def test_replicas_and_frontend_do_not_roll_the_workers():
    changes = od.diff(dgd(), dgd(worker_replicas=2))
    verdict = od.impact("DynamoGraphDeployment", changes, dgd(), dgd(worker_replicas=2))
    assert not verdict["rolls_workers"]
    assert verdict["scaled"] == ["Worker 1 -> 2"]
    assert "replicas only" in verdict["summary"]
    front = od.diff(dgd(), dgd(frontend_image="img:2"))
    verdict = od.impact("DynamoGraphDeployment", front, dgd(), dgd(frontend_image="img:2"))
    assert not verdict["rolls_workers"] and verdict["frontend"] == ["Frontend"]
    assert "restarts in place" in verdict["summary"]


def test_labels_only_and_no_change():
    changes = od.diff(dgd(), dgd(labels={"app.kubernetes.io/managed-by": "inferops.dynamo", "x": "y"}))
    assert fields(changes) == ["metadata.labels.x"] and changes[0]["op"] == "add"
    assert od.impact("DynamoGraphDeployment", changes)["summary"].startswith("Does not roll the workers: labels")
    assert od.diff(dgd(), dgd()) == []
    assert od.impact("DynamoGraphDeployment", [])["summary"] == "No change."


def test_status_generation_and_list_order_are_not_changes():
    a, b = dgd(), dgd()
    b["status"] = {"state": "failed"}
    b["metadata"]["generation"] = 4
    b["spec"]["components"].reverse()
    assert od.diff(a, b) == []


def test_added_and_removed_list_items_are_reported_whole():
    b = dgd()
    b["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]["env"].append({"name": "B", "value": "2"})
    changes = od.diff(dgd(), b)
    assert fields(changes) == ["spec.components[Worker].podTemplate.spec.containers[main].env[B]"]
    assert changes[0]["op"] == "add" and changes[0]["after"] == {"name": "B", "value": "2"}
    assert od.diff(b, dgd())[0]["op"] == "remove"


def test_a_deployment_template_change_replaces_its_pods():
    dep = {"kind": "Deployment", "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "c", "image": "a"}]}}}}
    new = copy.deepcopy(dep)
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "b"
    verdict = od.impact("Deployment", od.diff(dep, new))
    assert verdict["rolls_workers"] and verdict["summary"].startswith("Replaces every pod of the Deployment")
    scaled = copy.deepcopy(dep)
    scaled["spec"]["replicas"] = 2
    assert od.impact("Deployment", od.diff(dep, scaled))["scaled"] == ["replicas 1 -> 2"]


WORKER = 'k:{"name":"Worker"}'
FRONTEND = 'k:{"name":"Frontend"}'
MAIN = 'k:{"name":"main"}'


def worker_container(fields):
    """fieldsV1 of the Worker's main container holding ``fields``."""
    return {"f:spec": {"f:components": {WORKER: {"f:podTemplate": {"f:spec": {"f:containers": {MAIN: fields}}}}}}}


MF_OURS = {"manager": "inferops.dynamo", "operation": "Apply", "fieldsV1": {"f:spec": {"f:components": {
    WORKER: {".": {}, "f:replicas": {}, "f:podTemplate": {"f:spec": {"f:containers": {
        MAIN: {".": {}, "f:image": {}, "f:env": {'k:{"name":"A"}': {".": {}, "f:value": {}}}}}}}},
    FRONTEND: {".": {}, "f:replicas": {}, "f:podTemplate": {}},
}}}}
MF_EDIT = {"manager": "kubectl-edit", "operation": "Update", "fieldsV1": worker_container({"f:args": {}})}
MF_STATUS = {"manager": "dynamo-operator", "operation": "Update", "subresource": "status", "fieldsV1": {"f:status": {}}}


def with_fields(obj, *entries):
    obj = copy.deepcopy(obj)
    obj["metadata"]["managedFields"] = [copy.deepcopy(e) for e in entries]
    return obj


def test_owners_read_managed_fields_keyed_items_and_atomic_values():
    live = with_fields(dgd(), MF_OURS, MF_EDIT, MF_STATUS)
    worker = (("f", "spec"), ("f", "components"), ("k", '{"name":"Worker"}'))
    main = (*worker, ("f", "podTemplate"), ("f", "spec"), ("f", "containers"), ("k", '{"name":"main"}'))
    assert od.owners(live, (*main, ("f", "args"))) == ["kubectl-edit"]
    assert od.owners(live, (*main, ("f", "image"))) == ["inferops.dynamo"]
    assert od.owners(live, (*worker, ("f", "replicas"))) == ["inferops.dynamo"]
    # the Frontend's podTemplate is owned whole (an atomic leaf above the path)
    frontend_image = (("f", "spec"), ("f", "components"), ("k", '{"name":"Frontend"}'), ("f", "podTemplate"),
                      ("f", "spec"))
    assert od.owners(live, frontend_image) == ["inferops.dynamo"]
    assert od.owners(live, (("f", "status"),)) == []          # status managers are not owners of the spec


def test_outside_changes_name_the_manager_an_apply_overrides():
    edited = dgd(args=[*ARGS, "--debug"])
    live = with_fields(edited, MF_OURS, MF_EDIT)
    changes = od.outside_changes(live, od.diff(live, dgd()), "inferops.dynamo")
    assert [(c["field"].rsplit(".", 1)[1], c["outside"]) for c in changes] == [("args", ["kubectl-edit"])]


def test_drift_names_a_field_changed_by_another_manager():
    live = with_fields(dgd(args=[*ARGS, "--debug"]), MF_OURS, MF_EDIT, MF_STATUS)
    found = od.drift(dgd(), live, "inferops.dynamo")
    assert [(d["field"], d["op"], d["managers"]) for d in found] == [
        ("spec.components[Worker].podTemplate.spec.containers[main].args", "changed", ["kubectl-edit"])]
    assert od.drift_text(found[0]) == (
        "spec.components[Worker].podTemplate.spec.containers[main].args changed by kubectl-edit: "
        "added --debug (after 64)")


def test_no_drift_when_every_applied_field_is_still_ours():
    ours = copy.deepcopy(MF_OURS)
    fv = ours["fieldsV1"]
    fv["f:metadata"] = {"f:labels": {"f:app.kubernetes.io/managed-by": {}}}
    fv["f:spec"]["f:backendFramework"] = {}
    for comp in (WORKER, FRONTEND):
        fv["f:spec"]["f:components"][comp].update({"f:name": {}, "f:type": {}})
    main = fv["f:spec"]["f:components"][WORKER]["f:podTemplate"]["f:spec"]["f:containers"][MAIN]
    main.update({"f:name": {}, "f:args": {}})
    main["f:env"]['k:{"name":"A"}']["f:name"] = {}
    live = with_fields(dgd(), ours, MF_STATUS)
    assert od.drift(dgd(), live, "inferops.dynamo") == []


def test_drift_reports_fields_others_added_and_values_never_recorded():
    live = dgd(image="img:9")
    live["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]["env"].append({"name": "DEBUG", "value": "1"})
    added = {"manager": "kubectl-edit", "operation": "Update", "fieldsV1": worker_container(
        {"f:env": {'k:{"name":"DEBUG"}': {".": {}, "f:name": {}, "f:value": {}}}})}
    found = {d["field"]: d for d in od.drift(dgd(), with_fields(live, MF_OURS, added), "inferops.dynamo")}
    env = "spec.components[Worker].podTemplate.spec.containers[main].env[DEBUG]"
    assert found[env]["op"] == "added" and found[env]["live"] == {"name": "DEBUG", "value": "1"}
    image = "spec.components[Worker].podTemplate.spec.containers[main].image"
    assert found[image]["op"] == "differs"
    assert od.drift_text(found[image]) == f"{image} is img:9, not the recorded img:1"


def test_drift_without_managed_fields_compares_values_and_a_missing_object_is_named():
    found = od.drift(dgd(), dgd(worker_replicas=3), "inferops.dynamo")
    assert [(d["field"], d["op"], d["live"]) for d in found] == [("spec.components[Worker].replicas", "changed", 3)]
    assert od.drift(dgd(), None, "inferops.dynamo")[0]["op"] == "removed"


def test_value_at_and_display_of_multi_key_items():
    svc = {"spec": {"ports": [{"port": 8000, "protocol": "TCP", "targetPort": 8000}]}}
    path = (("f", "spec"), ("f", "ports"), ("k", '{"port":8000,"protocol":"TCP"}'), ("f", "targetPort"))
    assert od.value_at(svc, path) == 8000
    assert od.display(path) == "spec.ports[port=8000,protocol=TCP].targetPort"
    # a managedFields key with fewer fields (kubesim keys ports by port only) still matches
    assert od.value_at(svc, (("f", "spec"), ("f", "ports"), ("k", '{"port":8000}'), ("f", "targetPort"))) == 8000

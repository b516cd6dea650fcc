"""A restore applies the collection's render of a revision's recorded inputs, never the record's own objects."""

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.day2.restore import restore_objects
from ansible_collections.inferops.dynamo.plugins.module_utils.day2.revisions import RevisionError
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan, normalise_request
from ansible_collections.inferops.dynamo.plugins.module_utils.render import monitoring
from ansible_collections.inferops.dynamo.plugins.module_utils.render.objects import serving_objects

REQUEST = {"sku": "gb300", "mode": "agg", "image": "nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.5.2"}
PLAN = build_plan(REQUEST)
TARGET = PLAN["target"]["key"]


def revision(objects=None, inputs=None):
    recorded = serving_objects(PLAN, "muse") + monitoring.monitoring_objects(PLAN, "muse", monitoring.objectives(PLAN))
    return {"number": 2, "inputs": normalise_request(inputs or REQUEST),
            "objects": recorded if objects is None else objects}


def test_an_untouched_record_restores_the_render_of_its_inputs():
    objects = restore_objects(revision(), "muse", TARGET)
    graph = next(o for o in objects if o["kind"] == "DynamoGraphDeployment")
    assert graph == next(o for o in serving_objects(PLAN, "muse") if o["kind"] == "DynamoGraphDeployment")
    assert {o["kind"] for o in objects} >= {"DynamoGraphDeployment", "PrometheusRule"}


def test_a_planted_object_is_refused_by_name():
    planted = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "planted", "namespace": "muse"}}
    elsewhere = {**serving_objects(PLAN, "muse")[-1]}
    elsewhere = {**elsewhere, "metadata": {**elsewhere["metadata"], "namespace": "kube-system"}}
    with pytest.raises(RevisionError, match=r"was altered: .*RoleBinding muse/planted .*DynamoGraphDeployment "
                                            r"kube-system/"):
        restore_objects(revision(revision()["objects"] + [planted, elsewhere]), "muse", TARGET)


def test_an_edited_object_is_not_applied_as_recorded():
    record = revision()
    graph = next(o for o in record["objects"] if o["kind"] == "DynamoGraphDeployment")
    graph["spec"]["components"][1]["podTemplate"]["spec"]["volumes"].append({"name": "h", "hostPath": {"path": "/"}})
    restored = next(o for o in restore_objects(record, "muse", TARGET) if o["kind"] == "DynamoGraphDeployment")
    assert all("hostPath" not in v for c in restored["spec"]["components"]
               for v in c["podTemplate"]["spec"].get("volumes", []))


def test_inputs_that_name_another_target_or_do_not_plan_are_refused():
    with pytest.raises(RevisionError, match="its recorded inputs name the target sglang-disagg-gb300"):
        restore_objects(revision(inputs={"sku": "gb300", "mode": "disagg"}), "muse", TARGET)
    record = revision()
    record["inputs"]["image"] = "x; id"
    with pytest.raises(RevisionError, match="do not plan"):
        restore_objects(record, "muse", TARGET)

"""What the Dynamo operator's webhook refuses on an update (its envtest cases: "component topology is immutable",
"scaling adapter blocks direct replica changes"), found before anything is sent."""

from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import graph_topology as gt


def dgd(*components):
    return {"kind": "DynamoGraphDeployment", "metadata": {"name": "g"}, "spec": {"components": list(components)}}


FRONTEND = {"name": "Frontend", "type": "frontend", "replicas": 1}
WORKER = {"name": "Worker", "type": "worker", "replicas": 2}
SCALED = {"name": "Worker", "type": "worker", "scalingAdapter": {}}
PLANNER = {"name": "Planner", "type": "planner", "replicas": 1}


def test_a_new_graph_and_an_unchanged_topology_need_nothing():
    assert gt.immutable_changes(None, dgd(FRONTEND, WORKER)) == []
    assert gt.immutable_changes(dgd(FRONTEND, WORKER), dgd(FRONTEND, {**WORKER, "replicas": 3})) == []


def test_turning_autoscaling_on_adds_the_planner_which_the_operator_refuses():
    changes = gt.immutable_changes(dgd(FRONTEND, WORKER), dgd(FRONTEND, SCALED, PLANNER))
    assert len(changes) == 1 and changes[0].startswith("its components change (adds Planner)")


def test_turning_autoscaling_off_removes_the_planner_and_sets_adapter_owned_replicas():
    changes = gt.immutable_changes(dgd(FRONTEND, {**SCALED, "replicas": 2}, PLANNER), dgd(FRONTEND, WORKER, ))
    assert "removes Planner" in changes[0]
    changes = gt.immutable_changes(dgd(FRONTEND, {**SCALED, "replicas": 1}), dgd(FRONTEND, WORKER))
    assert changes == ["the replicas of Worker change (1 -> 2) while a scaling adapter owns them; only the operator "
                       "and the planner may change them"]


def test_the_refusal_names_the_change_and_the_way_through():
    text = gt.refusal("DynamoGraphDeployment", "g", "ns", ["its components change (adds Planner)"])
    assert "Nothing was applied" in text and "-e graph_replacement=recreate" in text and "refuse, recreate" in text

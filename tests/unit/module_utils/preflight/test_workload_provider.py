"""Which workload provider the operator uses (its dgd_workload_provider.go) and which workers an update interrupts."""

from ansible_collections.inferops.dynamo.plugins.module_utils.preflight import workload_provider as wp


def dgd(annotations=None, replicas=1):
    return {"kind": "DynamoGraphDeployment", "metadata": {"name": "g", "annotations": annotations or {}},
            "spec": {"components": [{"name": "Frontend", "type": "frontend", "replicas": 1},
                                    {"name": "Worker", "type": "worker", "replicas": replicas}]}}


def test_grove_where_its_api_is_served_unless_the_graph_opts_out_and_the_recorded_choice_wins():
    assert wp.provider(None, dgd(), grove_served=True) == wp.GROVE
    assert wp.provider(None, dgd(), grove_served=False) == wp.COMPONENT
    assert wp.provider(None, dgd({wp.ENABLE_GROVE_ANNOTATION: "false"}), grove_served=True) == wp.COMPONENT
    live = dgd({wp.PROVIDER_ANNOTATION: "component"})
    assert wp.provider(live, dgd(), grove_served=True) == wp.COMPONENT


def test_a_one_replica_worker_is_interrupted_only_where_workers_roll_without_a_surge():
    assert wp.rolling_outages(wp.GROVE, dgd(), rolls_workers=True) == ["Worker"]
    assert wp.rolling_outages(wp.GROVE, dgd(replicas=2), rolls_workers=True) == []
    assert wp.rolling_outages(wp.GROVE, dgd(), rolls_workers=False) == []
    assert wp.rolling_outages(wp.COMPONENT, dgd(), rolls_workers=True) == []

"""KEDA ScaledObject of a standalone vLLM target: valid against KEDA v2.21.0's own CRD, on the queue the alerts
read, refused with every problem named for a Dynamo target or broken settings."""

import copy

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan
from ansible_collections.inferops.dynamo.plugins.module_utils.render import autoscaling, monitoring
from ansible_collections.inferops.dynamo.plugins.module_utils.render import objects as render
from kubesim.control_plane import build
from kubesim.openapi import load_crd, prune_and_default, validate_custom_object

MI355X = build_plan({"sku": "mi355x", "framework": "vllm", "mode": "agg", "checkpoint_repo": "example-org/muse-spark-mxfp4"})
AGG = build_plan({"sku": "gb300", "mode": "agg"})
PROM = "http://prometheus-operated.monitoring:9090"


@pytest.fixture(scope="module")
def keda_crd():
    return load_crd(build.keda_crd("scaledobjects"))


def test_valid_against_the_real_keda_crd_and_nothing_pruned(keda_crd):
    obj = autoscaling.scaled_object(MI355X, "muse", prometheus_url=PROM, max_replicas=3)
    assert validate_custom_object(obj, keda_crd) == []
    schema = next(v for v in keda_crd["spec"]["versions"] if v["name"] == "v1alpha1")["schema"]["openAPIV3Schema"]
    pruned = prune_and_default(copy.deepcopy(obj), schema)
    assert pruned["spec"] == obj["spec"], "a field the API server would drop, or a default it would add"


def test_it_scales_the_rendered_deployment_on_the_alerts_queue():
    deployment = next(o for o in render.serving_objects(MI355X, "muse") if o["kind"] == "Deployment")
    spec = autoscaling.scaled_object(MI355X, "muse", prometheus_url=PROM, max_replicas=3)["spec"]
    assert spec["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment",
                                      "name": deployment["metadata"]["name"]}
    trigger = spec["triggers"][0]
    assert trigger["metricType"] == "AverageValue"      # the threshold is per replica: desired = ceil(queue / it)
    assert monitoring.metric_names(MI355X)["queue"] in trigger["metadata"]["query"]
    assert 'namespace="muse"' in trigger["metadata"]["query"]
    assert trigger["metadata"]["threshold"] == str(MI355X["benchmark"]["concurrency"])
    assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == (1, 3)


def test_every_problem_is_named_at_once():
    with pytest.raises(autoscaling.AutoscalingError) as err:
        autoscaling.scaled_object(AGG, "muse", prometheus_url="prometheus:9090", min_replicas=0, max_replicas=-1,
                                  queue_per_replica=0, polling_s=1)
    text = str(err.value)
    for part in ("Dynamo's planner", "autoscaling_min_replicas=0", "autoscaling_max_replicas=-1",
                 "autoscaling_queue_per_replica=0", "autoscaling_polling_seconds=1", "prometheus_url='prometheus:9090'"):
        assert part in text

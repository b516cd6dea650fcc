"""Autoscaling with Dynamo's planner: the plan's bounds and refusals, what the DGD gains, the planner's
configuration as the real ai-dynamo 1.5.1 PlannerConfig reads it, and the maximum the preflight reserves."""

import copy
import json
import os
import subprocess
from pathlib import Path

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils import naming
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.errors import PlanRefused
from ansible_collections.inferops.dynamo.plugins.module_utils.preflight import gpu_occupancy
from ansible_collections.inferops.dynamo.plugins.module_utils.render import monitoring, planner
from ansible_collections.inferops.dynamo.plugins.module_utils.render import objects as render
from kubesim.openapi import load_crd, prune_and_default, validate_custom_object

REPO = Path(__file__).resolve().parents[4]
DYNAMO_PYTHON = REPO / ".venv-dynamo" / "bin" / "python"
DGD_CRD = Path(os.environ.get("DYNAMO_CRD_DIR") or REPO.parent / "shared" / "crds") / "nvidia.com_dynamographdeployments.yaml"
DISAGG = {"sku": "gb300", "mode": "disagg", "autoscaling": "on", "autoscaling_max_replicas": 3}


def _components(dgd):
    return {c["name"]: c for c in dgd["spec"]["components"]}


def test_off_by_default_and_the_dgd_is_unchanged():
    plan = build_plan({"sku": "gb300", "mode": "agg"})
    assert plan["autoscaling"] is None
    assert "Planner" not in _components(render.dynamo_graph_deployment(plan, "muse"))


def test_the_workers_replicas_go_to_their_adapters_and_a_planner_component_joins():
    plan = build_plan(DISAGG)
    dgd = render.dynamo_graph_deployment(plan, "muse")
    comps = _components(dgd)
    for worker in ("PrefillWorker", "DecodeWorker"):
        assert comps[worker]["scalingAdapter"] == {} and "replicas" not in comps[worker]
    assert comps["Planner"]["type"] == "planner"
    spec = comps["Planner"]["podTemplate"]["spec"]
    assert spec["serviceAccountName"] == f"{plan['name']}-planner"
    assert spec["containers"][0]["args"] == ["--config", planner.CONFIG_PATH]
    assert dgd["metadata"]["annotations"][naming.MAX_REPLICAS_ANNOTATION] == "3"
    assert plan["autoscaling"]["gpu_budget"] == 24                    # both components at 3 x 4 GPUs


def test_the_dgd_with_a_planner_is_valid_against_the_real_crd():
    if not DGD_CRD.exists():     # as tests/unit/module_utils/render/test_objects.py: the real CRDs live beside the project
        pytest.skip(f"real Dynamo CRD not found at {DGD_CRD} (set DYNAMO_CRD_DIR)")
    crd = load_crd(DGD_CRD)
    dgd = render.dynamo_graph_deployment(build_plan(DISAGG), "muse")
    assert validate_custom_object(dgd, crd, "v1beta1") == []
    schema = next(v for v in crd["spec"]["versions"] if v["name"] == "v1beta1")["schema"]["openAPIV3Schema"]
    pruned = prune_and_default(copy.deepcopy(dgd), schema)
    assert all("scalingAdapter" in c for c in pruned["spec"]["components"] if c["type"] in ("prefill", "decode"))


def test_every_broken_autoscaling_rule_is_named_at_once():
    with pytest.raises(PlanRefused) as err:
        build_plan({"sku": "gb300", "mode": "agg", "autoscaling": "on", "autoscaling_min_replicas": 3,
                    "autoscaling_max_replicas": 2, "autoscaling_gpu_budget": 4})
    text = str(err.value)
    assert "autoscaling-bounds" in text and "autoscaling-budget-floor" in text and "12 GPUs" in text
    with pytest.raises(PlanRefused, match="autoscaling-advisory-keda"):
        build_plan({"sku": "b200", "mode": "agg", "framework": "vllm", "speculative": "none",
                    "autoscaling": "advisory"})
    with pytest.raises(PlanRefused, match="invalid-autoscaling"):
        build_plan({"sku": "gb300", "mode": "agg", "autoscaling": "sometimes"})
    with pytest.raises(PlanRefused, match="autoscaling-interval") as err:
        build_plan({"sku": "gb300", "mode": "agg", "autoscaling": "on", "autoscaling_interval": 5})
    assert "autoscaling_interval>5" in str(err.value)


def _real_planner_config(config: dict) -> dict:
    """The configuration as ai-dynamo 1.5.1's PlannerConfig validates and completes it."""
    code = ("import json, sys\nfrom dynamo.planner.config.planner_config import PlannerConfig\n"
            "print(PlannerConfig.model_validate(json.loads(sys.argv[1])).model_dump_json())")
    out = subprocess.run([str(DYNAMO_PYTHON), "-c", code, json.dumps(config)], capture_output=True, text=True,
                         check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("request_", [DISAGG, {"sku": "gb300", "mode": "agg", "autoscaling": "advisory",
                                               "autoscaling_min_replicas": 2, "autoscaling_interval": 60}],
                         ids=["disagg", "agg-advisory"])
def test_the_real_planner_accepts_the_configuration_with_the_alerts_objectives(request_):
    plan = build_plan(request_)
    objective = monitoring.objectives(plan)
    (config_map, *_rbac) = planner.planner_objects(plan, "muse")
    config = json.loads(next(iter(config_map["data"].values())))
    real = _real_planner_config(config)
    assert real["optimization_target"] == "sla" and real["environment"] == "kubernetes"
    assert real["ttft_ms"] == pytest.approx(objective["ttft_s"] * 1000, abs=0.1)
    assert real["itl_ms"] == pytest.approx(objective["itl_s"] * 1000, abs=0.01)
    assert real["advisory"] is (request_["autoscaling"] == "advisory")
    assert real["min_endpoint"] == plan["autoscaling"]["min_replicas"]
    assert real["max_gpu_budget"] == plan["autoscaling"]["gpu_budget"]
    assert real["mode"] == ("disagg" if request_["mode"] == "disagg" else "agg")
    # both loops on the same objectives; its decisions exported where the planner PodMonitor scrapes them
    assert real["enable_throughput_scaling"] is True and real["enable_load_scaling"] is True
    assert real["load_adjustment_interval_seconds"] < real["throughput_adjustment_interval_seconds"]
    assert real["metric_reporting_prometheus_port"] == planner.METRICS_PORT
    component = _components(render.dynamo_graph_deployment(plan, "muse"))["Planner"]
    # the operator replaces its default ports with these and keeps its probes on ``system``: both must be named
    assert component["podTemplate"]["spec"]["containers"][0]["ports"] == [
        {"name": "metrics", "containerPort": planner.METRICS_PORT, "protocol": "TCP"},
        {"name": "system", "containerPort": planner.SYSTEM_PORT, "protocol": "TCP"}]


def test_a_changed_planner_configuration_changes_the_planner_pod_template():
    """The planner reads its configuration at start only: the digest in its pod template restarts it."""
    def template(request_):
        component = _components(render.dynamo_graph_deployment(build_plan(request_), "muse"))["Planner"]
        return component["podTemplate"]["metadata"]["annotations"][naming.PLANNER_CONFIG_DIGEST_ANNOTATION]

    assert template(DISAGG) == template(dict(DISAGG))
    assert template(DISAGG) != template({**DISAGG, "autoscaling_interval": 60})


def test_the_planners_role_may_scale_the_adapters_and_read_the_graph_only():
    plan = build_plan(DISAGG)
    _cm, sa, role, binding = planner.planner_objects(plan, "muse")
    verbs = {r["resources"][0]: set(r["verbs"]) for r in role["rules"]}
    assert verbs["dynamographdeployments"] == {"get", "list", "watch"}
    assert "patch" in verbs["dynamographdeploymentscalingadapters/scale"]
    # a refusal to list the workers' metadata (unlike an absent CRD) stops the 1.5.1 planner at start
    assert verbs["dynamoworkermetadatas"] == {"get", "list", "watch"}
    assert all(not ({"create", "delete"} & v) for v in verbs.values())
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": sa["metadata"]["name"], "namespace": "muse"}]


def test_the_preflight_reserves_every_scaled_component_at_its_maximum():
    dgd = render.dynamo_graph_deployment(build_plan(DISAGG), "muse")
    comps = gpu_occupancy.components(dgd, ["nvidia.com/gpu"])
    assert comps["PrefillWorker"]["pods"] == 3 and comps["DecodeWorker"]["pods"] == 3
    assert comps["Planner"]["per_pod"] == {"nvidia.com/gpu": 0}


def test_the_planner_aims_at_benchmark_slo_when_named():
    plan = build_plan({**DISAGG, "autoscaling_ttft_ms": 400, "autoscaling_tolerance": 0.2})
    assert plan["autoscaling"]["ttft_ms"] == 400.0
    assert plan["autoscaling"]["itl_ms"] == pytest.approx(1000 / 62.12 * 1.2, abs=0.01)    # published, widened


def test_a_standalone_target_scales_with_keda_and_leaves_its_replicas_to_it():
    plan = build_plan({"sku": "b200", "mode": "agg", "framework": "vllm", "speculative": "none",
                       "autoscaling": "on", "autoscaling_max_replicas": 2})
    objects = {o["kind"]: o for o in render.serving_objects(plan, "muse")}
    assert "replicas" not in objects["Deployment"]["spec"]
    assert objects["ScaledObject"]["spec"]["maxReplicaCount"] == 2
    assert "Planner" not in str(objects)


def test_an_unquoted_on_or_off_in_yaml_reads_as_the_choice():
    """AWX sends extra vars as YAML: `autoscaling: off` arrives as False, `on` as True."""
    assert build_plan({"sku": "gb300", "mode": "agg", "autoscaling": False})["autoscaling"] is None
    assert build_plan({"sku": "gb300", "mode": "agg", "autoscaling": True})["autoscaling"]["mode"] == "on"

"""The gaps to the same-shape upstream Dynamo recipes (issue 53, ../shared/reference/upstream-recipes.md), closed in
what the plan renders: one test per gap, on the rendered objects of the eight Dynamo targets."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils import naming
from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import prometheus_query
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.errors import PlanRefused
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.summary import plan_report
from ansible_collections.inferops.dynamo.plugins.module_utils.render import monitoring
from ansible_collections.inferops.dynamo.plugins.module_utils.render import objects as render

from plan_requests import TARGET_REQUESTS

DYNAMO = sorted(k for k in TARGET_REQUESTS if k.split("-")[-1] in ("gb200", "gb300"))


def _dgd(request: dict) -> tuple[dict, dict]:
    plan = build_plan(request)
    return plan, render.dynamo_graph_deployment(plan, "muse")


def _components(dgd: dict) -> dict[str, dict]:
    """component name -> its main container"""
    return {c["name"]: c["podTemplate"]["spec"]["containers"][0] for c in dgd["spec"]["components"]}


def _workers(dgd: dict) -> list[tuple[dict, dict]]:
    """(component, main container) of every worker component"""
    return [(c, c["podTemplate"]["spec"]["containers"][0]) for c in dgd["spec"]["components"] if c["type"] != "frontend"]


def _env(container: dict) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container.get("env") or []}


def test_the_eight_dynamo_targets_are_checked():
    assert len(DYNAMO) == 8


# 1 ----------------------------------------------------------------------------------------- SGLang metrics
@pytest.mark.parametrize("key", DYNAMO)
def test_every_worker_exports_the_engine_series_the_alerts_dashboard_and_report_read(key):
    plan, dgd = _dgd(TARGET_REQUESTS[key])
    engine = plan["target"]["framework"]
    read = {monitoring.metric_names(plan)["kv_usage"], *prometheus_query._PREFIX_SERIES[engine].values()}
    assert all(series.startswith(f"{engine}:") for series in read), read
    for _, main in _workers(dgd):
        for flag in monitoring.ENGINE_METRICS_FLAGS[engine]:
            assert flag in main["args"], f"{key}: {main['args']}"
        assert not set(monitoring.ENGINE_METRICS_OFF_FLAGS[engine]) & set(main["args"])
    if engine == "sglang":
        assert monitoring.ENGINE_METRICS_FLAGS["sglang"] == ("--enable-metrics",)


# 2 ----------------------------------------------------------------------------------------- resources
@pytest.mark.parametrize("key", DYNAMO)
def test_workers_and_frontend_request_cpu_memory_and_storage_with_no_memory_limit(key):
    plan, dgd = _dgd(TARGET_REQUESTS[key])
    engine = plan["target"]["framework"]
    want_worker = {"sglang": {"cpu": "16", "memory": "512Gi", "ephemeral-storage": "64Gi"},
                   "vllm": {"cpu": "8", "memory": "512Gi", "ephemeral-storage": "16Gi"}}[engine]
    want_frontend = {"sglang": {"cpu": "16", "memory": "128Gi"}, "vllm": {"cpu": "4", "memory": "8Gi"}}[engine]
    for _, main in _workers(dgd):
        requests, limits = main["resources"]["requests"], main["resources"]["limits"]
        assert want_worker.items() <= requests.items(), requests
        assert requests["nvidia.com/gpu"] == limits["nvidia.com/gpu"] == "4"
        assert not {"cpu", "memory", "ephemeral-storage"} & set(limits), limits   # Burstable, never OOM-limited
    frontend = _components(dgd)["Frontend"]
    assert frontend["resources"] == {"requests": want_frontend}                # requests only, no limit at all


def test_pod_resources_are_plan_inputs_validated_by_the_plan():
    _, dgd = _dgd({"sku": "gb300", "mode": "agg", "worker_memory": "768Gi", "worker_cpu": "32",
                      "frontend_memory": "64Gi", "worker_ephemeral_storage": "100Gi", "frontend_cpu": "8"})
    main = _components(dgd)["Worker"]
    assert {"cpu": "32", "memory": "768Gi", "ephemeral-storage": "100Gi"}.items() <= main["resources"]["requests"].items()
    assert _components(dgd)["Frontend"]["resources"]["requests"] == {"cpu": "8", "memory": "64Gi"}
    with pytest.raises(PlanRefused) as refused:
        build_plan({"sku": "gb300", "mode": "agg", "worker_memory": "lots", "frontend_cpu": "0"})
    assert {e.rule for e in refused.value.errors} == {"invalid-worker-memory", "invalid-frontend-cpu"}


# 4 ----------------------------------------------------------------------------------------- NCCL and ComputeDomain
@pytest.mark.parametrize("key", DYNAMO)
def test_nccl_over_the_nvlink_fabric_only_where_a_compute_domain_is_claimed(key):
    plan, dgd = _dgd(TARGET_REQUESTS[key])
    for component, main in _workers(dgd):
        claimed = bool(component["podTemplate"]["spec"].get("resourceClaims"))
        assert claimed == bool(plan["compute_domain"])
        env = _env(main)
        assert ("NCCL_MNNVL_ENABLE" in env) == claimed and ("NCCL_CUMEM_ENABLE" in env) == claimed, (key, env)


def test_vllm_on_gb200_claims_no_compute_domain_the_page_does_not_ask_for():
    plan = build_plan(TARGET_REQUESTS["vllm-agg-gb200"])
    assert plan["compute_domain"] is None
    assert not [o for o in render.serving_objects(plan, "muse") if o["kind"] == "ComputeDomain"]
    assert build_plan(TARGET_REQUESTS["sglang-agg-gb200"])["compute_domain"]       # the SGLang page asks for one


# 5 ----------------------------------------------------------------------------------------- disaggregation
@pytest.mark.parametrize("sku", ["gb200", "gb300"])
def test_disaggregated_workers_of_the_default_provider_may_register_nixl_memory_and_the_plan_says_so(sku):
    plan, dgd = _dgd({"sku": sku, "mode": "disagg"})
    assert plan["rdma"]["provider"] == "none"
    for _, main in _workers(dgd):
        assert main["securityContext"]["capabilities"]["add"] == ["IPC_LOCK", "SYS_RESOURCE"]
    assert plan["pod_security"]["workers"] == "privileged (adds IPC_LOCK, SYS_RESOURCE)"
    assert any("Pod Security's baseline level refuses" in w for w in plan["warnings"])
    assert any(line.startswith("Pods ") and "workers privileged" in line for line in plan_report(plan))
    # aggregated targets need nothing beyond baseline
    agg = build_plan({"sku": sku, "mode": "agg"})
    assert agg["pod_security"]["workers"] == "baseline (runs as root)"
    assert "capabilities" not in _components(render.dynamo_graph_deployment(agg, "muse"))["Worker"]["securityContext"]


@pytest.mark.parametrize("key", [k for k in DYNAMO if "disagg" in k])
def test_sglang_disaggregation_and_watchdog_timeouts_are_raised_as_upstream(key):
    _, dgd = _dgd(TARGET_REQUESTS[key])
    for _, main in _workers(dgd):
        env = _env(main)
        assert env["SGLANG_DISAGGREGATION_WAITING_TIMEOUT"] == env["SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT"] == "3600"
        assert next(iter(env)) == "SGLANG_DISAGGREGATION_NIXL_BACKEND"      # still the first env entry (hook anchor)
        assert main["args"][main["args"].index("--watchdog-timeout") + 1] == "3600"


@pytest.mark.parametrize("key", [k for k in DYNAMO if k.startswith("sglang") and "disagg" not in k])
def test_aggregated_sglang_workers_raise_the_watchdog_and_set_no_disaggregation_timeouts(key):
    _, dgd = _dgd(TARGET_REQUESTS[key])
    for _, main in _workers(dgd):
        assert main["args"][main["args"].index("--watchdog-timeout") + 1] == "3600"
        assert not [n for n in _env(main) if n.startswith("SGLANG_DISAGGREGATION_")]


# 6 ----------------------------------------------------------------------------------------- vLLM on GB200/GB300
@pytest.mark.parametrize("key", ["vllm-agg-gb200", "vllm-agg-gb300"])
def test_vllm_opts_out_of_the_v2_runner_and_tolerates_busy_workers(key):
    _, dgd = _dgd(TARGET_REQUESTS[key])
    (_, main), = _workers(dgd)
    env = _env(main)
    assert env["VLLM_USE_V2_MODEL_RUNNER"] == "0"
    assert env["DYN_HEALTH_CHECK_REQUEST_TIMEOUT"] == "300"
    liveness = main["livenessProbe"]
    assert liveness["failureThreshold"] == 60 and liveness["timeoutSeconds"] == 10 and liveness["periodSeconds"] == 10
    assert liveness["httpGet"] == {"path": "/live", "port": 9090}
    # SGLang workers keep the operator's probes (the same-shape SGLang recipes override none)
    (_, sglang), = _workers(_dgd(TARGET_REQUESTS[key.replace("vllm", "sglang")])[1])
    assert "livenessProbe" not in sglang and "DYN_HEALTH_CHECK_REQUEST_TIMEOUT" not in _env(sglang)


# 8 ----------------------------------------------------------------------------------------- mnnvl placement
def test_mnnvl_keeps_prefill_and_decode_in_one_nvlink_clique_and_warns():
    plan, dgd = _dgd({"sku": "gb200", "mode": "disagg", "rdma_provider": "mnnvl"})
    for component, _ in _workers(dgd):
        (term,) = component["podTemplate"]["spec"]["affinity"]["podAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"]
        assert term["topologyKey"] == "nvidia.com/gpu.clique"
        assert term["labelSelector"]["matchLabels"] == {naming.DGD_LABEL: plan["name"]}
        # the frontend (scheduled anywhere) is not what the workers follow
        assert term["labelSelector"]["matchExpressions"] == [
            {"key": naming.COMPONENT_TYPE_LABEL, "operator": "In", "values": ["prefill", "decode"]}]
    assert any("one NVLink clique" in w for w in plan["warnings"])
    for provider in ("none", "infiniband"):
        other, dgd = _dgd({"sku": "gb200", "mode": "disagg", "rdma_provider": provider})
        assert other["placement"] is None
        assert all("affinity" not in c["podTemplate"]["spec"] for c, _ in _workers(dgd))


# 9 ----------------------------------------------------------------------------------------- request migration
@pytest.mark.parametrize("key", DYNAMO)
def test_the_frontend_migrates_requests_of_a_lost_worker(key):
    plan, dgd = _dgd(TARGET_REQUESTS[key])
    args = _components(dgd)["Frontend"]["args"]
    assert args[args.index("--migration-limit") + 1] == "3"
    assert plan["frontend"]["migration_limit"] == 3
    assert "migration limit 3" in "\n".join(plan_report(plan))


def test_migration_limit_is_a_plan_input_and_zero_turns_it_off():
    off = build_plan({"sku": "gb300", "mode": "agg", "migration_limit": "0"})
    assert "--migration-limit" not in off["frontend"]["args"]
    assert build_plan({"sku": "gb300", "mode": "agg", "migration_limit": 5})["frontend"]["args"][-2:] == [
        "--migration-limit", "5"]
    with pytest.raises(PlanRefused) as refused:
        build_plan({"sku": "gb300", "mode": "agg", "migration_limit": "-1"})
    assert [e.rule for e in refused.value.errors] == ["invalid-migration-limit"]


# 10 ---------------------------------------------------------------------------------------- lower items
@pytest.mark.parametrize("sku", ["gb200", "gb300"])
def test_the_kv_router_waits_for_every_worker_it_routes_to(sku):
    args = build_plan({"sku": sku, "mode": "kv-router"})["frontend"]["args"]
    assert args[args.index("--router-min-initial-workers") + 1] == "2"
    # under the planner it waits for no more than the fewest replicas the planner may keep
    scaled = build_plan({"sku": sku, "mode": "kv-router", "autoscaling": "on", "autoscaling_ttft_ms": 500,
                         "autoscaling_itl_ms": 30})["frontend"]["args"]
    assert scaled[scaled.index("--router-min-initial-workers") + 1] == "1"


@pytest.mark.parametrize("key", DYNAMO)
def test_startup_probe_waits_five_seconds_and_the_ports_workers_listen_on_are_declared(key):
    plan, dgd = _dgd(TARGET_REQUESTS[key])
    for component, main in _workers(dgd):
        assert main["startupProbe"]["timeoutSeconds"] == 5
        ports = {p["name"]: p["containerPort"] for p in main["ports"]}
        # an explicit list replaces the operator's: it keeps system (the probes' port) and nixl
        assert ports["system"] == 9090 and ports["nixl"] == 19090
        assert ("kv-events" in ports) == (plan["target"]["mode"] == "kv-router")
        assert ("bootstrap" in ports) == (component["type"] == "prefill")
        if "bootstrap" in ports:
            assert str(ports["bootstrap"]) == main["args"][main["args"].index("--disaggregation-bootstrap-port") + 1]


def test_infiniband_asks_one_rdma_device_per_gpu_unless_told_otherwise():
    _, dgd = _dgd({"sku": "gb200", "mode": "disagg", "rdma_provider": "infiniband"})
    assert {main["resources"]["limits"]["rdma/ib"] for _, main in _workers(dgd)} == {"4"}
    _, dgd = _dgd({"sku": "gb200", "mode": "disagg", "rdma_provider": "infiniband", "rdma_devices_per_worker": 1})
    assert {main["resources"]["requests"]["rdma/ib"] for _, main in _workers(dgd)} == {"1"}
    with pytest.raises(PlanRefused) as refused:
        build_plan({"sku": "gb200", "mode": "disagg", "rdma_devices_per_worker": 2})
    assert [e.rule for e in refused.value.errors] == ["rdma-devices-without-device-plugin"]


def test_the_plan_says_the_default_image_is_the_generic_runtime_release():
    plan = build_plan({"sku": "gb300", "mode": "agg"})
    assert any("generic runtime release" in w for w in plan["warnings"])
    named = build_plan({"sku": "gb300", "mode": "agg", "image": "registry.example/muse-sglang:1"})
    assert not any("generic runtime release" in w for w in named["warnings"])
    assert not any("generic runtime release" in w for w in build_plan(TARGET_REQUESTS["vllm-agg-b200"])["warnings"])

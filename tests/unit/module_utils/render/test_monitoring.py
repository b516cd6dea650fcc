"""Monitoring objects: objectives from the benchmark's, burn-rate alerts, scrape objects, dashboard; valid
against the prometheus-operator's real CRDs."""

import copy
import json

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan
from ansible_collections.inferops.dynamo.plugins.module_utils.render import monitoring as mon
from ansible_collections.inferops.dynamo.plugins.module_utils.render import objects as render
from kubesim.control_plane import build
from kubesim.openapi import load_crd, prune_and_default, validate_custom_object

AGG = build_plan({"sku": "gb300", "mode": "agg"})
VLLM_B200 = build_plan({"sku": "b200", "framework": "vllm", "mode": "agg", "speculative": "none"})


def test_objectives_follow_the_published_figures_with_the_gate_tolerance():
    o = mon.objectives(AGG)
    assert o["ttft_s"] == pytest.approx(AGG["expected"]["ttft_p50_ms"] * 1.1 / 1000)
    assert o["itl_s"] == pytest.approx(1.1 / AGG["expected"]["output_tokens_per_s_per_user_p50"])
    # the published figures are medians: the gate passes while half the requests are at or under them
    assert (o["ttft_target"], o["itl_target"], o["error_target"], o["period_days"]) == (0.5, 0.5, 0.99, 30)


def test_benchmark_slo_overrides_the_published_figures():
    o = mon.objectives(AGG, {"ttft_ms": 300, "itl_ms": 25}, attainment=0.9)
    assert (o["ttft_s"], o["itl_s"], o["ttft_target"], o["itl_target"]) == (0.3, 0.025, 0.9, 0.9)
    o = mon.objectives(AGG, {"ttft_ms": 300}, attainment=0.9)
    assert (o["ttft_target"], o["itl_target"]) == (0.9, 0.5)          # ITL still from the published median


def test_every_broken_input_is_named_at_once():
    with pytest.raises(mon.MonitoringError) as err:
        mon.objectives({"target": {"key": "x"}}, {"ttft_ms": -1}, attainment=1.5, period_days=0,
                       scrape_interval_s=0)
    text = str(err.value)
    for part in ("benchmark_slo_attainment=1.5", "monitoring_slo_period_days=0", "benchmark_slo.ttft_ms=-1",
                 "monitoring_scrape_interval=0"):
        assert part in text


def test_an_objective_from_a_published_median_pages_when_most_requests_miss_it_and_tickets_when_half_do():
    """14.4 x a 50% budget is beyond every request: a median objective pages at 75% of the requests over it and
    opens a ticket at half, where the benchmark's gate fails."""
    alerts = _alerts(mon.prometheus_rule(AGG, "muse", mon.objectives(AGG)))
    assert "> 0.75\n" in alerts["SglangAggGb300TTFTBudgetFastBurn"]["expr"]
    assert "> 0.5\n" in alerts["SglangAggGb300ITLBudgetSlowBurn"]["expr"]
    assert "> 0.144\n" in alerts["SglangAggGb300ErrorBudgetFastBurn"]["expr"]        # errors keep the workbook's
    assert "50% of requests under 196 ms" in alerts["SglangAggGb300TTFTBudgetSlowBurn"]["annotations"]["description"]


def test_rules_are_evaluated_as_often_as_the_series_are_scraped():
    rule = mon.prometheus_rule(AGG, "muse", mon.objectives(AGG, scrape_interval_s=15))
    assert {g["interval"] for g in rule["spec"]["groups"]} == {"15s"}


def test_a_target_without_published_figures_watches_latency_only_with_benchmark_slo():
    rule = mon.prometheus_rule(VLLM_B200, "muse", mon.objectives(VLLM_B200))
    assert not [a for a in _alerts(rule) if "TTFT" in a or "ITL" in a]
    assert "VllmAggB200ErrorBudgetFastBurn" in _alerts(rule)
    rule = mon.prometheus_rule(VLLM_B200, "muse", mon.objectives(VLLM_B200, {"ttft_ms": 500}))
    assert "VllmAggB200TTFTBudgetFastBurn" in _alerts(rule) and "VllmAggB200ITLBudgetFastBurn" not in _alerts(rule)


@pytest.mark.parametrize(("objective", "counted"), [(0.1957, 0.22), (0.22, 0.22), (0.0001, 0.0022)])
def test_latency_is_counted_at_the_smallest_bucket_not_below_the_objective(objective, counted):
    assert mon.effective_threshold(objective, mon.DYNAMO_TTFT_BUCKETS) == counted


def test_an_objective_past_the_last_bucket_is_refused():
    with pytest.raises(mon.MonitoringError, match="beyond the histogram's last bucket"):
        mon.effective_threshold(600, mon.DYNAMO_TTFT_BUCKETS)


def _alerts(rule):
    return {r["alert"]: r for g in rule["spec"]["groups"] for r in g["rules"] if "alert" in r}


def _records(rule):
    return {r["record"]: r for g in rule["spec"]["groups"] for r in g["rules"] if "record" in r}


def test_each_objective_pages_on_a_fast_pair_of_windows_and_tickets_on_a_slow_one():
    rule = mon.prometheus_rule(AGG, "muse", mon.objectives(AGG, {"ttft_ms": 300}))
    alerts = _alerts(rule)
    fast = alerts["SglangAggGb300TTFTBudgetFastBurn"]
    assert fast["labels"]["severity"] == "critical" and fast["for"] == "2m"
    assert "inferops:ttft_bad_ratio:rate1h" in fast["expr"] and "inferops:ttft_bad_ratio:rate5m" in fast["expr"]
    assert "> 0.72" in fast["expr"]                     # 14.4 x a 5% budget
    slow = alerts["SglangAggGb300ErrorBudgetSlowBurn"]
    assert "rate6h" in slow["expr"] and "rate30m" in slow["expr"] and "> 0.06" in slow["expr"]   # 6 x 1%
    assert {"SglangAggGb300QueueBacklog", "SglangAggGb300KVCacheSaturated", "SglangAggGb300WorkerRestarts",
            "SglangAggGb300ITLBudgetFastBurn"} <= set(alerts)
    for alert in alerts.values():
        assert alert["annotations"]["summary"] and alert["annotations"]["runbook"].startswith("look first at")


def test_every_window_an_alert_reads_is_recorded_on_the_frontend_histograms():
    rule = mon.prometheus_rule(AGG, "muse", mon.objectives(AGG))
    records = _records(rule)
    for alert in _alerts(rule).values():
        for token in alert["expr"].split():
            if token.startswith("inferops:"):
                assert token.split("{")[0] in records, token
    ttft = records["inferops:ttft_bad_ratio:rate5m"]["expr"]
    assert 'dynamo_frontend_time_to_first_token_seconds_bucket{namespace="muse",le="0.22"}' in ttft
    assert records["inferops:ttft_bad_ratio:rate5m"]["labels"] == {mon.TARGET_LABEL: "sglang-agg-gb300"}


def test_a_shorter_slo_period_scales_every_window_down_to_four_scrapes():
    # 6 h is 1/120 of 30 days: 1h/5m become 30s/2.5s, and 2.5 s is raised to four 5 s scrapes
    rule = mon.prometheus_rule(AGG, "muse", mon.objectives(AGG, period_days=0.25, scrape_interval_s=5))
    fast = _alerts(rule)["SglangAggGb300TTFTBudgetFastBurn"]
    assert "rate30s{" in fast["expr"] and "rate20s{" in fast["expr"] and fast["for"] == "1s"


def test_dynamo_targets_leave_scraping_to_the_operators_pod_monitors():
    assert mon.scrape_objects(AGG, "muse") == []


def test_a_standalone_vllm_target_is_scraped_on_its_server_port():
    (pm,) = mon.scrape_objects(VLLM_B200, "muse")
    deployment = next(o for o in render.standalone_deployment(VLLM_B200, "muse") if o["kind"] == "Deployment")
    pod = deployment["spec"]["template"]
    assert pm["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    ports = {p["name"] for p in pod["spec"]["containers"][0]["ports"]}
    assert pm["spec"]["podMetricsEndpoints"][0]["port"] in ports


def test_the_dashboard_is_a_sidecar_configmap_whose_panels_all_query():
    cm = mon.dashboard_configmap(AGG, "muse", mon.objectives(AGG))
    assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
    board = json.loads(next(iter(cm["data"].values())))
    assert len(board["panels"]) >= 6
    for panel in board["panels"]:
        assert panel["targets"] and all(t["expr"] for t in panel["targets"]), panel["title"]


def _subset(small, big, path="") -> list[str]:
    """Keys of ``small`` that ``big`` lacks (what the API server's pruning would drop)."""
    if isinstance(small, dict):
        out = []
        for k, v in small.items():
            out += [f"{path}.{k}"] if not isinstance(big, dict) or k not in big else _subset(v, big[k], f"{path}.{k}")
        return out
    if isinstance(small, list):
        return [x for i, v in enumerate(small) for x in _subset(v, big[i], f"{path}[{i}]")]
    return []


@pytest.mark.parametrize("plan", [AGG, VLLM_B200], ids=["dynamo", "standalone-vllm"])
def test_rendered_objects_are_valid_against_the_real_monitoring_crds(plan):
    for obj in mon.monitoring_objects(plan, "muse", mon.objectives(plan)):
        if obj["apiVersion"] != mon.MONITORING_API:
            continue
        crd = load_crd(build.monitoring_crd(obj["kind"].lower() + "s"))
        assert validate_custom_object(obj, crd) == [], obj["kind"]
        schema = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")["schema"]["openAPIV3Schema"]
        assert _subset(obj, prune_and_default(copy.deepcopy(obj), schema)) == [], obj["kind"]

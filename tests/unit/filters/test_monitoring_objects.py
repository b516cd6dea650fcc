"""monitoring_objects: the role variables as the filter receives them (unset ones as None), every problem at once."""

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.dynamo.plugins.filter.monitoring import monitoring_objects
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan

AGG = build_plan({"sku": "gb300", "mode": "agg"})
UNSET = {"tolerance": None, "attainment": None, "max_failed_ratio": None, "period_days": None, "scrape_interval": None}


def _rule(objects):
    return next(o for o in objects if o["kind"] == "PrometheusRule")


def test_unset_settings_take_the_benchmark_defaults():
    assert monitoring_objects(AGG, "muse", {}, **UNSET) == monitoring_objects(AGG, "muse", {}, tolerance=0.10,
                                                                              attainment=0.95)


def test_benchmark_slo_moves_the_alert_threshold():
    ttft = _rule(monitoring_objects(AGG, "muse", {"ttft_ms": 1000}, **UNSET))["spec"]["groups"][0]["rules"][0]
    assert ttft["record"] == "inferops:ttft_bad_ratio:rate1h"
    assert 'dynamo_frontend_time_to_first_token_seconds_bucket{namespace="muse",le="1"}' in ttft["expr"]


def test_every_broken_setting_is_named_with_the_way_out():
    with pytest.raises(AnsibleFilterError) as err:
        monitoring_objects(AGG, "muse", {"ttft_ms": -5}, **{**UNSET, "attainment": 2, "period_days": 0})
    text = str(err.value)
    for part in ("benchmark_slo_attainment=2.0", "monitoring_slo_period_days=0.0", "benchmark_slo.ttft_ms=-5",
                 "-e monitoring=false"):
        assert part in text


def test_an_unknown_option_is_refused_naming_the_valid_ones():
    with pytest.raises(AnsibleFilterError, match=r"unknown option.*windows.*valid: slo, tolerance"):
        monitoring_objects(AGG, "muse", {}, windows=3)

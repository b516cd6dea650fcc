"""Benchmark duration estimate, deadline and the time-budget refusal."""

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.bench.duration import (
    MARGIN,
    STARTUP_ALLOWANCE_S,
    estimate,
)
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.errors import PlanError

GB300 = build_plan({"sku": "gb300", "mode": "agg"})["expected"]


def test_full_trace_on_gb300_fits_three_hours_with_its_deadline():
    est = estimate(request_count=3541, output_tokens_per_request=400, concurrency=16, expected=GB300,
                   time_budget_s=10800)
    assert est["output_tokens"] == 1_416_400
    # 1,416,400 tokens at the published 635.8 tokens/s is about 37 minutes
    assert 2200 < est["estimate_s"] < 2400
    assert est["deadline_s"] == pytest.approx(est["estimate_s"] * (1 + MARGIN) + STARTUP_ALLOWANCE_S, abs=2)


def test_a_run_that_cannot_finish_is_refused_with_the_request_count_that_fits():
    with pytest.raises(PlanError) as info:
        estimate(request_count=3541, output_tokens_per_request=400, concurrency=16, expected=GB300,
                 time_budget_s=3600)
    err = info.value
    assert err.rule == "benchmark-exceeds-time-budget"
    fits = int(err.valid[0].split("<=")[1])
    assert 0 < fits < 3541
    assert estimate(request_count=fits, output_tokens_per_request=400, concurrency=16, expected=GB300,
                    time_budget_s=3600)["deadline_s"] <= 3600
    assert "benchmark_request_count" in str(err) and "tokens/s" in str(err)


def test_lower_concurrency_scales_the_expected_throughput_down():
    full = estimate(request_count=100, output_tokens_per_request=400, concurrency=16, expected=GB300, time_budget_s=10**6)
    half = estimate(request_count=100, output_tokens_per_request=400, concurrency=8, expected=GB300, time_budget_s=10**6)
    assert half["throughput_basis_tokens_per_s"] == pytest.approx(full["throughput_basis_tokens_per_s"] / 2, rel=0.01)


def test_targets_without_figures_use_a_stated_assumption():
    est = estimate(request_count=500, output_tokens_per_request=400, concurrency=8, expected=None, time_budget_s=10**6)
    assert "no published figures" in est["basis"]


def test_a_request_rate_ceiling_that_would_limit_the_run_is_refused_with_the_least_that_does_not():
    # gb300 at 16: 635.8 tokens/s / 400 tokens = about 1.6 requests/s, so at least 4 x 1.6
    with pytest.raises(PlanError) as info:
        estimate(request_count=100, output_tokens_per_request=400, concurrency=16, expected=GB300,
                 time_budget_s=10**6, request_rate_ceiling=5)
    err = info.value
    assert err.rule == "benchmark-request-rate-ceiling-too-low"
    least = int(err.valid[0].split(">=")[1])
    assert least == 7
    est = estimate(request_count=100, output_tokens_per_request=400, concurrency=16, expected=GB300,
                   time_budget_s=10**6, request_rate_ceiling=least)
    assert est["request_rate_per_s"] == pytest.approx(635.8 / 400, rel=0.01)


def test_a_run_over_budget_and_under_a_low_ceiling_names_both_rules():
    with pytest.raises(PlanError) as info:
        estimate(request_count=3541, output_tokens_per_request=400, concurrency=16, expected=GB300,
                 time_budget_s=3600, request_rate_ceiling=1)
    text = str(info.value)
    assert "benchmark-exceeds-time-budget" in text and "benchmark-request-rate-ceiling-too-low" in text

"""percentile_table: mean and percentiles of TTFT, ITL, end-to-end latency and tokens/s per user."""

import json

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.bench.aiperf import (
    percentile_table,
    summary_metrics,
)


def test_real_summary(aiperf_fixtures):
    raw = json.loads((aiperf_fixtures / "goodput_slo" / "profile_export_aiperf.json").read_text())
    table = percentile_table(summary_metrics(raw))
    assert set(table) == {"ttft_ms", "itl_ms", "e2e_ms", "tokens_per_s_per_user"}
    ttft = table["ttft_ms"]
    assert ttft["avg"] == pytest.approx(raw["time_to_first_token"]["avg"]) and ttft["unit"] == "ms"
    assert ttft["p50"] <= ttft["p90"] <= ttft["p99"] and ttft["count"] == 24
    assert table["tokens_per_s_per_user"]["direction"] == "higher"


def test_units_scaled_and_missing_metrics_left_out():
    table = percentile_table({"time_to_first_token": {"unit": "ns", "avg": 2e6, "p50": 1e6, "count": 3}})
    assert table == {"ttft_ms": {"unit": "ms", "direction": "lower", "avg": 2.0, "p50": 1.0, "count": 3.0}}

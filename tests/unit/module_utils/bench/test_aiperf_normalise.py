import json

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.bench.aiperf import normalise, summary_metrics


def _blocks(path):
    return summary_metrics(json.loads(path.read_text()))


def test_real_partial_failures(aiperf_fixtures):
    m = normalise(_blocks(aiperf_fixtures / "partial_failures" / "profile_export_aiperf.json"), gpus=4)
    assert (m["requests_total"], m["requests_passing"], m["requests_failing"]) == (24, 20, 4)
    assert m["failed_ratio"] == pytest.approx(4 / 24)
    assert m["output_tokens_per_s_per_gpu"] == pytest.approx(m["output_tokens_per_s"] / 4)
    # the frontend ran with ttft 60 ms and 150 tok/s/user, slowed down by concurrency 4 > expected 2
    assert 60 < m["ttft_p50_ms"] < 200
    assert 6.6 < m["itl_p50_ms"] < 20
    assert m["request_latency_p99_ms"] >= m["request_latency_p50_ms"]


def test_real_non_streaming_has_no_ttft(aiperf_fixtures):
    m = normalise(_blocks(next((aiperf_fixtures / "non_streaming").glob("*/profile_export_aiperf.json"))))
    assert m["ttft_p50_ms"] is None and m["itl_p50_ms"] is None
    assert m["output_tokens_per_s_per_user_p50"] is None
    assert m["request_latency_p50_ms"] > 0 and m["requests_failing"] == 0
    assert m["output_tokens_per_s_per_gpu"] is None  # gpus not given


def test_0_1_layout(aiperf_fixtures):
    m = normalise(_blocks(aiperf_fixtures / "handmade" / "v0_1_records.json"))
    assert m["ttft_p50_ms"] == 205.0 and m["requests_total"] == 10 and m["failed_ratio"] == 0
    assert m["benchmark_duration_s"] == 0.8


def test_schema_1_0_total_from_success_plus_errors(aiperf_fixtures):
    m = normalise(_blocks(aiperf_fixtures / "handmade" / "schema_1_0.json"))
    assert m["requests_total"] == 20 and m["failed_ratio"] == pytest.approx(0.1)


def test_units_converted():
    blocks = {"time_to_first_token": {"unit": "ns", "p50": 2_000_000.0},
              "benchmark_duration": {"unit": "ms", "avg": 1500.0}}
    m = normalise(blocks)
    assert m["ttft_p50_ms"] == pytest.approx(2.0)
    assert m["benchmark_duration_s"] == pytest.approx(1.5)


def test_only_error_rate_known():
    assert normalise({"request_error_rate": {"unit": "%", "avg": 12.5}})["failed_ratio"] == pytest.approx(0.125)

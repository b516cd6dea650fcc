import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.bench.aiperf import AIPerfResultsError
from ansible_collections.inferops.dynamo.plugins.module_utils.bench.aiperf_judge import compare

MEASURED = {"output_tokens_per_s": 950.0, "ttft_p50_ms": 230.0, "failed_ratio": 0.0, "requests_failing": 2.0,
            "ttft_p99_ms": None, "output_sequence_length_avg": 120.0}


def _verdict(metric, expected, **kw):
    return compare(MEASURED, {metric: expected}, **kw)[0]


def test_throughput_higher_is_better():
    assert _verdict("output_tokens_per_s", 1000)["verdict"] == "pass"  # -5 % within 10 %
    assert _verdict("output_tokens_per_s", 1100)["verdict"] == "fail"
    assert _verdict("output_tokens_per_s", 500)["verdict"] == "pass"  # faster is never a regression


def test_latency_lower_is_better_with_per_metric_tolerance():
    v = _verdict("ttft_p50_ms", 200)
    assert v["verdict"] == "fail" and v["ratio"] == pytest.approx(1.15) and v["delta_pct"] == pytest.approx(15.0)
    assert _verdict("ttft_p50_ms", 200, tolerances={"ttft_p50_ms": 0.2})["verdict"] == "pass"
    assert _verdict("ttft_p50_ms", 400)["verdict"] == "pass"


def test_failures_lower_is_better_and_zero_expected_is_absolute():
    assert _verdict("failed_ratio", 0)["verdict"] == "pass"
    v = _verdict("requests_failing", 0)
    assert v["verdict"] == "fail" and v["ratio"] is None and v["direction"] == "lower"


def test_two_sided_for_sequence_lengths():
    assert _verdict("output_sequence_length_avg", 128)["verdict"] == "pass"
    assert _verdict("output_sequence_length_avg", 100)["verdict"] == "fail"


def test_missing_metric():
    v = _verdict("ttft_p99_ms", 300)
    assert v["verdict"] == "missing" and v["measured"] is None
    assert _verdict("not_a_metric", 1)["verdict"] == "missing"


def test_verdict_keys():
    assert set(_verdict("ttft_p50_ms", 200)) >= {"metric", "expected", "measured", "ratio", "delta_pct",
                                                  "tolerance", "verdict"}


def test_bad_inputs():
    with pytest.raises(AIPerfResultsError, match="must be a number"):
        compare(MEASURED, {"ttft_p50_ms": "fast"})
    with pytest.raises(AIPerfResultsError, match=">= 0"):
        compare(MEASURED, {"ttft_p50_ms": 1}, tolerance=-0.1)

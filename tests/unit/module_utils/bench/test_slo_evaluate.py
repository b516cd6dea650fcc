"""evaluate: AIPerf's good share against the attainment; per-objective shares and tails from the rows."""

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.bench import aiperf, aiperf_judge
from ansible_collections.inferops.dynamo.plugins.module_utils.bench.slo import describe, evaluate


@pytest.fixture
def real(aiperf_fixtures):
    # a real AIPerf 0.13 run with --goodput 'time_to_first_token:70 inter_token_latency:9.5'
    return aiperf_judge.evaluate(aiperf.load_results(str(aiperf_fixtures / "goodput_slo")), gpus=4)


def test_real_run_missing_both_objectives(real):
    e = evaluate(real["metrics"], real["requests"], {"ttft_ms": 70, "itl_ms": 9.5}, 0.95,
                 percentiles=real["percentiles"])
    assert e["good_fraction"] == 0.125 and e["good_fraction_source"] == "aiperf"  # AIPerf's own count
    assert e["goodput_per_s"] == pytest.approx(real["metrics"]["goodput_per_s"]) and e["good_requests"] == 3
    by = {o["key"]: o for o in e["objectives"]}
    assert by["ttft_ms"]["requests_met"] == 16 and by["itl_ms"]["requests_met"] == 3
    assert by["itl_ms"]["tail_stat"] == "p95" and by["itl_ms"]["tail"] > 9.5
    assert e["met"] is False and e["failed"] == ["ttft_ms", "itl_ms"]
    line = describe(e)
    assert line.startswith("12.5% of requests met every objective (needs 95%)")
    assert "itl_ms <= 9.5 ms met by 12.5%" in line


def test_met_with_a_lower_attainment_and_a_loose_objective(real):
    e = evaluate(real["metrics"], real["requests"], {"ttft_ms": 500}, 0.5)
    assert e["objectives"][0]["share_met"] == 1.0 and e["objectives"][0]["verdict"] == "pass"
    # AIPerf judged the run against its own --goodput (the fixture's stricter objectives): its share decides
    assert e["good_fraction"] == 0.125 and e["met"] is False and e["failed"] == ["all objectives together"]


def test_counted_from_the_rows_without_aiperf_goodput():
    rows = [{"ttft_ms": 100, "itl_ms": 10, "error": None}, {"ttft_ms": 400, "itl_ms": 10, "error": None},
            {"ttft_ms": None, "itl_ms": None, "error": "500"}, {"ttft_ms": 90, "itl_ms": 9, "error": None}]
    e = evaluate({"failed_ratio": 0.25}, rows, {"ttft_ms": 300, "error_rate": 0.3}, 0.5)
    assert e["good_fraction"] == 0.5 and e["good_fraction_source"] == "requests"  # a failed request is not good
    assert e["run_objectives"][0]["verdict"] == "pass" and e["met"] is True


def test_error_rate_and_minimum_goodput():
    metrics = {"good_request_fraction": 1.0, "goodput_per_s": 1.5, "failed_ratio": 0.02}
    e = evaluate(metrics, [], {"ttft_ms": 300, "error_rate": 0.01}, 0.95, goodput_min=2)
    assert e["met"] is False and e["failed"] == ["ttft_ms", "error_rate", "goodput_min"]
    assert "error_rate <= 0.01: measured 0.0200" in describe(e)
    assert "below the minimum 2.00" in describe(e)


def test_no_objectives():
    assert evaluate({}, [], {}) is None

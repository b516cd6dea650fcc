import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.bench.aiperf import (
    AIPerfResultsError,
    load_results,
)
from ansible_collections.inferops.dynamo.plugins.module_utils.bench.aiperf_judge import evaluate


def test_max_failed_ratio_limit(aiperf_fixtures):
    r = load_results(str(aiperf_fixtures / "partial_failures"))
    out = evaluate(r, gpus=2, max_failed_ratio=0.1)
    limit = out["verdicts"][-1]
    assert limit["metric"] == "failed_ratio" and limit["verdict"] == "fail" and not out["passed"]
    assert evaluate(r, max_failed_ratio=0.2)["passed"]


def test_metrics_carry_version_and_source(aiperf_fixtures):
    out = evaluate(load_results(str(aiperf_fixtures / "handmade" / "schema_1_5.json")))
    m = out["metrics"]
    assert (m["schema_version"], m["aiperf_version"], m["source"]) == ("1.5", "0.14.0.dev0", "json")
    assert m["requests_total"] == 100 and m["failed_ratio"] == pytest.approx(0.05)


def test_expected_from_a_real_run_passes_and_a_stricter_one_fails(aiperf_fixtures):
    r = load_results(str(aiperf_fixtures / "streaming_trace"))
    m = evaluate(r)["metrics"]
    assert evaluate(r, expected={"output_tokens_per_s": m["output_tokens_per_s"] * 1.05,
                                 "ttft_p50_ms": m["ttft_p50_ms"] * 0.95})["passed"]
    assert not evaluate(r, expected={"ttft_p50_ms": m["ttft_p50_ms"] * 0.5})["passed"]


def test_bad_gpus(aiperf_fixtures):
    with pytest.raises(AIPerfResultsError, match="gpus must be >= 1"):
        evaluate(load_results(str(aiperf_fixtures / "streaming_trace")), gpus=0)

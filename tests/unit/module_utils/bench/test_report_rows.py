"""report_rows: the five headline rows from real AIPerf metrics and the catalog's expected block."""

from ansible_collections.inferops.dynamo.plugins.module_utils.bench import aiperf, aiperf_judge
from ansible_collections.inferops.dynamo.plugins.module_utils.bench.report import report_rows

EXPECTED = {"gpus": 4, "concurrency": 12, "requests_total": 3541, "requests_passing": 3526, "requests_failing": 15,
            "output_tokens_per_s": 514.30, "output_tokens_per_s_per_gpu": 128.58,
            "output_tokens_per_s_per_user_p50": 57.43, "ttft_p50_ms": 221.70}


def results(fixtures, case, expected):
    return aiperf_judge.evaluate(aiperf.load_results(str(fixtures / case)), gpus=4, expected=expected)


def test_order_labels_and_verdict_words(aiperf_fixtures):
    out = results(aiperf_fixtures, "partial_failures", {"output_tokens_per_s_per_gpu": 128.58, "ttft_p50_ms": 221.7})
    rows = report_rows(out["metrics"], out["verdicts"], EXPECTED)
    assert [r["key"] for r in rows] == ["requests", "output_tokens_per_s", "output_tokens_per_s_per_gpu",
                                        "output_tokens_per_s_per_user_p50", "ttft_p50_ms"]
    assert rows[0]["measured"] == "20 / 4" and rows[0]["expected"] == "3,526 / 15"
    assert rows[0]["delta"] == "—"  # 24 requests against 3541: a count delta means nothing
    by_key = {r["key"]: r for r in rows}
    assert by_key["output_tokens_per_s_per_gpu"]["verdict"] == "FAIL"
    assert by_key["output_tokens_per_s_per_gpu"]["measured"] == "80.32"
    assert by_key["output_tokens_per_s_per_gpu"]["expected"] == "128.58"
    assert by_key["output_tokens_per_s_per_gpu"]["delta"] == "-37.5 %"
    assert by_key["ttft_p50_ms"]["verdict"] == "pass" and by_key["ttft_p50_ms"]["direction"] == "lower"
    assert by_key["output_tokens_per_s"]["verdict"] == "not gated"
    assert by_key["output_tokens_per_s"]["expected"] == "514.30"


def test_no_expected_figures_dash_and_not_gated(aiperf_fixtures):
    out = results(aiperf_fixtures, "streaming_trace", {})
    rows = report_rows(out["metrics"], out["verdicts"], None)
    assert all(r["expected"] == "—" and r["delta"] == "—" and r["verdict"] == "not gated" for r in rows)
    assert rows[0]["measured"] == "24 / 0"
    assert rows[1]["measured"] == "312.36"


def test_missing_measurement_and_request_verdicts():
    metrics = {"requests_passing": 3526.0, "requests_failing": 15.0, "requests_total": 3541.0,
               "output_tokens_per_s": 600.0, "ttft_p50_ms": None}
    verdicts = [{"metric": "ttft_p50_ms", "expected": 221.7, "measured": None, "verdict": "missing"},
                {"metric": "requests_failing", "expected": 15, "measured": 15.0, "verdict": "pass"},
                {"metric": "failed_ratio", "expected": 0.001, "measured": 0.0042, "verdict": "fail", "limit": True}]
    rows = report_rows(metrics, verdicts, EXPECTED)
    assert rows[0]["verdict"] == "FAIL" and rows[0]["delta"] == "+0.0 %"  # same request count: delta shown
    assert rows[4]["measured"] == "—" and rows[4]["verdict"] == "missing"
    assert rows[1]["delta_pct"] == (600.0 - 514.30) / 514.30 * 100

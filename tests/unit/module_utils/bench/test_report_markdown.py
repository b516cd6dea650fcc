"""markdown_report: title, gate line and verdict, failing requests, extra metrics, chart, AIPerf command."""

from ansible_collections.inferops.dynamo.plugins.module_utils.bench import aiperf, aiperf_judge
from ansible_collections.inferops.dynamo.plugins.module_utils.bench.report import markdown_report, report_rows

EXPECTED = {"gpus": 4, "concurrency": 12, "requests_total": 3541, "requests_passing": 3526, "requests_failing": 15,
            "output_tokens_per_s": 514.30, "output_tokens_per_s_per_gpu": 128.58,
            "output_tokens_per_s_per_user_p50": 57.43, "ttft_p50_ms": 221.70}
CONTEXT = {"cluster": "lab-a", "target": "sglang-agg-gb200", "run_id": "r-42", "date": "2026-11-29",
           "status": "validated", "gpus": 4, "concurrency": 12, "expected": EXPECTED,
           "command": "aiperf profile --concurrency 12 --request-count 24"}


def report(fixtures, case, context, expected_gate):
    out = aiperf_judge.evaluate(aiperf.load_results(str(fixtures / case)), gpus=4, expected=expected_gate)
    rows = report_rows(out["metrics"], out["verdicts"], context.get("expected"))
    return markdown_report(context, rows, out["metrics"], out["failures"], out["verdicts"])


def test_gated_failure_names_metric_and_both_values(aiperf_fixtures):
    md = report(aiperf_fixtures, "partial_failures", CONTEXT,
                {"output_tokens_per_s_per_gpu": 128.58, "ttft_p50_ms": 221.7})
    assert md.startswith("# Benchmark report: sglang-agg-gb200 on lab-a\n")
    assert "`r-42`" in md and "2026-11-29" in md
    assert "**gated**" in md and "**Gate verdict: FAIL**" in md
    assert "`output_tokens_per_s_per_gpu`: measured 80.32, expected 128.58" in md
    assert "| Output tokens/s per GPU | 80.32 | 128.58 | -37.5 % | FAIL |" in md
    # failing requests with the grouped error
    assert "4 of 24 requests failed (16.7 %)." in md
    assert "| 4 | 500 | Internal Server Error | Injected failure (kubesim frontend fault injection) |" in md
    # extra metrics, chart, AIPerf
    for label in ("ITL p50", "Request latency p50", "Request latency p99", "Benchmark duration", "ISL average",
                  "OSL average"):
        assert f"| {label} |" in md
    assert "chart.svg" in md
    assert "AIPerf version 0.13.0" in md and "aiperf profile --concurrency 12 --request-count 24" in md


def test_gated_pass(aiperf_fixtures):
    md = report(aiperf_fixtures, "streaming_trace", {**CONTEXT, "concurrency": 4},
                {"output_tokens_per_s": 250, "ttft_p50_ms": 150})
    assert "**Gate verdict: PASS**: all 2 checks passed." in md
    assert "None: all 24 requests succeeded." in md
    assert "concurrency 4 (published: 12)" in md


def test_reported_only_when_functional_or_no_figures(aiperf_fixtures):
    md = report(aiperf_fixtures, "streaming_trace", {**CONTEXT, "status": "functional-only"}, {})
    assert "**reported only**" in md and "`functional-only`" in md and "Gate verdict" not in md
    md = report(aiperf_fixtures, "streaming_trace", {**CONTEXT, "status": "experimental", "expected": None}, {})
    assert "**reported only**" in md and "no published figures" in md
    md = report(aiperf_fixtures, "streaming_trace", {**CONTEXT, "expected": {**EXPECTED, "comparable": False}}, {})
    assert "**reported only**" in md and "comparable: false" in md


def test_every_request_failed(aiperf_fixtures):
    out = aiperf_judge.evaluate(aiperf.load_results(str(aiperf_fixtures / "all_failed")), gpus=4)
    rows = report_rows(out["metrics"], out["verdicts"], EXPECTED)
    md = markdown_report({**CONTEXT, "gated": True}, rows, out["metrics"], out["failures"], out["verdicts"])
    assert "**Gate verdict: FAIL**: every request failed." in md
    assert "Every request failed." in md and "| 500 |" in md

"""bar_chart_svg: valid standalone SVG, values printed, bar colours follow the verdicts."""

import xml.etree.ElementTree as ET

from ansible_collections.inferops.dynamo.plugins.module_utils.bench_report import (
    COLOURS,
    bar_chart_svg,
    report_rows,
)

NS = "{http://www.w3.org/2000/svg}"
METRICS = {"requests_passing": 20.0, "requests_failing": 4.0, "requests_total": 24.0,
           "output_tokens_per_s": 321.28, "output_tokens_per_s_per_gpu": 80.32,
           "output_tokens_per_s_per_user_p50": 100.72, "ttft_p50_ms": 89.78}
EXPECTED = {"output_tokens_per_s": 514.3, "output_tokens_per_s_per_gpu": 128.58,
            "output_tokens_per_s_per_user_p50": 57.43, "ttft_p50_ms": 221.7}
VERDICTS = [{"metric": "output_tokens_per_s_per_gpu", "expected": 128.58, "measured": 80.32, "verdict": "fail"},
            {"metric": "ttft_p50_ms", "expected": 221.7, "measured": 89.78, "verdict": "pass"}]


def test_parses_and_shows_values_and_colours():
    svg = bar_chart_svg(report_rows(METRICS, VERDICTS, EXPECTED), "gb200 <agg> & co")
    root = ET.fromstring(svg)
    assert root.tag == f"{NS}svg" and root.get("viewBox").startswith("0 0 ")
    texts = [t.text for t in root.iter(f"{NS}text")]
    assert "gb200 <agg> & co" in texts  # escaped in the file, intact once parsed
    assert "80.32 tokens/s/GPU" in texts and "128.58 tokens/s/GPU" in texts
    assert "TTFT p50 (ms): lower is better" in texts
    assert "Output tokens/s per GPU: higher is better" in texts
    assert "Requests passing / failing: higher is better" not in texts  # only the four performance metrics
    bars = {r.find(f"{NS}title").text: r.get("fill") for r in root.iter(f"{NS}rect")
            if r.find(f"{NS}title") is not None}
    assert bars["measured 80.32 tokens/s/GPU"] == COLOURS["FAIL"]
    assert bars["measured 89.78 ms"] == COLOURS["pass"]
    assert bars["expected 221.70 ms"] == COLOURS["expected"]
    assert bars["measured 321.28 tokens/s"] == COLOURS["other"]  # not gated: neither green nor red
    assert len(bars) == 8
    assert "measured: pass" in texts and "measured: FAIL" in texts  # legend


def test_deterministic_and_missing_values():
    rows = report_rows({**METRICS, "ttft_p50_ms": None}, [], None)
    svg = bar_chart_svg(rows, "t")
    assert svg == bar_chart_svg(rows, "t")
    texts = [t.text for t in ET.fromstring(svg).iter(f"{NS}text")]
    assert "not measured" in texts and "no published figure" in texts

"""bench_charts: matplotlib charts as SVG (text kept as text) and PNG (not blank), deterministic."""

import io
import xml.etree.ElementTree as ET

from matplotlib.image import imread

from ansible_collections.inferops.dynamo.plugins.module_utils.bench import aiperf, aiperf_judge
from ansible_collections.inferops.dynamo.plugins.module_utils.bench import charts as bench_charts
from ansible_collections.inferops.dynamo.plugins.module_utils.bench import report as bench_report

NS = "{http://www.w3.org/2000/svg}"


def texts(svg):
    return " ".join(t.text or "" for t in ET.fromstring(svg).iter(f"{NS}text"))


def drawn(png):
    pixels = imread(io.BytesIO(png))
    return pixels.shape[0] > 100 and pixels.shape[1] > 100 and float(pixels.std()) > 0.05


def real(fixtures):
    return aiperf_judge.evaluate(aiperf.load_results(str(fixtures / "goodput_slo")), gpus=4,
                           expected={"output_tokens_per_s": 300, "ttft_p50_ms": 60})


def test_bar_chart(aiperf_fixtures):
    r = real(aiperf_fixtures)
    rows = bench_report.report_rows(r["metrics"], r["verdicts"], {"output_tokens_per_s": 300, "ttft_p50_ms": 60})
    chart = bench_charts.bar_chart(rows, "t <&> run")
    assert "Output tokens/s" in texts(chart["svg"]) and "338.93" in texts(chart["svg"])
    assert drawn(chart["png"])
    assert bench_charts.bar_chart(rows, "t <&> run") == chart  # same inputs, same bytes


def test_cdf_chart_with_objectives_and_a_summary_fallback(aiperf_fixtures):
    r = real(aiperf_fixtures)
    chart = bench_charts.cdf_chart([("c=4", r["requests"]), ("older", [])], {"ttft_ms": 70, "itl_ms": 9.5}, "cdf",
                                   {"older": r["percentiles"]})
    t = texts(chart["svg"])
    assert "c=4 (24 requests)" in t and "older (summary percentiles)" in t and "objective itl_ms <= 9.5" in t
    assert drawn(chart["png"])
    empty = bench_charts.cdf_chart([("c=4", [])], {}, "none")
    assert "no per-request values" in texts(empty["svg"])


def test_sweep_chart_marks_the_boundary_the_published_point_and_the_recommendation():
    points = [{"concurrency": c, "metrics": {"output_tokens_per_s_per_user_p50": u, "output_tokens_per_s_per_gpu": g},
               "slo": {"met": met}} for c, u, g, met in ((8, 51, 99, True), (16, 50.6, 195, True), (32, 33.5, 253, False))]
    chart = bench_charts.sweep_chart(points, "sweep", {"concurrency": 16, "output_tokens_per_s_per_user_p50": 50.97,
                                                       "output_tokens_per_s_per_gpu": 158.95},
                                     {"itl_ms": 22}, {"concurrency": 16, "boundary": 32})
    t = texts(chart["svg"])
    for label in ("c=8", "c=16", "c=32", "published (c=16)", "recommended (c=16)", "SLO boundary: 45.5 tokens/s per user",
                  "SLO boundary between c=16 and c=32",
                  "meets the objectives", "misses them"):
        assert label in t
    assert drawn(chart["png"])
    assert bench_charts.interactivity_floor({"tokens_per_s_per_user": 50, "itl_ms": 25}) == 50

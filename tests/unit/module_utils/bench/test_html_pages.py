"""bench_html: one self-contained page each (inline styles, data: images, nothing fetched), escaped text."""

import re

from ansible_collections.inferops.dynamo.plugins.module_utils.bench import html as bench_html

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c63f8cfc0f01f0005000201e221bc330000000049454e44ae426082")
SUMMARY = {
    "context": {"cluster": "lab <a>", "target": "t", "run_id": "r1", "concurrency": 16, "gpus": 4},
    "metrics": {"output_tokens_per_s": 786.62, "goodput_per_s": 1.97, "requests_failing": 0, "requests_total": 16},
    "rows": [{"key": "output_tokens_per_s", "label": "Output tokens/s", "measured": "786.62", "expected": "635.80",
              "delta": "+23.7 %", "verdict": "pass"}],
    "gate": {"gated": True, "passed": True, "reason": "gated"},
    "cost": {"per_million_output_tokens": 14.13, "per_million_total_tokens": 2.12, "gpu_hour_cost": 10, "gpus": 4,
             "output_tokens_per_s": 786.62, "total_tokens_per_s": 5244.0, "formula": "$ = a / b"},
}
EXTERNAL = re.compile(r'(?:src|href)="(?!data:|#|[\w./-]+\.(?:html|md))', re.I)


def test_run_page_is_self_contained_and_escaped():
    html = bench_html.run_html(SUMMARY, [("Chart", "chart.svg", PNG)])
    assert html.startswith("<!DOCTYPE html>") and "<style>" in html
    assert 'src="data:image/png;base64,' in html and not EXTERNAL.search(html)
    assert "lab &lt;a&gt;" in html and "lab <a>" not in html
    assert 'data-metric="output_tokens_per_s"' in html and "786.62" in html and "$14.13" in html
    assert "http://" not in html and "https://" not in html


def test_index_page_links_each_report():
    scanned = {"runs": [{"cluster": "lab", "target": "t", "run_id": "r1", "rel": "lab/t/r1", "summary": SUMMARY}],
               "sweeps": []}
    html = bench_html.index_html(scanned)
    assert 'href="lab/t/r1/report.html"' in html and "786.62" in html and not EXTERNAL.search(html)

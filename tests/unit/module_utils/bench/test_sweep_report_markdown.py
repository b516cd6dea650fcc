"""sweep_markdown: one row per concurrency in order, failures, the expected operating point."""

from ansible_collections.inferops.dynamo.plugins.module_utils.bench import aiperf, aiperf_judge
from ansible_collections.inferops.dynamo.plugins.module_utils.bench.sweep_report import sweep_markdown


def test_table_rows(aiperf_fixtures):
    ok = aiperf_judge.evaluate(aiperf.load_results(str(aiperf_fixtures / "streaming_trace")), gpus=4)["metrics"]
    bad = aiperf_judge.evaluate(aiperf.load_results(str(aiperf_fixtures / "partial_failures")), gpus=4)["metrics"]
    md = sweep_markdown({"cluster": "lab-a", "target": "sglang-agg-gb200", "run_id": "s1", "date": "2026-11-29"},
                        [{"concurrency": 8, "metrics": bad}, {"concurrency": 4, "metrics": ok}],
                        expected={"concurrency": 12, "output_tokens_per_s_per_gpu": 128.58, "requests_failing": 15,
                                  "requests_total": 3541})
    lines = md.splitlines()
    assert lines[0] == "# Concurrency sweep: sglang-agg-gb200 on lab-a"
    header = next(i for i, line in enumerate(lines) if line.startswith("| Concurrency |"))
    assert lines[header] == "| Concurrency | tok/s | tok/s/GPU | tok/s/user p50 | TTFT p50 (ms) | Failed |"
    assert lines[header + 2] == "| 4 | 312.36 | 78.09 | 100.67 | 90.04 | 0 / 24 |"
    assert lines[header + 3] == "| 8 | 321.28 | 80.32 | 100.72 | 89.78 | 4 / 24 (16.7 %) |"
    assert lines[header + 4].startswith("| expected (c=12) | — | 128.58 |")
    assert "sweep.svg" in md

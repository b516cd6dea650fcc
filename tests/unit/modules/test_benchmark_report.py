"""Run the benchmark_report action for real: one ansible-playbook run into a tmp dir, then check the files."""

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.bench import aiperf, aiperf_judge

REPO = Path(__file__).resolve().parents[3]
EXPECTED = {"gpus": 4, "concurrency": 12, "requests_total": 3541, "requests_passing": 3526, "requests_failing": 15,
            "output_tokens_per_s": 514.30, "output_tokens_per_s_per_gpu": 128.58,
            "output_tokens_per_s_per_user_p50": 57.43, "ttft_p50_ms": 221.70}
GATE = {"output_tokens_per_s_per_gpu": 128.58, "ttft_p50_ms": 221.70}

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  vars:
    context: {cluster: lab-a, target: sglang-agg-gb200, run_id: r1, status: validated, gpus: 4, concurrency: 4,
              command: "aiperf profile --concurrency 4 --request-count 24"}
  tasks:
    - name: First run writes every file
      inferops.dynamo.benchmark_report: &run
        dest: results/lab-a/sglang-agg-gb200/r1
        context: "{{ context }}"
        metrics: "{{ bench.metrics }}"
        failures: "{{ bench.failures }}"
        verdicts: "{{ bench.verdicts }}"
        expected: "{{ expected }}"
        summary_raw: "{{ bench.summary_raw }}"
        percentiles: "{{ bench.percentiles }}"
        requests: "{{ bench.requests }}"
      register: first
    - name: Same inputs again
      inferops.dynamo.benchmark_report: *run
      register: second
    - name: Check mode into a new directory
      inferops.dynamo.benchmark_report:
        dest: "{{ playbook_dir }}/check-only"
        metrics: "{{ bench.metrics }}"
        context: {cluster: lab-a, target: vllm-agg-gb200, run_id: r2, status: functional-only}
      check_mode: true
      register: checked
    - name: Sweep
      inferops.dynamo.benchmark_report:
        mode: sweep
        dest: results/lab-a/sglang-agg-gb200/s1
        context: {cluster: lab-a, target: sglang-agg-gb200, run_id: s1, gpus: 4}
        expected: "{{ expected }}"
        points:
          - {concurrency: 4, metrics: "{{ bench_ok.metrics }}"}
          - {concurrency: 8, metrics: "{{ bench.metrics }}"}
      register: sweep
    - name: A later run with objectives, a price and a comparison with the first run
      inferops.dynamo.benchmark_report:
        dest: results/lab-a/sglang-agg-gb200/r2
        context: "{{ context | combine({'run_id': 'r2'}) }}"
        metrics: "{{ good.metrics }}"
        failures: "{{ good.failures }}"
        verdicts: "{{ good.verdicts }}"
        percentiles: "{{ good.percentiles }}"
        requests: "{{ good.requests }}"
        expected: "{{ expected }}"
        slo: {ttft_ms: 70, itl_ms: 9.5}
        gpu_hour_cost: 10
        compare: previous
        tolerance: 0.10
      register: judged
    - name: Refuse a bad objective
      inferops.dynamo.benchmark_report:
        dest: results/lab-a/sglang-agg-gb200/r3
        metrics: "{{ good.metrics }}"
        slo: {ttft: 1}
      register: bad_slo
      ignore_errors: true
    - name: Index of every run
      inferops.dynamo.benchmark_report:
        dest: results
        mode: index
      register: index
    - name: Run mode without metrics
      inferops.dynamo.benchmark_report:
        dest: results/nothing
      register: refused
      ignore_errors: true
    - name: Save the results for the test
      ansible.builtin.copy:
        dest: "{{ playbook_dir }}/results.json"
        content: "{{ {'first': first, 'second': second, 'checked': checked, 'sweep': sweep,
                      'refused': refused, 'judged': judged, 'bad_slo': bad_slo, 'index': index} | to_json }}"
"""


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("benchmark_report")
    fixtures = REPO / "tests" / "fixtures" / "aiperf"
    bench = aiperf_judge.evaluate(aiperf.load_results(str(fixtures / "partial_failures")), gpus=4, expected=GATE)
    bench_ok = aiperf_judge.evaluate(aiperf.load_results(str(fixtures / "streaming_trace")), gpus=4, expected=GATE)
    good = aiperf_judge.evaluate(aiperf.load_results(str(fixtures / "goodput_slo")), gpus=4, expected=GATE)
    (tmp / "vars.json").write_text(json.dumps({"bench": bench, "bench_ok": bench_ok, "good": good,
                                               "expected": EXPECTED}))
    (tmp / "play.yml").write_text(PLAYBOOK)
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1"}
    proc = subprocess.run([str(Path(sys.executable).with_name("ansible-playbook")), str(tmp / "play.yml"),
                           "-e", f"@{tmp / 'vars.json'}"], capture_output=True, text=True, env=env, cwd=REPO,
                          check=False, timeout=180)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return tmp, json.loads((tmp / "results.json").read_text())


def test_run_writes_files_under_dest_relative_to_playbook(played):
    tmp, res = played
    run_dir = tmp / "results" / "lab-a" / "sglang-agg-gb200" / "r1"
    first = res["first"]
    assert first["changed"] is True
    assert sorted(Path(p).name for p in first["files"]) == ["cdf.svg", "chart.svg", "profile_export_aiperf.json",
                                                             "report.html", "report.md", "requests.csv",
                                                             "summary.json"]
    assert first["report"] == str(run_dir / "report.md") and first["chart"] == str(run_dir / "chart.svg")
    assert all(Path(p).is_file() for p in first["files"])
    raw = json.loads((run_dir / "profile_export_aiperf.json").read_text())
    assert raw["aiperf_version"] == "0.13.0" and "output_token_throughput" in raw


def test_report_summary_chart_content(played):
    tmp, res = played
    run_dir = tmp / "results" / "lab-a" / "sglang-agg-gb200" / "r1"
    md = (run_dir / "report.md").read_text()
    assert md.startswith("# Benchmark report: sglang-agg-gb200 on lab-a")
    assert "**Gate verdict: FAIL**" in md and "`output_tokens_per_s_per_gpu`: measured 80.32, expected 128.58" in md
    assert "Injected failure (kubesim frontend fault injection)" in md
    assert "aiperf profile --concurrency 4 --request-count 24" in md and "AIPerf version 0.13.0" in md
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["context"]["date"] == "2026-11-29"  # from the AIPerf start time, not the clock
    assert summary["context"]["gated"] is True and summary["expected"]["ttft_p50_ms"] == 221.7
    assert summary["metrics"]["requests_failing"] == 4 and len(summary["verdicts"]) == 2
    assert summary["gate"] == res["first"]["gate"]
    assert res["first"]["gate"]["passed"] is False
    assert res["first"]["gate"]["failed_metrics"] == ["output_tokens_per_s_per_gpu"]
    root = ET.fromstring((run_dir / "chart.svg").read_text())  # matplotlib's SVG, text kept as text
    texts = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert "80.32" in texts and "128.58" in texts and "Output tokens/s per GPU" in texts
    assert summary["schema"] == "inferops.dynamo/benchmark-summary" and summary["schema_version"] == 2
    assert summary["percentiles"]["ttft_ms"]["p99"] >= summary["percentiles"]["ttft_ms"]["p50"]
    assert summary["requests"] == {"count": 24, "file": "requests.csv"}
    assert (run_dir / "requests.csv").read_text().splitlines()[0] == (
        "ttft_ms,itl_ms,e2e_ms,tokens_per_s_per_user,osl,good,error")
    html = (run_dir / "report.html").read_text()
    assert html.count('src="data:image/png;base64,') == 2 and "80.32" in html
    table = res["first"]["table"]
    assert table[0].split() == ["Metric", "Measured", "Expected", "Delta", "Verdict"]
    assert any(line.startswith("Output tokens/s per GPU") and line.endswith("FAIL") for line in table)


def test_unchanged_second_run(played):
    _, res = played
    assert res["second"]["changed"] is False and res["second"]["changed_files"] == []
    assert res["second"]["files"] == res["first"]["files"]


def test_check_mode_writes_nothing(played):
    tmp, res = played
    assert res["checked"]["changed"] is True and len(res["checked"]["changed_files"]) == 5
    assert not (tmp / "check-only").exists()
    assert any("not gated" in line for line in res["checked"]["table"])


def test_sweep_files(played):
    tmp, res = played
    sweep_dir = tmp / "results" / "lab-a" / "sglang-agg-gb200" / "s1"
    assert res["sweep"]["changed"] is True
    assert sorted(Path(p).name for p in res["sweep"]["files"]) == ["sweep-cdf.svg", "sweep.html", "sweep.json",
                                                                    "sweep.md", "sweep.svg"]
    assert res["sweep"]["chart"] == str(sweep_dir / "sweep.svg")
    md = (sweep_dir / "sweep.md").read_text()
    assert "| 4 | 312.36 | 78.09 | 100.67 | 90.04 | 0 / 24 |" in md and "expected (c=12)" in md
    texts = [t.text for t in ET.fromstring((sweep_dir / "sweep.svg").read_text()).iter(
        "{http://www.w3.org/2000/svg}text")]
    assert "c=4" in texts and "c=8" in texts and "published (c=12)" in texts
    data = json.loads((sweep_dir / "sweep.json").read_text())
    assert [p["concurrency"] for p in data["points"]] == [4, 8]
    assert data["y_metric"] == "output_tokens_per_s_per_gpu"


def test_run_without_metrics_fails(played):
    _, res = played
    assert res["refused"]["failed"] is True and "needs metrics" in res["refused"]["msg"]


def test_objectives_cost_and_comparison(played):
    tmp, res = played
    judged = res["judged"]
    slo = judged["slo"]
    # the real AIPerf run behind the fixture judged 3 of its 24 requests good against the same objectives
    assert slo["good_fraction"] == 0.125 and slo["met"] is False and slo["failed"] == ["ttft_ms", "itl_ms"]
    assert slo["goodput_arg"] == "time_to_first_token:70 inter_token_latency:9.5"
    cost = judged["cost"]
    tps = judged["cost"]["output_tokens_per_s"]
    assert cost["per_million_output_tokens"] == pytest.approx(10 * 4 / (tps * 3600) * 1e6)
    comp = judged["comparison"]
    assert comp["reference"]["run_id"] == "r1" and comp["tolerance"] == 0.10
    assert {r["metric"] for r in comp["rows"]} >= {"output_tokens_per_s", "ttft_p50_ms"}
    md = (tmp / "results" / "lab-a" / "sglang-agg-gb200" / "r2" / "report.md").read_text()
    assert "## Service-level objectives (goodput)" in md and "## Cost per million tokens" in md
    assert "## Compared with an earlier run" in md and "`sglang-agg-gb200`" in md
    assert any(line.startswith("Goodput 1.06 requests/s; 12.5 % of requests met every objective")
               for line in judged["table"])


def test_a_bad_objective_is_refused_naming_the_valid_keys(played):
    _, res = played
    assert res["bad_slo"]["failed"] is True
    assert "unknown objective 'ttft'" in res["bad_slo"]["msg"] and "ttft_ms" in res["bad_slo"]["msg"]


def test_index_lists_every_run_newest_first(played):
    tmp, res = played
    assert res["index"]["runs"] == 2 and res["index"]["sweeps"] == 1
    md = (tmp / "results" / "index.md").read_text()
    rows = [line for line in md.splitlines() if line.startswith("| ") and "lab-a" in line]
    assert "[r2](lab-a/sglang-agg-gb200/r2/report.md)" in rows[0] and "[r1]" in rows[1]
    assert "missed" in rows[0] and "$" in rows[0]
    html = (tmp / "results" / "index.html").read_text()
    assert 'href="lab-a/sglang-agg-gb200/r2/report.html"' in html

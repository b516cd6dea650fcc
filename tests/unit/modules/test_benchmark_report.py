"""Run the benchmark_report action for real: one ansible-playbook run into a tmp dir, then check the files."""

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils import aiperf

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
    - name: Run mode without metrics
      inferops.dynamo.benchmark_report:
        dest: results/nothing
      register: refused
      ignore_errors: true
    - name: Save the results for the test
      ansible.builtin.copy:
        dest: "{{ playbook_dir }}/results.json"
        content: "{{ {'first': first, 'second': second, 'checked': checked, 'sweep': sweep,
                      'refused': refused} | to_json }}"
"""


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("benchmark_report")
    fixtures = REPO / "tests" / "fixtures" / "aiperf"
    bench = aiperf.evaluate(aiperf.load_results(str(fixtures / "partial_failures")), gpus=4, expected=GATE)
    bench_ok = aiperf.evaluate(aiperf.load_results(str(fixtures / "streaming_trace")), gpus=4, expected=GATE)
    (tmp / "vars.json").write_text(json.dumps({"bench": bench, "bench_ok": bench_ok, "expected": EXPECTED}))
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
    assert sorted(Path(p).name for p in first["files"]) == ["chart.svg", "profile_export_aiperf.json",
                                                             "report.md", "summary.json"]
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
    root = ET.fromstring((run_dir / "chart.svg").read_text())
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "80.32 tokens/s/GPU" in texts and "128.58 tokens/s/GPU" in texts
    table = res["first"]["table"]
    assert table[0].split() == ["Metric", "Measured", "Expected", "Delta", "Verdict"]
    assert any(line.startswith("Output tokens/s per GPU") and line.endswith("FAIL") for line in table)


def test_unchanged_second_run(played):
    _, res = played
    assert res["second"]["changed"] is False and res["second"]["changed_files"] == []
    assert res["second"]["files"] == res["first"]["files"]


def test_check_mode_writes_nothing(played):
    tmp, res = played
    assert res["checked"]["changed"] is True and len(res["checked"]["changed_files"]) == 3
    assert not (tmp / "check-only").exists()
    assert any("not gated" in line for line in res["checked"]["table"])


def test_sweep_files(played):
    tmp, res = played
    sweep_dir = tmp / "results" / "lab-a" / "sglang-agg-gb200" / "s1"
    assert res["sweep"]["changed"] is True
    assert sorted(Path(p).name for p in res["sweep"]["files"]) == ["sweep.json", "sweep.md", "sweep.svg"]
    assert res["sweep"]["chart"] == str(sweep_dir / "sweep.svg")
    md = (sweep_dir / "sweep.md").read_text()
    assert "| 4 | 312.36 | 78.09 | 100.67 | 90.04 | 0 / 24 |" in md and "expected (c=12)" in md
    texts = [t.text for t in ET.fromstring((sweep_dir / "sweep.svg").read_text()).iter(
        "{http://www.w3.org/2000/svg}text")]
    assert "c=4" in texts and "c=8" in texts and "expected (c=12)" in texts
    data = json.loads((sweep_dir / "sweep.json").read_text())
    assert [p["concurrency"] for p in data["points"]] == [4, 8]
    assert data["y_metric"] == "output_tokens_per_s_per_gpu"


def test_run_without_metrics_fails(played):
    _, res = played
    assert res["refused"]["failed"] is True and "needs metrics" in res["refused"]["msg"]

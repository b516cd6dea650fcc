"""playbooks/benchmark.yml on the rehearsal cluster: the real AIPerf in the Job, results through the
pod log, reports and charts, the gate, sweeps and the time-budget refusal."""

import json
from pathlib import Path

import pytest
from deploy_helpers import items

TARGET = ["-e", "sku=gb300", "-e", "mode=agg"]
SHORT = ["-e", "benchmark_request_count=16"]


def run_dirs(results: Path, target="sglang-agg-gb300") -> list[Path]:
    base = results / "rehearsal" / target
    return sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith("sweep")) if base.exists() else []


@pytest.fixture
def deployed(deploy_env, tmp_path):
    env = deploy_env(prefix="b", benchmark_results_dir=str(tmp_path / "results"))
    run = env.run("deploy.yml", *TARGET)
    assert run.rc == 0, run.output[-3000:]
    return env, tmp_path / "results"


def test_sweep_writes_reports_charts_and_gates_only_the_published_point(deployed):
    env, results = deployed
    # A wide tolerance: this test is about the reports; the gate has a test of its own below.
    run = env.run("benchmark.yml", *TARGET, *SHORT, "-e", '{"benchmark_concurrency": [8, 16]}',
                  "-e", "benchmark_tolerance=0.5", timeout=900)
    assert run.rc == 0, run.output[-4000:]
    assert "Output tokens/s per user p50" in run.stdout  # the printed table
    runs = run_dirs(results)
    assert [p.name.rsplit("-c", 1)[1] for p in runs] == ["8", "16"]
    for run_dir in runs:
        for name in ("profile_export_aiperf.json", "summary.json", "report.md", "chart.svg"):
            assert (run_dir / name).stat().st_size > 0, f"{run_dir}/{name}"
        raw = json.loads((run_dir / "profile_export_aiperf.json").read_text())
        assert raw["aiperf_version"]  # the real AIPerf's own summary travelled through the pod log
    c8, c16 = (json.loads((p / "summary.json").read_text()) for p in runs)
    assert c16["metrics"]["requests_passing"] == 16 and c16["metrics"]["requests_failing"] == 0
    assert c16["gate"]["gated"] is True and c16["gate"]["passed"] is True
    assert c8["gate"]["gated"] is False  # not the published operating point: reported, not gated
    sweep = next((results / "rehearsal" / "sglang-agg-gb300").glob("sweep-*"))
    assert {p.name for p in sweep.iterdir()} >= {"sweep.md", "sweep.svg", "sweep.json"}
    assert "sweep.svg" in run.stdout
    # the benchmark Job ran on the cluster and its artifacts stayed on the PVC
    jobs = items(env.dyn, "batch/v1", "Job", env.namespace)
    assert "muse-spark-aiperf" in [j["metadata"]["name"] for j in jobs]


def test_a_slower_frontend_fails_the_gate_naming_the_metric_and_both_values(deployed):
    env, results = deployed
    env.cluster.fault("frontend-speed", factor=0.5)
    run = env.run("benchmark.yml", *TARGET, *SHORT, timeout=900)
    assert run.rc != 0
    assert "Benchmark gate failed for sglang-agg-gb300" in run.output
    assert "output_tokens_per_s_per_user_p50 measured" in run.output
    assert "vs expected 50.97" in run.output
    summary = json.loads((run_dirs(results)[-1] / "summary.json").read_text())
    assert summary["gate"]["passed"] is False


def test_a_run_that_cannot_finish_in_the_budget_is_refused_before_the_job(deploy_env, tmp_path):
    env = deploy_env(prefix="bb", benchmark_results_dir=str(tmp_path / "results"))
    run = env.run("benchmark.yml", *TARGET, "-e", "benchmark_request_count=3541", "-e", "benchmark_time_budget=1200")
    assert run.rc != 0
    assert "benchmark_time_budget=1200" in run.output and "requests fit" in run.output
    assert items(env.dyn, "batch/v1", "Job", env.namespace) == []

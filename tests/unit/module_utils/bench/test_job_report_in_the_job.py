"""aiperf_job_report: run as the Job runs it (python3 - <<'PY' inside sh) on a real AIPerf artifact directory."""

import hashlib
import shutil
import subprocess
import sys

from ansible_collections.inferops.dynamo.plugins.module_utils.bench import aiperf, job_report
from ansible_collections.inferops.dynamo.plugins.module_utils.render import objects as render


def test_the_script_prints_run_facts_and_the_same_rows_the_controller_derives(aiperf_fixtures, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(aiperf_fixtures / "goodput_slo", run_dir / "profile")
    trace = aiperf_fixtures / "goodput_slo" / "trace.jsonl"
    shutil.copy(trace, run_dir / "trace.jsonl")
    script = (f'STARTED=2026-12-01T08:00:00Z RUN_DIR="{run_dir}" AIPERF_RC=0 {sys.executable} - <<\'PY\'\n'
              f"{render._job_report_script()}\nPY\n")
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True,
                         env={"TRACE_FILE": str(trace), "PATH": "/usr/bin:/bin"}).stdout
    loaded = aiperf.load_results(content=out + "=== AIPERF SUMMARY BEGIN ===\n"
                                 + (run_dir / "profile" / "profile_export_aiperf.json").read_text()
                                 + "\n=== AIPERF SUMMARY END ===\n")
    info = loaded["run_info"]
    digest = hashlib.sha256(trace.read_bytes()).hexdigest()
    assert info["trace_sha256"] == digest and info["replayed_sha256"] == digest
    assert info["trace_lines"] == len(trace.read_text().splitlines()) and info["aiperf_exit_code"] == 0
    assert info["started"] == "2026-12-01T08:00:00Z" and info["finished"].endswith("Z")
    from_dir = aiperf.load_results(str(run_dir / "profile"))["requests"]
    assert len(loaded["requests"]) == len(from_dir) == 24
    for printed, derived in zip(loaded["requests"], from_dir, strict=True):
        assert printed["good"] == derived["good"] and abs(printed["itl_ms"] - derived["itl_ms"]) < 1e-3
    assert sum(r["good"] for r in loaded["requests"]) == 3  # AIPerf's own per-request verdicts


def test_failed_requests_and_warmup():
    records = [{"metadata": {"benchmark_phase": "warmup"}, "metrics": {"time_to_first_token": {"value": 1}}},
               {"metadata": {}, "metrics": {"error_isl": {"value": 10}}, "error": {"code": 503, "type": "x"}},
               {"metadata": {}, "metrics": {}, "error": {"type": "ClientConnectorError"}}]
    rows = job_report.request_rows(records)
    assert [r["error"] for r in rows] == ["503", "ClientConnectorError"] and rows[0]["ttft_ms"] is None
    assert job_report.rows_csv(rows).splitlines()[1] == ",,,,,,503"

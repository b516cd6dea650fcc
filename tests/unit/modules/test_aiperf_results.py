"""Run the aiperf_results module for real: in-process with patch_module_args, and once through `ansible`."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.inferops.dynamo.plugins.modules import aiperf_results

REPO = Path(__file__).resolve().parents[3]


def run(capsys, **args):
    with patch_module_args(args), pytest.raises(SystemExit) as exc:
        aiperf_results.main()
    out = json.loads(capsys.readouterr().out)
    return exc.value.code, out


def test_streaming_run_passes_report(capsys, aiperf_fixtures):
    rc, out = run(capsys, src=str(aiperf_fixtures / "streaming_trace"), gpus=4,
                  expected={"output_tokens_per_s": 250, "ttft_p50_ms": 150}, max_failed_ratio=0.0)
    assert rc == 0 and out["changed"] is False and out["passed"] is True
    assert out["source"] == "json" and out["metrics"]["schema_version"] == "1.4"
    assert out["metrics"]["output_tokens_per_s_per_gpu"] == pytest.approx(out["metrics"]["output_tokens_per_s"] / 4)
    assert out["summary_raw"]["aiperf_version"] == "0.13.0"
    assert [v["verdict"] for v in out["verdicts"]] == ["pass", "pass", "pass"]


def test_regression_reported_but_not_failed_by_default(capsys, aiperf_fixtures):
    rc, out = run(capsys, src=str(aiperf_fixtures / "partial_failures"), expected={"ttft_p50_ms": 20})
    assert rc == 0 and out["passed"] is False and "failed" not in out
    assert out["failures"]["count"] == 4
    assert out["failures"]["errors"] == [{"code": 500, "type": "Internal Server Error",
                                          "message": "Injected failure (kubesim frontend fault injection)",
                                          "count": 4}]


def test_fail_on_regression(capsys, aiperf_fixtures):
    rc, out = run(capsys, src=str(aiperf_fixtures / "partial_failures"), expected={"ttft_p50_ms": 20},
                  fail_on_regression=True)
    assert rc == 1 and out["failed"] is True
    assert "regression: ttft_p50_ms=" in out["msg"] and out["verdicts"][0]["verdict"] == "fail"


def test_all_failed_from_log_content(capsys, aiperf_fixtures):
    records = (aiperf_fixtures / "all_failed" / "profile_export.jsonl").read_text()
    log = f"aiperf ...\n=== AIPERF RECORDS BEGIN ===\n{records}=== AIPERF RECORDS END ===\n"
    rc, out = run(capsys, content=log, fail_on_regression=True)
    assert rc == 1 and "every request failed" in out["msg"]
    assert out["all_failed"] is True and out["source"] == "jsonl" and out["failures"]["ratio"] == 1.0


def test_non_streaming_auto_named_dir_check_mode(capsys, aiperf_fixtures):
    rc, out = run(capsys, src=str(aiperf_fixtures / "non_streaming"), _ansible_check_mode=True,
                  expected={"ttft_p50_ms": 100})
    assert rc == 0 and out["changed"] is False
    assert out["verdicts"][0]["verdict"] == "missing" and out["passed"] is False
    assert out["origin"].endswith("-openai-chat-concurrency4")


def test_nothing_found_is_actionable(capsys, tmp_path):
    rc, out = run(capsys, src=str(tmp_path))
    assert rc == 1 and f"no AIPerf summary found in {tmp_path}" in out["msg"]


def test_src_and_content_are_exclusive(capsys, aiperf_fixtures):
    rc, out = run(capsys, src=str(aiperf_fixtures), content="x")
    assert rc == 1 and "mutually exclusive" in out["msg"]


@pytest.mark.slow
@pytest.mark.parametrize("in_process", [True, False], ids=["controller-worker", "module-process"])
def test_ansible_adhoc_and_docs(aiperf_fixtures, noting_interpreter, in_process):
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_LOAD_CALLBACK_PLUGINS="1",
               ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json", ANSIBLE_INVENTORY_UNPARSED_WARNING="false",
               ANSIBLE_LOCALHOST_WARNING="false")
    bindir = Path(sys.executable).parent
    proc = subprocess.run([str(bindir / "ansible"), "localhost", "-i", "localhost,", "-c", "local",
                           "-m", "inferops.dynamo.aiperf_results",
                           "-a", f"src={aiperf_fixtures / 'partial_failures'} gpus=2",
                           "-e", f"inferops_dynamo_in_process={in_process}",
                           "-e", f"ansible_python_interpreter={noting_interpreter[0]}"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    result = json.loads(proc.stdout)["plays"][0]["tasks"][0]["hosts"]["localhost"]
    assert result["metrics"]["requests_failing"] == 4 and result["changed"] is False
    started = noting_interpreter[1].read_text() if noting_interpreter[1].exists() else ""
    assert ("AnsiballZ_aiperf_results.py" in started) is (not in_process), started
    doc = subprocess.run([str(bindir / "ansible-doc"), "--json", "inferops.dynamo.aiperf_results"], cwd=REPO,
                         env=env, capture_output=True, text=True, timeout=120, check=False)
    assert doc.returncode == 0, doc.stderr
    spec = json.loads(doc.stdout)["inferops.dynamo.aiperf_results"]
    assert set(spec["doc"]["options"]) == {"src", "content", "gpus", "expected", "tolerance", "tolerances",
                                           "max_failed_ratio", "fail_on_regression"}
    assert {"metrics", "failures", "verdicts", "passed", "all_failed", "summary_raw", "source"} <= set(spec["return"])

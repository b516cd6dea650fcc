import shutil

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.bench.aiperf import AIPerfResultsError, locate


def test_artifact_dir_with_summary(aiperf_fixtures):
    found = locate(str(aiperf_fixtures / "partial_failures"))
    assert found["kind"] == "dir"
    assert found["summary"].endswith("partial_failures/profile_export_aiperf.json")
    assert found["csv"].endswith("profile_export_aiperf.csv")
    assert found["records"].endswith("profile_export.jsonl")


def test_auto_named_run_subdirectory(aiperf_fixtures):
    found = locate(str(aiperf_fixtures / "non_streaming"))
    assert found["run_dir"].endswith("meta-models_Muse-Spark-Open-816B-A42B-NVFP4-openai-chat-concurrency4")
    assert found["summary"].startswith(found["run_dir"])


def test_phases_profiling_when_top_level_summary_missing(aiperf_fixtures, tmp_path):
    shutil.copytree(aiperf_fixtures / "streaming_trace" / "phases", tmp_path / "phases")
    found = locate(str(tmp_path))
    assert found["summary"] == str(tmp_path / "phases" / "profiling" / "profile_export_aiperf.json")


def test_records_only_when_everything_failed(aiperf_fixtures):
    found = locate(str(aiperf_fixtures / "all_failed"))
    assert found["summary"] is None and found["csv"] is None
    assert found["records"].endswith("profile_export.jsonl")


def test_single_files_and_logs(aiperf_fixtures, tmp_path):
    summary = aiperf_fixtures / "streaming_trace" / "profile_export_aiperf.json"
    assert locate(str(summary))["summary"] == str(summary)
    log = tmp_path / "job.log"
    log.write_text("hello\n")
    assert locate(str(log))["kind"] == "log"


def test_empty_dir_names_what_was_searched(tmp_path):
    with pytest.raises(AIPerfResultsError) as exc:
        locate(str(tmp_path))
    msg = str(exc.value)
    assert f"no AIPerf summary found in {tmp_path}" in msg
    assert "profile_export_aiperf.json" in msg and "phases" in msg


def test_missing_path(tmp_path):
    with pytest.raises(AIPerfResultsError, match="does not exist"):
        locate(str(tmp_path / "nope"))

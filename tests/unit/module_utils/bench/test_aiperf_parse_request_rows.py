"""parse_request_rows / load_results: the compact per-request rows, from a log or an artifact directory."""

from ansible_collections.inferops.dynamo.plugins.module_utils.bench import aiperf, aiperf_judge


def test_rows_from_csv_text():
    rows = aiperf.parse_request_rows("ttft_ms,itl_ms,e2e_ms,tokens_per_s_per_user,osl,good,error\n"
                                     "180.5,19.6,8000,51,400,1,\n,,,,,,500\n")
    assert rows == [{"ttft_ms": 180.5, "itl_ms": 19.6, "e2e_ms": 8000.0, "tokens_per_s_per_user": 51.0,
                     "osl": 400.0, "good": 1.0, "error": None},
                    {"ttft_ms": None, "itl_ms": None, "e2e_ms": None, "tokens_per_s_per_user": None, "osl": None,
                     "good": None, "error": "500"}]


def test_rows_from_an_artifact_directory_and_from_a_log(aiperf_fixtures):
    from_dir = aiperf.load_results(str(aiperf_fixtures / "partial_failures"))
    assert len(from_dir["requests"]) == 24
    assert sum(1 for r in from_dir["requests"] if r["error"] == "500") == 4
    log = ("noise\n=== AIPERF REQUESTS BEGIN ===\nttft_ms,itl_ms,e2e_ms,tokens_per_s_per_user,osl,good,error\n"
           "1,2,3,4,5,,\n=== AIPERF REQUESTS END ===\n=== INFEROPS RUN BEGIN ===\n{\"trace_sha256\": \"ab\"}\n"
           "=== INFEROPS RUN END ===\n=== AIPERF SUMMARY BEGIN ===\n"
           + (aiperf_fixtures / "goodput_slo" / "profile_export_aiperf.json").read_text()
           + "\n=== AIPERF SUMMARY END ===\n")
    from_log = aiperf_judge.evaluate(aiperf.load_results(content=log), gpus=4)
    assert from_log["requests"][0]["ttft_ms"] == 1.0 and from_log["run_info"] == {"trace_sha256": "ab"}
    assert from_log["metrics"]["goodput_per_s"] > 0 and from_log["metrics"]["good_request_fraction"] == 0.125
    assert from_log["percentiles"]["itl_ms"]["p90"] > 0


def test_rows_and_run_info_alone_are_not_results():
    import pytest
    with pytest.raises(aiperf.AIPerfResultsError, match="no AIPerf summary found"):
        aiperf.load_results(content="=== INFEROPS RUN BEGIN ===\n{}\n=== INFEROPS RUN END ===\n")

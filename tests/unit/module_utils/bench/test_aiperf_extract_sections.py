from ansible_collections.inferops.dynamo.plugins.module_utils.bench.aiperf import extract_sections

LOG = """aiperf starting
=== AIPERF SUMMARY BEGIN ===
{"schema_version": "1.4"}
=== AIPERF SUMMARY END ===
=== AIPERF CSV BEGIN ===\r
Metric,Value\r
Request Count,3.00\r
=== AIPERF CSV END ===
done
"""


def test_blocks_between_markers():
    sections = extract_sections(LOG)
    assert sections["summary"] == '{"schema_version": "1.4"}'
    assert sections["csv"] == "Metric,Value\nRequest Count,3.00"
    assert sections["records"] is None


def test_last_block_wins_and_unterminated_block_ignored():
    text = LOG + "=== AIPERF SUMMARY BEGIN ===\n{\"x\": 2}\n=== AIPERF SUMMARY END ===\n" \
        + "=== AIPERF RECORDS BEGIN ===\n{}\n"
    sections = extract_sections(text)
    assert sections["summary"] == '{"x": 2}'
    assert sections["records"] is None


def test_no_markers():
    assert extract_sections("nothing here") == {"summary": None, "csv": None, "records": None,
                                                 "requests": None, "run": None}


def test_the_jobs_own_blocks():
    text = ("=== INFEROPS RUN BEGIN ===\n{\"trace_sha256\": \"ab\"}\n=== INFEROPS RUN END ===\n"
            "=== AIPERF REQUESTS BEGIN ===\nttft_ms,itl_ms\n1,2\n=== AIPERF REQUESTS END ===\n")
    sections = extract_sections(text)
    assert sections["run"] == '{"trace_sha256": "ab"}'
    assert sections["requests"] == "ttft_ms,itl_ms\n1,2"

"""report.md's server-side section: the servers' own figures over the run, or why they could not be read."""

from ansible_collections.inferops.dynamo.plugins.module_utils.bench import report as br

SERVER = {"window_s": 312, "target": {"requests_per_s": 0.7, "queue_avg": 0.4, "queue_max": 6.0},
          "pods": {"w-0": {"kv_usage_max": 0.31, "prefix_hit_rate": 0.875}, "w-1": {"kv_usage_max": 0.2,
                                                                                    "prefix_hit_rate": None}}}


def _report(server):
    return br.markdown_report({"cluster": "lab", "target": "t"}, [], {}, {}, [], {"server": server})


def test_server_figures_follow_the_client_side_ones_per_worker_pod():
    text = _report(SERVER)
    section = text[text.index("## Server-side figures (Prometheus)"):]
    assert "over the run's 312 s" in section and "AIPerf measured as a client" in section
    assert "| Requests per second | 0.7 |" in section and "| Queued requests, mean / peak | 0.4 / 6.00 |" in section
    assert "`w-0` | 31.0 % | 87.5 %" in section
    # a figure a server does not export is unknown, not zero
    assert "`w-1` | 20.0 % | —" in section
    assert text.index("## Server-side figures") > text.index("## Failing requests")


def test_an_unreadable_prometheus_is_said_and_an_unasked_one_adds_nothing():
    assert "Not read: Prometheus at http://p:9090 did not answer" in _report(
        {"error": "Prometheus at http://p:9090 did not answer /api/v1/query: refused"})
    assert "Server-side" not in _report(None)

"""prometheus_query.planner_decision: the planner's enum states and asked replicas, from its own metrics."""

from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import prometheus_query as pq


def test_each_loops_state_and_the_asked_replicas_are_read_from_the_namespace(monkeypatch):
    seen = []

    def query(url, promql, at=None, timeout=10.0):
        seen.append(promql)
        if promql.startswith("dynamo_planner_load_scaling_decision"):
            return [{"metric": {"dynamo_planner_load_scaling_decision": "scale_up"}, "value": [0, "1"]}]
        if promql.startswith("dynamo_planner_throughput_scaling_decision"):
            return [{"metric": {"dynamo_planner_throughput_scaling_decision": "model_not_ready"}, "value": [0, "1"]}]
        if "predicted_num_decode" in promql:
            return [{"metric": {}, "value": [0, "2"]}]
        return [{"metric": {}, "value": [0, "0"]}]     # a role never asked for

    monkeypatch.setattr(pq, "query", query)
    assert pq.planner_decision("http://p", "muse") == {"load": "scale_up", "throughput": "model_not_ready",
                                                       "predicted": {"decode": 2}}
    assert all('namespace="muse"' in q for q in seen)


def test_no_planner_scraped_is_none(monkeypatch):
    monkeypatch.setattr(pq, "query", lambda *a, **k: [])
    assert pq.planner_decision("http://p", "muse") is None

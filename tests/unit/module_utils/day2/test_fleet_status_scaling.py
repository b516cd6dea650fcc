"""fleet_status for a target the planner scales: ready against planned replicas per scaled component (from the
operator's scaling adapters), and the planner's last decision (from its own metrics, via prometheus_status)."""

import copy

from test_fleet_status import dgd, live, reads, revision

from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import fleet_status as fs


def scaled_dgd():
    obj = dgd()
    worker = obj["spec"]["components"][0]
    worker.pop("replicas")
    worker["scalingAdapter"] = {}
    return obj


def adapter(component, replicas, dgd_name="d"):
    return {"metadata": {"name": f"{dgd_name}-{component.lower()}"},
            "spec": {"dgdRef": {"name": dgd_name, "componentName": component}, "replicas": replicas}}


def test_a_scaled_component_shows_ready_against_what_its_adapter_asks_and_is_not_drift():
    applied = scaled_dgd()
    now = live(applied)
    now["spec"]["components"][0]["replicas"] = 2          # written by the operator from the adapter
    r = reads([revision(1, applied)], [now])
    r[fs.ADAPTERS_READ] = {"resources": [adapter("Worker", 2), adapter("Worker", 5, dgd_name="other")]}
    (row,) = fs.target_rows("c1", "ns", r, "inferops.dynamo")
    assert row["scaling"] == [{"component": "Worker", "current": 1, "planned": 2}]
    assert row["drift"] == []
    header, _, line = fs.table_lines([row])[:3]
    assert "Scaling (ready/planned)" in header and "Worker 1/2" in line


def test_before_the_operator_made_the_adapter_the_plan_is_unknown_and_fixed_targets_have_no_column():
    r = reads([revision(1, scaled_dgd())], [live(scaled_dgd())])
    (row,) = fs.target_rows("c1", "ns", r, "inferops.dynamo")
    assert row["scaling"] == [{"component": "Worker", "current": 1, "planned": None}]
    assert "Worker 1/?" in fs.table_lines([row])[2]
    (fixed,) = fs.target_rows("c1", "ns", reads([revision(1, dgd())], [live(dgd())]), "inferops.dynamo")
    assert fixed["scaling"] == [] and "Scaling" not in fs.table_lines([fixed])[0]


def test_the_planners_last_decision_joins_the_scaling_cell():
    r = reads([revision(1, scaled_dgd())], [live(scaled_dgd())])
    r[fs.ADAPTERS_READ] = {"resources": [adapter("Worker", 2)]}
    (row,) = fs.target_rows("c1", "ns", r, "inferops.dynamo")
    decision = {"load": "scale_up", "throughput": "model_not_ready", "predicted": {"decode": 2}}
    (with_planner,) = fs.with_live([row], {row["target"]: {"figures": None, "alerts": [], "error": "",
                                                           "planner": decision}})
    assert ("Worker 1/2; planner: load scale_up, throughput model_not_ready (asked decode 2)"
            in fs.table_lines([with_planner])[2])
    (silent,) = fs.with_live([copy.deepcopy(row)], {row["target"]: {"figures": None, "alerts": [], "error": "",
                                                                     "planner": None}})
    assert "planner: no decision scraped" in fs.markdown([silent], "t")

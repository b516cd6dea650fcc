"""fleet_status: one row per target and cluster, with the drift from its last revision named field by field."""

import copy

from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import fleet_status as fs
from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import revisions as rv

LABELS = {"app.kubernetes.io/managed-by": "inferops.dynamo", "inferops.dynamo/target": "sglang-agg-gb300"}


def dgd(replicas=1):
    return {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": "d", "namespace": "ns", "labels": dict(LABELS)},
            "spec": {"components": [{"name": "Worker", "type": "worker", "replicas": replicas,
                                     "podTemplate": {"spec": {"containers": [{"name": "main", "image": "img:2"}]}}}]}}


def live(obj, ready=True, edited_by=None):
    out = copy.deepcopy(obj)
    out.pop("kind")           # list items carry no kind
    out["metadata"]["generation"] = 1
    out["status"] = {"observedGeneration": 1, "components": {"Worker": {"readyReplicas": 1, "updatedReplicas": 1}},
                     "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    if edited_by:
        out["metadata"]["managedFields"] = [
            {"manager": "inferops.dynamo", "operation": "Apply", "fieldsV1": {"f:metadata": {"f:labels": {}}}},
            {"manager": edited_by, "operation": "Update", "fieldsV1": {"f:spec": {"f:components": {
                'k:{"name":"Worker"}': {"f:replicas": {}}}}}}]
    return out


def revision(number, obj, **data):
    cm = rv.build(labels=LABELS, namespace="ns", workload="d", target="sglang-agg-gb300", number=number,
                  objects=[obj], inputs={"sku": "gb300"}, recorded_at="2026-01-01T00:00:00Z", recorded_by="ci",
                  version="0.1.0")
    cm["data"].update(data)
    return cm


def reads(revisions, dgds):
    return {"revisions": {"resources": revisions}, "dgds": {"resources": dgds}, "deployments": {"resources": []},
            "services": {"resources": []}}


def test_a_row_shows_revision_image_ready_replicas_and_benchmark():
    rows = fs.target_rows("rehearsal", "ns", reads([revision(1, dgd()), revision(2, dgd(), benchmark="passed",
                                                                                       **{"benchmark-at": "T"})],
                                                   [live(dgd())]), "inferops.dynamo")
    assert len(rows) == 1
    row = rows[0]
    assert (row["target"], row["revision"], row["image"], row["ready"], row["replicas"], row["benchmark"]) == \
        ("sglang-agg-gb300", 2, "img:2", "yes", "1/1", "passed")
    assert row["drift"] == []
    lines = fs.table_lines(rows)
    assert lines[0].split() == ["Cluster", "Target", "Revision", "Image", "Ready", "Replicas", "Benchmark", "Drift"]
    assert lines[2].split() == ["rehearsal", "sglang-agg-gb300", "2", "img:2", "yes", "1/1", "passed", "T", "none"]


def test_drift_is_named_field_by_field_in_the_table_and_the_markdown():
    edited = live(dgd(replicas=2), edited_by="kubectl-edit")
    row = fs.target_rows("rehearsal", "ns", reads([revision(1, dgd())], [edited]), "inferops.dynamo")[0]
    assert row["drift"] == ["DynamoGraphDeployment d: spec.components[Worker].replicas changed by kubectl-edit: 1 -> 2"]
    lines = fs.table_lines([row])
    assert lines[2].endswith("1 field(s): spec.components[Worker].replicas (changed)")
    assert lines[3:] == ["Drift of sglang-agg-gb300 on rehearsal since revision 1:",
                         "  DynamoGraphDeployment d: spec.components[Worker].replicas changed by kubectl-edit: 1 -> 2"]
    md = fs.markdown([row], "Status")
    assert "- `DynamoGraphDeployment/d` `spec.components[Worker].replicas`: changed by kubectl-edit " \
           "(revision: `1`, live: `2`)" in md


def test_a_workload_without_revision_and_a_revision_without_workload():
    rows = fs.target_rows("c", "ns", reads([], [live(dgd())]), "inferops.dynamo")
    assert rows[0]["revision"] == "none" and "no revision recorded" in rows[0]["drift"][0]
    assert "no revision recorded" in fs.table_lines(rows)[2]
    gone = fs.target_rows("c", "ns", reads([revision(1, dgd())], []), "inferops.dynamo")[0]
    assert gone["ready"] == "absent" and gone["drift"][0].endswith("(object) removed (was present)")


def test_an_unreachable_cluster_is_a_row():
    row = fs.unreachable_row("c", "ns", "cannot reach the Kubernetes API\n(kubeconfig x)")
    assert "unreachable: cannot reach the Kubernetes API (kubeconfig x)" in fs.table_lines([row])[2]


def _with_rule(number):
    rule = {"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
            "metadata": {"name": "d-objectives", "namespace": "ns", "labels": dict(LABELS)}, "spec": {"groups": []}}
    cm = rv.build(labels=LABELS, namespace="ns", workload="d", target="sglang-agg-gb300", number=number,
                  objects=[dgd(), rule], inputs={"sku": "gb300"}, recorded_at="2026-01-01T00:00:00Z",
                  recorded_by="ci", version="0.1.0")
    return cm, rule


def test_what_watches_a_target_is_compared_only_where_its_kind_was_read():
    cm, rule = _with_rule(1)
    not_read = fs.target_rows("c", "ns", reads([cm], [live(dgd())]), "inferops.dynamo")[0]
    assert not_read["drift"] == []
    unserved = {**reads([cm], [live(dgd())]), "prometheusrules": {"api_found": False, "resources": []}}
    assert fs.target_rows("c", "ns", unserved, "inferops.dynamo")[0]["drift"] == []
    kept = {**reads([cm], [live(dgd())]), "prometheusrules": {"api_found": True, "resources": [live(rule)]}}
    assert fs.target_rows("c", "ns", kept, "inferops.dynamo")[0]["drift"] == []
    deleted = {**reads([cm], [live(dgd())]), "prometheusrules": {"api_found": True, "resources": []}}
    assert fs.target_rows("c", "ns", deleted, "inferops.dynamo")[0]["drift"] == \
        ["PrometheusRule d-objectives: (object) removed (was present)"]
    # a read the API refused (403 for credentials that may not list the kind) is no evidence of removal
    refused = {**reads([cm], [live(dgd())]), "prometheusrules": {"api_found": True, "status": 403, "error": "forbidden"}}
    assert fs.target_rows("c", "ns", refused, "inferops.dynamo")[0]["drift"] == []

"""revisions: one labelled ConfigMap per revision, readable with kubectl; when to record, prune and restore."""

import pytest
import yaml

from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import revisions as rv

LABELS = {"app.kubernetes.io/managed-by": "inferops.dynamo", "inferops.dynamo/target": "sglang-agg-gb300"}


def objects(image="img:1"):
    return [{"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
             "metadata": {"name": "d", "namespace": "ns"},
             "spec": {"components": [
                 {"name": "Frontend", "type": "frontend", "podTemplate": {"spec": {"containers": [{"image": "fe"}]}}},
                 {"name": "Worker", "type": "worker", "podTemplate": {"spec": {"containers": [{"image": image}]}}}]}}]


def record(number, image="img:1", **extra):
    cm = rv.build(labels=LABELS, namespace="ns", workload="d", target="sglang-agg-gb300", number=number,
                  objects=objects(image), inputs={"sku": "gb300", "mode": "agg", "image": None},
                  recorded_at=f"2026-01-0{number}T00:00:00Z", recorded_by="alice", version="0.1.0", **extra)
    return cm


def test_the_configmap_is_labelled_and_holds_appliable_yaml():
    cm = record(2, "img:2")
    assert cm["metadata"]["name"] == "d-revision-2"
    assert cm["metadata"]["labels"] == {**LABELS, "inferops.dynamo/record": "revision", "inferops.dynamo/revision": "2"}
    data = cm["data"]
    assert data["revision"] == "2" and data["recorded-by"] == "alice" and data["collection-version"] == "0.1.0"
    assert data["image"] == "img:2"                       # the worker's, not the frontend's
    assert list(yaml.safe_load_all(data["objects.yaml"])) == objects("img:2")
    assert yaml.safe_load(data["inputs.yaml"]) == {"mode": "agg", "sku": "gb300"}     # unset inputs dropped
    assert rv.selector("sglang-agg-gb300") == "inferops.dynamo/record=revision,inferops.dynamo/target=sglang-agg-gb300"


def test_parse_sorts_by_number_and_skips_other_configmaps():
    revs = rv.parse([record(3, "img:3"), {"metadata": {"name": "other"}, "data": {"x": "1"}}, record(1)])
    assert [r["number"] for r in revs] == [1, 3]
    assert revs[1]["objects"] == objects("img:3") and revs[1]["inputs"]["sku"] == "gb300"
    assert "objects" not in rv.summary(revs)[0]


def test_a_revision_is_recorded_only_when_the_objects_change():
    revs = rv.parse([record(1), record(2, "img:2")])
    same = rv.next_record(revs, objects("img:2"), keep=10)
    assert same == {"record": False, "number": 2, "latest": 2, "prune": []}
    new = rv.next_record(revs, objects("img:3"), keep=10)
    assert new["record"] and new["number"] == 3
    assert rv.next_record([], objects(), keep=10) == {"record": True, "number": 1, "latest": None, "prune": []}


def test_the_oldest_revisions_beyond_the_history_are_pruned():
    revs = rv.parse([record(n, f"img:{n}") for n in (1, 2, 3)])
    assert rv.next_record(revs, objects("img:4"), keep=2)["prune"] == ["d-revision-1", "d-revision-2"]
    assert rv.next_record(revs, objects("img:3"), keep=2)["prune"] == ["d-revision-1"]


def test_select_defaults_to_the_previous_revision():
    revs = rv.parse([record(1), record(2, "img:2"), record(3, "img:3")])
    assert rv.select(revs)["number"] == 2
    assert rv.select(revs, "1")["number"] == 1
    assert rv.select(revs, 3)["number"] == 3


def test_a_missing_revision_is_refused_with_the_list():
    revs = rv.parse([record(1), record(2, "img:2")])
    with pytest.raises(rv.RevisionError) as err:
        rv.select(revs, 7, "sglang-agg-gb300")
    text = str(err.value)
    assert text.startswith("sglang-agg-gb300 has no revision 7. Revisions: revision 2 (current): ")
    assert "revision 1: 2026-01-01T00:00:00Z by alice, image img:1, deploy" in text
    with pytest.raises(rv.RevisionError, match="no earlier revision"):
        rv.select(revs[:1])
    with pytest.raises(rv.RevisionError, match="must be a revision number"):
        rv.select(revs, "latest")


def test_describe_shows_the_benchmark_verdict():
    rev = rv.parse([record(1)])[0]
    rev.update({"benchmark": "passed", "benchmark-at": "2026-01-01T00:10:00Z"})
    assert rv.describe(rev, 1).endswith("deploy; benchmark passed 2026-01-01T00:10:00Z")


def test_collection_version_from_galaxy_yml_or_manifest(tmp_path):
    (tmp_path / "galaxy.yml").write_text("namespace: inferops\nname: dynamo\nversion: 1.2.3\n")
    assert rv.collection_version(tmp_path) == "1.2.3"
    (tmp_path / "MANIFEST.json").write_text('{"collection_info": {"version": "2.0.0"}}')
    assert rv.collection_version(tmp_path) == "2.0.0"
    assert rv.collection_version() == yaml.safe_load((rv.Path(rv.__file__).parents[3] / "galaxy.yml").read_text())["version"]

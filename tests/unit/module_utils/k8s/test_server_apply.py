"""server_apply: what counts as a change (not a status a controller wrote, not the bookkeeping the API server
rewrites on every write) and which definitions cannot be applied."""

from __future__ import annotations

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import server_apply as sa

LIVE = {"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "n", "resourceVersion": "7", "generation": 1,
                     "managedFields": [{"manager": "inferops.dynamo"}], "labels": {"a": "b"}},
        "data": {"k": "v"}, "status": {"phase": "x"}}


def test_status_and_bookkeeping_are_not_changes():
    after = {**LIVE, "metadata": {**LIVE["metadata"], "resourceVersion": "9", "managedFields": []},
             "status": {"phase": "y"}}
    assert sa.comparable(LIVE) == sa.comparable(after)
    assert "status" not in sa.comparable(LIVE) and "resourceVersion" not in sa.comparable(LIVE)["metadata"]


def test_a_data_or_label_change_is_a_change():
    assert sa.comparable(LIVE) != sa.comparable({**LIVE, "data": {"k": "w"}})
    assert sa.comparable(LIVE) != sa.comparable({**LIVE, "metadata": {**LIVE["metadata"], "labels": {}}})


def test_comparable_leaves_the_live_object_alone():
    sa.comparable(LIVE)
    assert LIVE["metadata"]["resourceVersion"] == "7" and "status" in LIVE


def test_missing_object_compares_as_empty():
    assert sa.comparable(None) == {}


def test_definitions_without_identity_are_named_by_index():
    good = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    assert sa.invalid_definitions([good, {"kind": "ConfigMap"}, "text", {**good, "metadata": {}}]) == [1, 2, 3]


def test_the_refusal_names_every_bad_definition():
    good = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    assert sa.definitions_problem([good]) == ""
    assert sa.definitions_problem([{}, good, {"kind": "x"}]) == (
        "definitions [0, 2]: each needs apiVersion, kind and metadata.name")

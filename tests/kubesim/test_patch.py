"""kubesim.patch: strategic merge directives, JSON patch, apply field sets (no server)."""

from __future__ import annotations

import pytest

from kubesim import patch


def test_strategic_merge_keyed_lists_and_directives():
    live = {"spec": {"containers": [{"name": "a", "image": "1", "env": [{"name": "X", "value": "1"}]},
                                    {"name": "b", "image": "2"}],
                     "volumes": [{"name": "v1"}, {"name": "v2"}], "args": ["--x"]}}
    out = patch.strategic_merge(live, {"spec": {
        "containers": [{"name": "a", "env": [{"name": "Y", "value": "2"}]}, {"name": "b", "$patch": "delete"}],
        "volumes": [{"name": "v3"}], "args": ["--y"], "$setElementOrder/containers": [{"name": "a"}]}})
    assert out["spec"]["containers"] == [{"name": "a", "image": "1",
                                          "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]}]
    assert [v["name"] for v in out["spec"]["volumes"]] == ["v1", "v2", "v3"]
    assert out["spec"]["args"] == ["--y"]  # primitive lists are replaced
    assert patch.strategic_merge(live, {"spec": {"$patch": "replace", "args": []}}) == {"spec": {"args": []}}
    ports = patch.strategic_merge({"ports": [{"containerPort": 80, "name": "a"}]},
                                  {"ports": [{"containerPort": 80, "name": "b"}, {"containerPort": 81}]})
    assert ports == {"ports": [{"containerPort": 80, "name": "b"}, {"containerPort": 81}]}


def test_json_patch():
    doc = {"a": {"b": [1, 2]}, "c": 1}
    out = patch.json_patch(doc, [{"op": "add", "path": "/a/b/-", "value": 3}, {"op": "remove", "path": "/c"},
                                 {"op": "copy", "from": "/a/b", "path": "/d"}, {"op": "test", "path": "/d/0", "value": 1},
                                 {"op": "add", "path": "/a~1x", "value": 0}])
    assert out == {"a": {"b": [1, 2, 3]}, "d": [1, 2, 3], "a/x": 0}
    assert doc == {"a": {"b": [1, 2]}, "c": 1}
    with pytest.raises(patch.PatchError):
        patch.json_patch(doc, [{"op": "test", "path": "/c", "value": 2}])


def test_apply_field_sets_and_merge():
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "1"}, "uid": "u"},
           "spec": {"containers": [{"name": "main", "image": "i", "args": ["x"]}]}, "status": {"phase": "Running"}}
    paths = patch.field_paths(obj)
    assert ("f:metadata", "f:labels", "f:a") in paths
    assert ("f:spec", "f:containers", 'k:{"name":"main"}', "f:args") in paths
    assert not any(p[0] == "f:status" for p in paths) and ("f:metadata", "f:uid") not in paths
    fv = patch.to_fields_v1(paths)
    assert fv["f:spec"]["f:containers"]['k:{"name":"main"}']["."] == {}
    assert patch.from_fields_v1(fv) == paths
    merged = patch.apply_merge({"spec": {"containers": [{"name": "side", "image": "s"}, {"name": "main", "image": "old"}]}},
                               {"spec": {"containers": [{"name": "main", "image": "new"}]}})
    # the live order stays (test_an_apply_of_some_keyed_items_keeps_the_live_order_as_the_api_server_does)
    assert merged == {"spec": {"containers": [{"name": "side", "image": "s"}, {"name": "main", "image": "new"}]}}


def test_an_apply_of_some_keyed_items_keeps_the_live_order_as_the_api_server_does():
    """The Dynamo operator applies a scaled component's replicas alone: the graph's components keep their order (the
    real API server's merge; measured on the real backend: Frontend, Worker, Planner stay in place)."""
    live = {"spec": {"components": [{"name": "Frontend", "replicas": 1}, {"name": "Worker"}, {"name": "Planner"}]}}
    out = patch.apply_merge(live, {"spec": {"components": [{"name": "Worker", "replicas": 2}]}})
    assert out["spec"]["components"] == [{"name": "Frontend", "replicas": 1}, {"name": "Worker", "replicas": 2},
                                         {"name": "Planner"}]
    # an apply that names them all, in another order, orders them; a new item follows the live ones
    out = patch.apply_merge(live, {"spec": {"components": [{"name": "Planner"}, {"name": "Worker"}, {"name": "Frontend"},
                                                           {"name": "Extra"}]}})
    assert [c["name"] for c in out["spec"]["components"]] == ["Planner", "Worker", "Frontend", "Extra"]

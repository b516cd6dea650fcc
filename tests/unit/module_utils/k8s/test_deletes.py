"""deletes: by name or by selector (listed first), the DeleteOptions and dry run sent, an object already gone
is not a change, a refusal names the API's answer, and a delete that names nothing is refused before any request."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import client as kc
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import deletes as kd

from scripted_api import ScriptedApi

PODS = "/api/v1/namespaces/ns/pods"
JOB = "/apis/batch/v1/namespaces/ns/jobs/download"


def test_a_named_object_is_deleted_with_its_propagation_policy():
    api = ScriptedApi({("DELETE", JOB): (200, {"metadata": {"name": "download", "uid": "u1"}})})
    out = kd.delete_all(api, [{"api_version": "batch/v1", "plural": "jobs", "namespace": "ns", "name": "download"}],
                        "Background")
    assert out == [{"api_version": "batch/v1", "plural": "jobs", "namespace": "ns", "name": "download", "deleted": True,
                    "uid": "u1"}]
    method, path, query, body = api.asked[0]
    assert (method, path, query) == ("DELETE", JOB, None)
    assert body == {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"}


def test_a_selector_deletes_each_object_it_lists_and_one_already_gone_is_not_a_change():
    api = ScriptedApi({("GET", PODS): (200, {"items": [{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}]}),
                       ("DELETE", f"{PODS}/a"): (200, {})})   # b went meanwhile: 404
    out = kd.delete_all(api, [{"api_version": "v1", "plural": "pods", "namespace": "ns",
                               "label_selectors": ["job-name=download", "controller-uid!=u2"]}])
    assert [(o["name"], o["deleted"]) for o in out] == [("a", True), ("b", False)]
    assert api.asked[0][2] == {"labelSelector": "job-name=download,controller-uid!=u2"}


def test_check_mode_sends_a_dry_run():
    api = ScriptedApi({("DELETE", JOB): (200, {})})
    kd.delete_all(api, [{"api_version": "batch/v1", "plural": "jobs", "namespace": "ns", "name": "download"}],
                  dry_run=True)
    _, _, query, body = api.asked[0]
    assert query == {"dryRun": "All"} and body["dryRun"] == ["All"]   # a body's options replace the query's


def test_a_refusal_fails_with_the_api_servers_answer():
    api = ScriptedApi({("DELETE", JOB): (403, {"kind": "Status", "reason": "Forbidden",
                                               "message": "jobs.batch \"download\" is forbidden"})})
    with pytest.raises(kc.K8sApiError, match="forbidden"):
        kd.delete_all(api, [{"api_version": "batch/v1", "plural": "jobs", "namespace": "ns", "name": "download"}])


def test_deletes_that_name_nothing_are_all_refused_before_any_request():
    api = ScriptedApi({})
    specs = [{"api_version": "v1", "plural": "pods", "namespace": "ns", "name": "p"},
             {"api_version": "v1", "plural": "pods", "namespace": "ns", "label_selectors": []},
             {"api_version": "v1", "plural": "pods", "namespace": "ns", "name": ""}]
    with pytest.raises(ValueError, match=r"objects \[1, 2\]: each needs a name or at least one label selector"):
        kd.delete_all(api, specs)
    assert api.asked == []


class Clock:
    """Virtual time: sleeping moves it on."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def deleted(uid="u1"):
    return [{"api_version": "batch/v1", "plural": "jobs", "namespace": "ns", "name": "download", "deleted": True,
             "uid": uid}]


def test_the_wait_ends_when_the_object_is_gone():
    clock = Clock()
    api = ScriptedApi({("GET", JOB): (200, {"metadata": {"uid": "u1"}})})
    real_request = api.request

    def going(method, path, **kw):   # gone on the third look
        if len(api.asked) >= 2:
            api.answers.pop(("GET", JOB), None)
        return real_request(method, path, **kw)

    api.request = going
    assert kd.wait_gone(api, deleted(), timeout=30, clock=clock, sleep=clock.sleep) == 2.0


def test_a_new_object_of_the_same_name_is_not_the_deleted_one():
    clock = Clock()
    api = ScriptedApi({("GET", JOB): (200, {"metadata": {"uid": "u2"}})})   # re-created meanwhile
    assert kd.wait_gone(api, deleted("u1"), timeout=30, clock=clock, sleep=clock.sleep) == 0.0


def test_the_wait_names_what_is_still_there_when_it_ends():
    clock = Clock()
    api = ScriptedApi({("GET", JOB): (200, {"metadata": {"uid": "u1"}})})   # a finalizer that never runs
    with pytest.raises(kd.StillThere, match=r"still there 5s after the delete: jobs/download"):
        kd.wait_gone(api, deleted(), timeout=5, clock=clock, sleep=clock.sleep)
    assert clock.now == 5.0


def test_objects_already_gone_are_not_waited_for():
    api = ScriptedApi({})
    gone = [{**deleted()[0], "deleted": False, "uid": None}]
    assert kd.wait_gone(api, gone, timeout=5, clock=Clock(), sleep=Clock().sleep) == 0.0
    assert api.asked == []


DGD_GV = ("GET", "/apis/nvidia.com/v1alpha1")
DGD_DISCOVERY = (200, {"resources": [
    {"name": "dynamographdeployments", "kind": "DynamoGraphDeployment", "namespaced": True},
    {"name": "dynamographdeployments/status", "kind": "DynamoGraphDeployment", "namespaced": True}]})


def test_a_kind_is_deleted_at_its_plural_found_by_discovery():
    path = "/apis/nvidia.com/v1alpha1/namespaces/ns/dynamographdeployments/muse"
    api = ScriptedApi({DGD_GV: DGD_DISCOVERY, ("DELETE", path): (200, {"metadata": {"uid": "u1"}})})
    out = kd.delete_all(api, [{"api_version": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
                               "namespace": "ns", "name": "muse"}])
    assert [(o["plural"], o["deleted"]) for o in out] == [("dynamographdeployments", True)]
    assert [a[:2] for a in api.asked] == [DGD_GV, ("DELETE", path)]


def test_a_cluster_scoped_kind_is_deleted_without_the_namespace_given():
    api = ScriptedApi({("GET", "/api/v1"): (200, {"resources": [{"name": "namespaces", "kind": "Namespace",
                                                                 "namespaced": False}]}),
                       ("DELETE", "/api/v1/namespaces/old"): (200, {})})
    out = kd.delete_all(api, [{"api_version": "v1", "kind": "Namespace", "namespace": "ns", "name": "old"}])
    assert out[0]["deleted"] and out[0]["namespace"] is None


def test_kinds_not_served_are_all_named_with_what_is_served_before_any_delete():
    api = ScriptedApi({DGD_GV: DGD_DISCOVERY})
    specs = [{"api_version": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeploy", "namespace": "ns", "name": "a"},
             {"api_version": "example.com/v1", "kind": "Widget", "namespace": "ns", "name": "b"}]
    with pytest.raises(kd.UnknownKind) as refused:
        kd.delete_all(api, specs)
    assert str(refused.value) == (
        "kinds the API server does not serve: DynamoGraphDeploy in nvidia.com/v1alpha1 (served there: "
        "DynamoGraphDeployment); Widget in example.com/v1 (served there: nothing: the group/version is not served)")
    assert all(a[0] == "GET" for a in api.asked)


def test_manifests_become_deletes_by_kind_and_name():
    manifest = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "fe", "namespace": "ns", "labels": {}},
                "spec": {"ports": [{"port": 8000}]}}
    assert kd.specs_of([manifest]) == [{"api_version": "v1", "kind": "Service", "namespace": "ns", "name": "fe"}]


def test_a_delete_without_plural_or_kind_is_refused_with_the_others():
    specs = [{"api_version": "v1", "namespace": "ns", "name": "p"},
             {"api_version": "v1", "plural": "pods", "namespace": "ns"}]
    assert kd.specs_problem(specs) == (
        "objects [1]: each needs a name or at least one label selector (without either, a delete would remove every"
        " object of its kind); objects [0]: each needs a plural or a kind")

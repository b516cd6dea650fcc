"""deletes: by name or by selector (listed first), the DeleteOptions and dry run sent, an object already gone
is not a change, a refusal names the API's answer, and a delete that names nothing is refused before any request."""

from __future__ import annotations

import json

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import client as kc
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import deletes as kd

PODS = "/api/v1/namespaces/ns/pods"
JOB = "/apis/batch/v1/namespaces/ns/jobs/download"


class ScriptedApi:
    """Answers (method, path) from a table (404 otherwise); records (method, path, query, body)."""

    target = "kubeconfig /k, context c, host https://api"

    def __init__(self, answers: dict):
        self.answers = answers
        self.asked: list[tuple] = []

    def request(self, method, path, query=None, body=None, **_):
        self.asked.append((method, path, query, body))
        status, doc = self.answers.get((method, path), (404, {"kind": "Status", "reason": "NotFound"}))
        return kc.Response(status, {"Content-Type": "application/json"}, json.dumps(doc).encode())

    get_json = kc.K8sApi.get_json   # the real client's reading of an answer, over the scripted requests


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

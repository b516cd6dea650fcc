"""cluster_reads: read specs, k8s_info-shaped answers (api_found, resources, per-read errors), the union of
any_label_selectors, access reviews and the 401/unreachable failures, against a scripted API."""

from __future__ import annotations

import json

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import client as kc
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import reads as cr

from scripted_api import ScriptedApi


def item(name, uid, **status):
    return {"metadata": {"name": name, "uid": uid}, "status": status}


APPS = ("GET", "/apis/apps/v1")
APPS_DOC = (200, {"resources": [{"name": "deployments"}, {"name": "deployments/status"}]})


def test_missing_crd_is_api_found_false_without_listing():
    api = ScriptedApi({("GET", "/apis/nvidia.com/v1beta1"): (404, {"message": "not found"})})
    out = cr.survey(api, {"dgds": {"api_version": "nvidia.com/v1beta1", "plural": "dynamographdeployments",
                                   "namespace": "dyn"}})
    assert out["reads"]["dgds"] == {"api_found": False, "resources": []}
    assert [a[1] for a in api.asked] == ["/apis/nvidia.com/v1beta1"]


def test_served_group_version_but_other_plural_is_not_found():
    api = ScriptedApi({APPS: APPS_DOC})
    out = cr.survey(api, {"sts": {"api_version": "apps/v1", "plural": "statefulsets"}})
    assert out["reads"]["sts"]["api_found"] is False


def test_named_read_missing_object_is_empty_and_core_discovery_is_asked_once():
    api = ScriptedApi({("GET", "/api/v1"): (200, {"resources": [{"name": "namespaces"},
                                                                 {"name": "persistentvolumeclaims"}]}),
                       ("GET", "/api/v1/namespaces/dyn"): (200, item("dyn", "u1"))})
    out = cr.survey(api, {
        "namespace": {"api_version": "v1", "plural": "namespaces", "name": "dyn"},
        "pvc": {"api_version": "v1", "plural": "persistentvolumeclaims", "namespace": "dyn", "name": "cache"}})
    assert out["reads"]["namespace"] == {"api_found": True, "resources": [item("dyn", "u1")]}
    assert out["reads"]["pvc"] == {"api_found": True, "resources": []}
    assert [a[1] for a in api.asked].count("/api/v1") == 1


def test_forbidden_list_is_an_answer_with_status_and_error():
    api = ScriptedApi({("GET", "/api/v1"): (200, {"resources": [{"name": "nodes"}]}),
                       ("GET", "/api/v1/nodes"): (403, {"kind": "Status", "reason": "Forbidden",
                                                        "message": 'nodes is forbidden: User "u" cannot list'})})
    out = cr.survey(api, {"nodes": {"api_version": "v1", "plural": "nodes", "label_selectors": ["a=b"]}})
    nodes = out["reads"]["nodes"]
    assert nodes["status"] == 403 and nodes["api_found"] is True and "resources" not in nodes
    assert "nodes is forbidden" in nodes["error"]


def test_label_selectors_are_anded_in_one_request():
    api = ScriptedApi({("GET", "/api/v1"): (200, {"resources": [{"name": "nodes"}]}),
                       ("GET", "/api/v1/nodes", "a=b,c=d"): (200, {"items": [item("n1", "1")]})})
    out = cr.survey(api, {"nodes": {"api_version": "v1", "plural": "nodes", "label_selectors": ["a=b", "c=d"]}})
    assert [r["metadata"]["name"] for r in out["reads"]["nodes"]["resources"]] == ["n1"]


def test_any_label_selectors_union_without_duplicates():
    api = ScriptedApi({APPS: APPS_DOC,
                       ("GET", "/apis/apps/v1/deployments", "x=1"): (200, {"items": [item("op", "u1", readyReplicas=1)]}),
                       ("GET", "/apis/apps/v1/deployments", "y=2"): (200, {"items": [item("op", "u1"),
                                                                                     item("op2", "u2")]})})
    out = cr.survey(api, {"ops": {"api_version": "apps/v1", "plural": "deployments",
                                  "any_label_selectors": ["x=1", "y=2"]}})
    assert [r["metadata"]["name"] for r in out["reads"]["ops"]["resources"]] == ["op", "op2"]


def test_unauthorized_fails_the_whole_survey_naming_the_target():
    api = ScriptedApi({("GET", "/api/v1"): (401, {"kind": "Status", "reason": "Unauthorized", "message": "bad token"})})
    with pytest.raises(kc.K8sApiError) as err:
        cr.survey(api, {"ns": {"api_version": "v1", "plural": "namespaces", "name": "x"}})
    assert err.value.status == 401
    assert "refused the credentials" in str(err.value) and "context c" in str(err.value)


def test_access_reviews_report_denied_permissions_as_kubectl_spells_them():
    def review(body):
        attrs = body["spec"]["resourceAttributes"]
        allowed = not (attrs["resource"] == "jobs" and attrs["group"] == "batch")
        return {"status": {"allowed": allowed, "reason": "" if allowed else "forbid fault"}}

    api = ScriptedApi({("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"): (201, review)})
    out = cr.survey(api, {}, "dyn", [{"verb": "create", "group": "batch", "resource": "jobs"},
                                     {"verb": "get", "group": "", "resource": "pods", "subresource": "log"}])
    assert out["denied"] == ["create jobs.batch"]
    assert [c["allowed"] for c in out["access"]] == [False, True]
    sent = [a[3]["spec"]["resourceAttributes"] for a in api.asked]
    assert sent[1] == {"namespace": "dyn", "group": "", "verb": "get", "resource": "pods", "subresource": "log"}


def test_describe_check():
    assert cr.describe_check({"verb": "create", "group": "nvidia.com", "resource": "dynamographdeployments"}) == \
        "create dynamographdeployments.nvidia.com"
    assert cr.describe_check({"verb": "create", "group": "", "resource": "services", "subresource": "proxy"}) == \
        "create services/proxy"


@pytest.mark.parametrize("spec, message", [
    ("nodes", "expected a dict"),
    ({"plural": "nodes"}, "api_version required"),
    ({"api_version": "v1", "plural": "nodes", "kind": "Node"}, "unknown key(s) kind"),
    ({"api_version": "v1", "plural": "nodes", "name": "n", "label_selectors": ["a=b"]}, "mutually exclusive"),
    ({"api_version": "v1", "plural": "nodes", "label_selectors": ["a"], "any_label_selectors": ["b"]}, "not both"),
])
def test_bad_read_specs_are_refused_before_the_cluster_is_asked(spec, message):
    def no_api():
        raise AssertionError("the API must not be built for a bad spec")

    with pytest.raises(cr.ReadSpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        cr.survey(no_api, {"bad": spec})


def test_access_checks_need_a_namespace_and_a_verb():
    with pytest.raises(cr.ReadSpecError, match="access_namespace"):
        cr.survey(lambda: None, {}, None, [{"verb": "create", "resource": "jobs"}])
    with pytest.raises(cr.ReadSpecError, match="verb and resource"):
        cr.survey(lambda: None, {}, "dyn", [{"resource": "jobs"}])


def test_fields_keep_only_the_paths_asked_for_in_every_item():
    pod = {"metadata": {"name": "p", "namespace": "other", "uid": "u1", "annotations": {"x": "y"}},
           "spec": {"nodeName": "n0", "containers": [
               {"name": "c", "env": [{"name": "PASSWORD", "value": "s3cret"}],
                "resources": {"limits": {"nvidia.com/gpu": "4"}}}]},
           "status": {"phase": "Running", "podIP": "10.0.0.1"}}
    api = ScriptedApi({("GET", "/api/v1"): (200, {"resources": [{"name": "pods"}]}),
                       ("GET", "/api/v1/pods"): (200, {"items": [pod]})})
    out = cr.survey(api, {"pods": {"api_version": "v1", "plural": "pods", "fields": [
        "metadata.name", "metadata.namespace", "spec.nodeName", "spec.containers.resources", "status.phase"]}})
    assert out["reads"]["pods"]["resources"] == [{
        "metadata": {"name": "p", "namespace": "other"},
        "spec": {"nodeName": "n0", "containers": [{"resources": {"limits": {"nvidia.com/gpu": "4"}}}]},
        "status": {"phase": "Running"}}]
    assert "s3cret" not in json.dumps(out)
    with pytest.raises(cr.ReadSpecError, match="fields must be a list of dotted paths"):
        cr.survey(api, {"pods": {"api_version": "v1", "plural": "pods", "fields": "spec"}})


PODS_PATH = "/api/v1/namespaces/ns/pods"


def pod(name, phase, created):
    return {"metadata": {"name": name, "creationTimestamp": created}, "status": {"phase": phase}}


def test_a_jobs_log_is_its_succeeded_attempts_whole_log():
    api = ScriptedApi({
        ("GET", PODS_PATH, "job-name=bench"): (200, {"items": [pod("bench-b", "Succeeded", "2026-12-05T10:01:00Z"),
                                                              pod("bench-c", "Failed", "2026-12-05T10:02:00Z"),
                                                              pod("bench-a", "Failed", "2026-12-05T10:00:00Z")]}),
    })
    real = api.request

    def text_for_logs(method, path, query=None, body=None, **kw):   # a log answers text, not JSON
        if path.endswith("/log"):
            api.asked.append((method, path, query, body))
            return kc.Response(200, {"Content-Type": "text/plain"}, b"line 1\nline 2\n")
        return real(method, path, query=query, body=body, **kw)

    api.request = text_for_logs
    out = cr.survey(api, {}, logs={"bench": {"namespace": "ns", "label_selectors": ["job-name=bench"]}})
    assert out["logs"] == {"bench": {"pod": "bench-b", "log": "line 1\nline 2\n"}}
    assert api.asked[-1][2] is None, "no tail or byte limit: the whole log"


def test_no_pod_matched_is_an_empty_answer_and_a_refused_log_is_an_answer_too():
    api = ScriptedApi({("GET", PODS_PATH, "job-name=gone"): (200, {"items": []}),
                       ("GET", f"{PODS_PATH}/p/log"): (403, {"kind": "Status", "message": "pods \"p\" is forbidden"})})
    out = cr.survey(api, {}, logs={"gone": {"namespace": "ns", "label_selectors": ["job-name=gone"]},
                                   "denied": {"namespace": "ns", "name": "p", "container": "c"}})
    assert out["logs"]["gone"] == {"pod": None, "log": ""}
    assert out["logs"]["denied"]["status"] == 403 and "forbidden" in out["logs"]["denied"]["error"]
    assert api.asked[-1][2] == {"container": "c"}


def test_bad_log_specs_are_refused_all_at_once_before_the_cluster_is_asked():
    with pytest.raises(cr.ReadSpecError, match=r"log 'x': namespace required; exactly one of name \(a pod\) and "
                                               r"label_selectors"):
        cr.survey(lambda: pytest.fail("the cluster was asked"), {}, logs={"x": {"name": "p", "label_selectors": ["a"]}})

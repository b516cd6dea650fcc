"""inferops.dynamo.cluster_facts through ansible-playbook against the rehearsal cluster: reads shaped like
k8s_info (a served CRD, one that is not, a named object and a missing one, nodes by label, operators by any of
several selectors), a forbidden permission named as kubectl spells it, and an unreachable API failing the task."""

from __future__ import annotations

import pytest
from module_runner import run_tasks

pytestmark = pytest.mark.cluster


def facts_task(**opts) -> dict:
    return {"name": "facts", "inferops.dynamo.cluster_facts": opts}


def names(read: dict) -> list[str]:
    return sorted(r["metadata"]["name"] for r in read["resources"])


def test_reads_answer_like_k8s_info(tmp_path, kubesim_cluster, k8s_namespace):
    (r,), _ = run_tasks(tmp_path, kubesim_cluster, [facts_task(reads={
        "namespace": {"api_version": "v1", "plural": "namespaces", "name": k8s_namespace},
        "absent_pvc": {"api_version": "v1", "plural": "persistentvolumeclaims", "namespace": k8s_namespace,
                       "name": "no-such-cache"},
        "dgds": {"api_version": "nvidia.com/v1beta1", "plural": "dynamographdeployments", "namespace": k8s_namespace},
        "not_served": {"api_version": "example.invalid/v1", "plural": "widgets"},
        "gb300_nodes": {"api_version": "v1", "plural": "nodes",
                        "label_selectors": ["nvidia.com/gpu.product=NVIDIA-GB300"]},
        "no_nodes": {"api_version": "v1", "plural": "nodes", "label_selectors": ["nvidia.com/gpu.product=none"]},
        "operators": {"api_version": "apps/v1", "plural": "deployments",
                      "any_label_selectors": ["app.kubernetes.io/name=dynamo-operator",
                                              "app.kubernetes.io/name=dynamo-platform-dynamo-operator"]},
    })])
    assert not r.get("failed"), r
    reads = r["reads"]
    assert names(reads["namespace"]) == [k8s_namespace]
    assert reads["absent_pvc"] == {"api_found": True, "resources": []}
    assert reads["dgds"] == {"api_found": True, "resources": []}
    assert reads["not_served"] == {"api_found": False, "resources": []}
    assert reads["gb300_nodes"]["resources"], "the rehearsal cluster has GB300 nodes"
    assert all(n["metadata"]["labels"]["nvidia.com/gpu.product"] == "NVIDIA-GB300"
               for n in reads["gb300_nodes"]["resources"])
    assert reads["no_nodes"]["resources"] == []
    ops = reads["operators"]["resources"]
    assert ops and any((d.get("status") or {}).get("readyReplicas", 0) > 0 for d in ops)
    assert r["changed"] is False and r["access"] == [] and r["denied"] == []


def test_forbidden_permission_is_denied_and_others_allowed(tmp_path, kubesim_faults, k8s_namespace):
    kubesim_faults.fault("forbid", resource="jobs.batch", namespace=k8s_namespace, verbs="create")
    (r,), _ = run_tasks(tmp_path, kubesim_faults, [facts_task(access_namespace=k8s_namespace, access_checks=[
        {"verb": "create", "group": "batch", "resource": "jobs"},
        {"verb": "get", "group": "", "resource": "pods", "subresource": "log"},
    ])])
    assert not r.get("failed"), r
    assert r["denied"] == ["create jobs.batch"]
    assert [c["allowed"] for c in r["access"]] == [False, True]


def test_unreachable_api_fails_naming_what_was_tried(tmp_path, kubesim_cluster):
    kubeconfig = tmp_path / "down.yaml"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: down\n"
        "clusters: [{name: down, cluster: {server: 'http://127.0.0.1:9'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: down, context: {cluster: down, user: u}}]\n")
    (r,), _ = run_tasks(tmp_path, kubesim_cluster, [facts_task(
        context="down", reads={"ns": {"api_version": "v1", "plural": "namespaces", "name": "x"}})],
        kubeconfig=str(kubeconfig))
    assert r["failed"]
    assert "cannot reach the Kubernetes API" in r["msg"] and str(kubeconfig) in r["msg"]


def test_a_bad_read_is_refused_with_the_valid_keys(tmp_path, kubesim_cluster):
    (r,), _ = run_tasks(tmp_path, kubesim_cluster, [facts_task(reads={"n": {"api_version": "v1", "kind": "Node"}})])
    assert r["failed"]
    assert "read 'n'" in r["msg"] and "unknown key(s) kind" in r["msg"] and "plural" in r["msg"]


def test_a_log_the_api_refuses_is_an_answer_or_with_fail_on_refusal_a_failure(tmp_path, kubesim_cluster,
                                                                             k8s_namespace):
    logs = {"gone": {"namespace": k8s_namespace, "name": "no-such-pod"},
            "none": {"namespace": k8s_namespace, "label_selectors": ["job-name=no-such-job"]}}
    (answered, failed), _ = run_tasks(tmp_path, kubesim_cluster, [facts_task(logs=logs),
                                                                  facts_task(logs=logs, fail_on_refusal=True)])
    assert not answered.get("failed") and answered["logs"]["gone"]["status"] == 404, answered
    assert answered["logs"]["none"] == {"pod": None, "log": ""}, answered
    assert failed["failed"] and failed["msg"].startswith("log gone: GET /api/v1/namespaces/"), failed

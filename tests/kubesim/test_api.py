"""The API surface of kubesim, driven with the real kubernetes client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import urllib3
from helpers import wait_for
from kubernetes.client import CoreV1Api
from kubernetes.dynamic.exceptions import ApiException

pytestmark = pytest.mark.cluster


def raw(cluster, method, path, body=None, ctype="application/json", token=True):
    http = urllib3.PoolManager()
    headers = {"Content-Type": ctype}
    if token:
        import yaml

        kc = yaml.safe_load(Path(cluster.kubeconfig).read_text())
        headers["Authorization"] = "Bearer " + kc["users"][0]["user"]["token"]
    data = body if isinstance(body, bytes | str) or body is None else json.dumps(body)
    r = http.request(method, cluster.base_url + path, body=data, headers=headers)
    return r.status, (json.loads(r.data) if r.data and r.data[:1] in (b"{", b"[") else r.data)


def test_discovery(kubesim_cluster):
    code, v = raw(kubesim_cluster, "GET", "/version")
    assert code == 200 and v["major"] == "1"
    code, apis = raw(kubesim_cluster, "GET", "/apis")
    groups = {g["name"]: g for g in apis["groups"]}
    for g in ("apps", "batch", "storage.k8s.io", "nvidia.com", "resource.nvidia.com", "resource.k8s.io",
              "apiextensions.k8s.io", "authorization.k8s.io", "events.k8s.io", "rbac.authorization.k8s.io"):
        assert g in groups, g
    assert groups["nvidia.com"]["preferredVersion"]["version"] == "v1beta1"
    code, rl = raw(kubesim_cluster, "GET", "/apis/nvidia.com/v1beta1")
    dgd = next(r for r in rl["resources"] if r["name"] == "dynamographdeployments")
    assert dgd["kind"] == "DynamoGraphDeployment" and dgd["shortNames"] == ["dgd"] and dgd["namespaced"]
    assert any(r["name"] == "dynamographdeployments/status" for r in rl["resources"])
    code, core = raw(kubesim_cluster, "GET", "/api/v1")
    names = {r["name"] for r in core["resources"]}
    assert {"pods", "pods/log", "services/proxy", "namespaces", "nodes", "secrets", "persistentvolumeclaims"} <= names
    assert raw(kubesim_cluster, "GET", "/api/v1/pods", token=False)[0] == 401


def test_nodes_from_catalog(k8s_client):
    import yaml

    from kubesim.inventory import REPO_ROOT

    skus = yaml.safe_load((REPO_ROOT / "catalog" / "skus.yml").read_text())["skus"]
    nodes = CoreV1Api(k8s_client).list_node().items
    assert len(nodes) == 7  # gb300:2,gb200:2,b200:1,mi355x:1,mi350x:1
    by_sku = {}
    for n in nodes:
        by_sku.setdefault(n.metadata.labels["node.kubernetes.io/instance-type"], []).append(n)
    for sku, ns in by_sku.items():
        f = skus[sku]
        n = ns[0]
        assert n.metadata.labels[f["node_label_key"]] == f["node_label_value"]
        assert n.metadata.labels["kubernetes.io/arch"] == f["cpu_arch"]
        assert n.status.allocatable[f["gpu_resource"]] == str(f["gpus_per_node"])
        assert ("rdma/ib" in n.status.allocatable) == (f["vendor"] == "nvidia")
    assert len(by_sku["gb300"]) == 2


def test_storage_classes(k8s_dynamic):
    sc = k8s_dynamic.resources.get(api_version="storage.k8s.io/v1", kind="StorageClass")
    items = {i.metadata.name: i for i in sc.get().items}
    assert set(items) == {"shared-rwx", "local-rwo"}
    assert items["shared-rwx"].metadata.annotations["storageclass.kubernetes.io/is-default-class"] == "true"


def test_crud_selectors_and_errors(k8s_dynamic, k8s_namespace):
    cm = k8s_dynamic.resources.get(api_version="v1", kind="ConfigMap")
    ns = k8s_namespace
    for name, labels in (("a", {"app": "x", "tier": "fe"}), ("b", {"app": "y"}), ("c", {"app": "z", "tier": "be"})):
        created = cm.create(namespace=ns, body={"metadata": {"name": name, "labels": labels}, "data": {"k": name}})
        assert created.metadata.uid and created.metadata.resourceVersion and created.metadata.creationTimestamp
        assert "status" not in created.to_dict()  # never invent fields
        assert created.metadata.generation is None
    def names(**kw):
        return sorted(i.metadata.name for i in cm.get(namespace=ns, **kw).items)
    assert names(label_selector="app in (x,y)") == ["a", "b"]
    # every namespace has the root CA ConfigMap (unlabelled), as on a real cluster
    assert names(label_selector="app!=x") == ["b", "c", "kube-root-ca.crt"]
    assert names(label_selector="tier") == ["a", "c"]
    assert names(label_selector="!tier") == ["b", "kube-root-ca.crt"]
    assert names(label_selector="app notin (x),tier") == ["c"]
    assert names(field_selector="metadata.name=b") == ["b"]
    with pytest.raises(ApiException) as e:
        cm.create(namespace=ns, body={"metadata": {"name": "a"}, "data": {}})
    st = json.loads(e.value.body)
    assert e.value.status == 409 and st["reason"] == "AlreadyExists" and st["kind"] == "Status"
    assert st["message"] == 'configmaps "a" already exists' and st["details"] == {"name": "a", "group": "", "kind": "configmaps"}
    with pytest.raises(ApiException) as e:
        cm.get(namespace=ns, name="nope")
    st = json.loads(e.value.body)
    assert (e.value.status, st["reason"], st["message"]) == (404, "NotFound", 'configmaps "nope" not found')
    with pytest.raises(ApiException) as e:
        cm.create(namespace=ns, body={"metadata": {"name": "Bad_Name"}})
    st = json.loads(e.value.body)
    assert e.value.status == 422 and st["reason"] == "Invalid" and st["details"]["causes"][0]["field"] == "metadata.name"
    with pytest.raises(ApiException) as e:
        cm.create(namespace="does-not-exist", body={"metadata": {"name": "x"}})
    assert e.value.status == 404 and json.loads(e.value.body)["message"] == 'namespaces "does-not-exist" not found'
    # PUT with a stale resourceVersion -> 409 Conflict
    a = cm.get(namespace=ns, name="a").to_dict()
    cm.replace(namespace=ns, body={**a, "data": {"k": "new"}})
    with pytest.raises(ApiException) as e:
        cm.replace(namespace=ns, body={**a, "data": {"k": "newer"}})
    assert e.value.status == 409 and "the object has been modified" in json.loads(e.value.body)["message"]
    cm.delete(namespace=ns, name="a")
    assert names() == ["b", "c", "kube-root-ca.crt"]


def test_patches_generation_and_dry_run(k8s_dynamic, k8s_namespace):
    dep = k8s_dynamic.resources.get(api_version="apps/v1", kind="Deployment")
    ns = k8s_namespace
    body = {"metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                         {"name": "main", "image": "nginx", "env": [{"name": "A", "value": "1"}],
                          "ports": [{"containerPort": 80}]},
                         {"name": "side", "image": "busybox"}]}}}}
    d = dep.create(namespace=ns, body=body)
    assert d.metadata.generation == 1
    # dry run never persists
    dr = dep.patch(namespace=ns, name="web", body={"spec": {"replicas": 3}}, content_type="application/merge-patch+json",
                   query_params=[("dryRun", "All")])
    assert dr.spec.replicas == 3
    assert dep.get(namespace=ns, name="web").spec.replicas == 0
    # strategic merge keyed by name: one container changed, the other kept; env merged by name
    d = dep.patch(namespace=ns, name="web", content_type="application/strategic-merge-patch+json",
                  body={"spec": {"template": {"spec": {"containers": [
                      {"name": "main", "env": [{"name": "B", "value": "2"}]}]}}}})
    cs = d.spec.template.spec.containers
    assert [c.name for c in cs] == ["main", "side"]
    assert [e.name for e in cs[0].env] == ["A", "B"] and cs[0].image == "nginx"
    assert d.metadata.generation == 2
    # metadata-only change: generation unchanged
    d = dep.patch(namespace=ns, name="web", body={"metadata": {"labels": {"x": "y"}}},
                  content_type="application/merge-patch+json")
    assert d.metadata.generation == 2
    # merge patch replaces lists
    d = dep.patch(namespace=ns, name="web", content_type="application/merge-patch+json",
                  body={"spec": {"template": {"spec": {"containers": [{"name": "only", "image": "x"}]}}}})
    assert [c.name for c in d.spec.template.spec.containers] == ["only"]
    # JSON patch
    d = dep.patch(namespace=ns, name="web", content_type="application/json-patch+json",
                  body=[{"op": "replace", "path": "/spec/replicas", "value": 0},
                        {"op": "add", "path": "/metadata/labels/j", "value": "p"}])
    assert d.metadata.labels["j"] == "p"
    # status subresource: main-resource writes cannot change status, /status writes can
    cur = dep.get(namespace=ns, name="web").to_dict()
    k8s_dynamic.request("PATCH", f"/apis/apps/v1/namespaces/{ns}/deployments/web",
                        body={"status": {"replicas": 99}}, content_type="application/merge-patch+json")
    assert (dep.get(namespace=ns, name="web").to_dict().get("status") or {}).get("replicas") != 99
    out = k8s_dynamic.request("PATCH", f"/apis/apps/v1/namespaces/{ns}/deployments/web/status",
                              body={"status": {"observedGeneration": 42}}, content_type="application/merge-patch+json")
    assert out.status.observedGeneration == 42
    assert cur["metadata"]["generation"] == dep.get(namespace=ns, name="web").metadata.generation


def test_server_side_apply(k8s_dynamic, k8s_namespace, kubesim_cluster):
    cm = k8s_dynamic.resources.get(api_version="v1", kind="ConfigMap")
    ns = k8s_namespace
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa", "labels": {"a": "1"}},
            "data": {"x": "1", "y": "2"}}
    first = cm.server_side_apply(namespace=ns, body=body, field_manager="inferops.dynamo")
    again = cm.server_side_apply(namespace=ns, body=body, field_manager="inferops.dynamo")
    assert first.metadata.resourceVersion == again.metadata.resourceVersion  # no-op apply
    assert again.metadata.managedFields[0].manager == "inferops.dynamo"
    assert again.metadata.managedFields[0].operation == "Apply"
    with pytest.raises(ApiException) as e:
        cm.server_side_apply(namespace=ns, body={**body, "data": {"x": "other"}}, field_manager="someone-else")
    st = json.loads(e.value.body)
    assert e.value.status == 409 and st["reason"] == "Conflict"
    assert st["message"] == 'Apply failed with 1 conflict: conflict with "inferops.dynamo": .data.x'
    assert st["details"]["causes"][0]["field"] == ".data.x"
    # same value from another manager: shared ownership, no conflict
    cm.server_side_apply(namespace=ns, body={**body, "data": {"x": "1"}}, field_manager="someone-else")
    forced = cm.server_side_apply(namespace=ns, body={**body, "data": {"x": "other"}}, field_manager="someone-else",
                                  force_conflicts=True)
    assert forced.data["x"] == "other"
    # a field dropped from the applied config is removed
    out = cm.server_side_apply(namespace=ns, field_manager="inferops.dynamo",
                               body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"},
                                     "data": {"x": "other"}})
    assert "y" not in out.data and "a" not in (out.metadata.labels or {})
    # YAML body and missing fieldManager
    code, st = raw_patch(kubesim_cluster, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yml}\ndata: {k: v}\n",
                         "fieldManager=m")
    assert code == 201 and st["data"] == {"k": "v"}
    code, st = raw_patch(kubesim_cluster, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yml}\n", "")
    assert code == 422 and st["details"]["causes"][0]["field"] == "fieldManager"


def raw_patch(cluster, ns, yaml_body, qs):
    return raw(cluster, "PATCH", f"/api/v1/namespaces/{ns}/configmaps/yml?{qs}", yaml_body,
               "application/apply-patch+yaml")


def test_custom_resource_validation_422(k8s_dynamic, k8s_namespace):
    dgd = k8s_dynamic.resources.get(api_version="nvidia.com/v1beta1", kind="DynamoGraphDeployment")
    with pytest.raises(ApiException) as e:
        dgd.create(namespace=k8s_namespace, body={
            "apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment", "metadata": {"name": "bad"},
            "spec": {"backendFramework": "nope", "components": [{"name": "W", "replicas": "x"}]}})
    st = json.loads(e.value.body)
    assert e.value.status == 422 and st["reason"] == "Invalid"
    assert st["message"].startswith('DynamoGraphDeployment.nvidia.com "bad" is invalid: [')
    fields = {c["field"] for c in st["details"]["causes"]}
    assert {"spec.backendFramework", "spec.components[0].replicas"} <= fields
    # unknown fields are pruned, not rejected
    ok = dgd.create(namespace=k8s_namespace, body={
        "apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment", "metadata": {"name": "good"},
        "spec": {"components": [{"name": "Frontend", "type": "frontend", "replicas": 0, "zzz": 1}],
                 "status_typo": 1}, "status": {"state": "successful"}})
    assert (ok.to_dict().get("status") or {}).get("state") != "successful"  # status ignored on create
    assert ok.metadata.generation == 1


def test_crd_registration_roundtrip(k8s_dynamic, kubesim_cluster):
    crds = k8s_dynamic.resources.get(api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition")
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"kind": "Widget", "plural": "widgets", "singular": "widget"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "properties": {"spec": {"type": "object", "required": ["size"],
                                                                  "properties": {"size": {"type": "integer"}}}}}}}]}}
    crds.create(body=crd)
    assert raw(kubesim_cluster, "GET", "/apis/example.com/v1")[0] == 200
    code, st = raw(kubesim_cluster, "POST", "/apis/example.com/v1/namespaces/default/widgets",
                   {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {}})
    assert code == 422 and st["details"]["causes"] == [{"reason": "FieldValueRequired", "message": "Required value",
                                                       "field": "spec.size"}]
    code, _ = raw(kubesim_cluster, "POST", "/apis/example.com/v1/namespaces/default/widgets",
                  {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 3}})
    assert code == 201
    crds.delete(name="widgets.example.com")
    assert raw(kubesim_cluster, "GET", "/apis/example.com/v1")[0] == 404


def test_namespace_delete_and_owner_propagation(k8s_dynamic):
    nsr = k8s_dynamic.resources.get(api_version="v1", kind="Namespace")
    cm = k8s_dynamic.resources.get(api_version="v1", kind="ConfigMap")
    nsr.create(body={"metadata": {"name": "gone"}})
    owner = cm.create(namespace="gone", body={"metadata": {"name": "owner"}})
    cm.create(namespace="gone", body={"metadata": {"name": "child", "ownerReferences": [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.metadata.uid}]}})
    cm.delete(namespace="gone", name="owner")
    assert [i.metadata.name for i in cm.get(namespace="gone").items] == ["kube-root-ca.crt"]
    cm.create(namespace="gone", body={"metadata": {"name": "x"}})
    # a deleted namespace is Terminating until the namespace controller has emptied it
    assert nsr.delete(name="gone").status.phase == "Terminating"

    def gone():
        try:
            nsr.get(name="gone")
        except ApiException as e:
            return e.status == 404
        return False
    wait_for(gone, what="namespace gone")
    assert cm.get(namespace="gone").items == []


def test_events_and_ssar(k8s_dynamic, k8s_namespace):
    ev = k8s_dynamic.resources.get(api_version="v1", kind="Event")
    ev.create(namespace=k8s_namespace, body={"metadata": {"name": "e1"}, "reason": "Test", "message": "m",
                                            "involvedObject": {"kind": "Pod", "name": "p"}})
    ev2 = k8s_dynamic.resources.get(api_version="events.k8s.io/v1", kind="Event")
    assert [e.metadata.name for e in ev2.get(namespace=k8s_namespace).items] == ["e1"]
    ssar = k8s_dynamic.resources.get(api_version="authorization.k8s.io/v1", kind="SelfSubjectAccessReview")
    out = ssar.create(body={"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                            "spec": {"resourceAttributes": {"verb": "create", "group": "batch", "resource": "jobs",
                                                            "namespace": k8s_namespace}}})
    assert out.status.allowed is True

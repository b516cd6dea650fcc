"""kubesim answers as kube-apiserver v1.36 does where kubernetes.core and the collection look:
defaulting, zero-valued status, immutable fields and selectors, finalizers and graceful deletion,
delete preconditions, ReplicaSets behind Deployments, new namespaces, ServiceAccount admission, paging.

Every test runs on kubesim and on the real control plane (``backend_cluster``): the expectations are
the real server's answers."""

from __future__ import annotations

import json
import uuid

import pytest
from helpers import wait_for
from kubernetes.dynamic.exceptions import ApiException

pytestmark = pytest.mark.cluster


@pytest.fixture
def dyn(backend_cluster):
    return backend_cluster.dynamic()


@pytest.fixture
def ns(dyn):
    name = "fid-" + uuid.uuid4().hex[:8]
    nsr = dyn.resources.get(api_version="v1", kind="Namespace")
    nsr.create(body={"metadata": {"name": name}})
    # what the ServiceAccount and root-CA publisher controllers add (a pod needs the default ServiceAccount)
    sa = dyn.resources.get(api_version="v1", kind="ServiceAccount")
    cm = dyn.resources.get(api_version="v1", kind="ConfigMap")
    wait_for(lambda: any(i.metadata.name == "default" for i in sa.get(namespace=name).items), what="default SA")
    wait_for(lambda: any(i.metadata.name == "kube-root-ca.crt" for i in cm.get(namespace=name).items), what="root CA")
    yield name
    try:
        nsr.delete(name=name)
    except ApiException:
        pass


def r(dyn, api_version, kind):
    return dyn.resources.get(api_version=api_version, kind=kind)


def error(call) -> tuple[int, dict]:
    with pytest.raises(ApiException) as e:
        call()
    return e.value.status, json.loads(e.value.body)


def deployment(name="web", labels=None, replicas=None, image="busybox:1.36"):
    labels = labels or {"app": name}
    spec = {"selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": image}]}}}
    if replicas is not None:
        spec["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": spec}


def merge(res, ns, name, body):
    return res.patch(name=name, namespace=ns, body=body, content_type="application/merge-patch+json")


# ------------------------------------------------------------------------------------- defaulting
def test_defaults_of_built_in_kinds(dyn, ns):
    d = r(dyn, "apps/v1", "Deployment").create(namespace=ns, body=deployment(image="busybox")).to_dict()
    assert d["spec"]["replicas"] == 1 and d["spec"]["revisionHistoryLimit"] == 10
    assert d["spec"]["progressDeadlineSeconds"] == 600
    assert d["spec"]["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}
    pod_spec = d["spec"]["template"]["spec"]
    assert {k: pod_spec[k] for k in ("restartPolicy", "dnsPolicy", "terminationGracePeriodSeconds", "schedulerName",
                                     "securityContext")} == {
        "restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "terminationGracePeriodSeconds": 30,
        "schedulerName": "default-scheduler", "securityContext": {}}
    c = pod_spec["containers"][0]
    assert (c["imagePullPolicy"], c["terminationMessagePath"], c["terminationMessagePolicy"], c["resources"]) == (
        "Always", "/dev/termination-log", "File", {})

    sts = r(dyn, "apps/v1", "StatefulSet").create(namespace=ns, body={
        "metadata": {"name": "db"}, "spec": {"serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                                             "template": {"metadata": {"labels": {"app": "db"}},
                                                          "spec": {"containers": [{"name": "c", "image": "busybox:1"}]}}}}
    ).to_dict()
    assert sts["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert sts["spec"]["podManagementPolicy"] == "OrderedReady" and sts["spec"]["replicas"] == 1
    assert sts["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent"

    svc = r(dyn, "v1", "Service").create(namespace=ns, body={
        "metadata": {"name": "web"}, "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}).to_dict()
    assert (svc["spec"]["type"], svc["spec"]["sessionAffinity"], svc["spec"]["ipFamilies"],
            svc["spec"]["ipFamilyPolicy"], svc["spec"]["internalTrafficPolicy"]) == (
        "ClusterIP", "None", ["IPv4"], "SingleStack", "Cluster")
    assert svc["spec"]["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]
    assert svc["spec"]["clusterIP"] and svc["spec"]["clusterIPs"] == [svc["spec"]["clusterIP"]]

    job = r(dyn, "batch/v1", "Job").create(namespace=ns, body={
        "metadata": {"name": "once"}, "spec": {"template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox:1"}]}}}}).to_dict()
    uid = job["metadata"]["uid"]
    assert {k: job["spec"][k] for k in ("backoffLimit", "completions", "parallelism", "completionMode", "suspend",
                                        "manualSelector", "podReplacementPolicy")} == {
        "backoffLimit": 6, "completions": 1, "parallelism": 1, "completionMode": "NonIndexed", "suspend": False,
        "manualSelector": False, "podReplacementPolicy": "TerminatingOrFailed"}
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert job["spec"]["template"]["metadata"]["labels"] == job["metadata"]["labels"] == {
        "batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "once",
        "controller-uid": uid, "job-name": "once"}

    assert r(dyn, "v1", "Secret").create(namespace=ns, body={
        "metadata": {"name": "s"}, "stringData": {"a": "b"}}).to_dict()["type"] == "Opaque"
    pvc = r(dyn, "v1", "PersistentVolumeClaim").create(namespace=ns, body={
        "metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
                                              "resources": {"requests": {"storage": "1Gi"}}}}).to_dict()
    assert pvc["spec"]["volumeMode"] == "Filesystem"

    pod = r(dyn, "v1", "Pod").create(namespace=ns, body={
        "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox:1.36",
                                                            "ports": [{"containerPort": 80}]}]}}).to_dict()
    ps = pod["spec"]
    assert (ps["serviceAccountName"], ps["enableServiceLinks"], ps["priority"], ps["restartPolicy"],
            ps["containers"][0]["ports"][0]["protocol"]) == ("default", True, 0, "Always", "TCP")
    assert {t["key"]: t["tolerationSeconds"] for t in ps["tolerations"]} == {
        "node.kubernetes.io/not-ready": 300, "node.kubernetes.io/unreachable": 300}


# ------------------------------------------------------------------------------ zero-valued status
def test_a_deployment_scaled_to_zero_reads_as_ready(dyn, ns):
    dep = r(dyn, "apps/v1", "Deployment")
    dep.create(namespace=ns, body=deployment(replicas=0))

    def observed():
        st = dep.get(namespace=ns, name="web").to_dict().get("status") or {}
        return st if st.get("observedGeneration") == 1 else None
    st = wait_for(observed, what="observedGeneration")
    # replicas, readyReplicas, availableReplicas, updatedReplicas: omitted when zero (omitempty)
    assert not {"replicas", "readyReplicas", "availableReplicas", "updatedReplicas", "unavailableReplicas"} & set(st)
    # what kubernetes.core's deployment waiter compares
    assert st.get("availableReplicas") == st.get("replicas")


def test_removing_the_last_taint_leaves_no_taints_field(dyn):
    # PreferNoSchedule on a node that has no taint of its own: harmless to the tests running beside this one
    nodes = r(dyn, "v1", "Node")
    node = next(n.metadata.name for n in nodes.get().items if not (n.spec.taints or []))
    key = "fidelity.inferops.dev/" + uuid.uuid4().hex[:8]
    nodes.patch(name=node, body={"spec": {"taints": [{"key": key, "effect": "PreferNoSchedule"}]}},
                content_type="application/merge-patch+json")
    try:
        assert [t["key"] for t in nodes.get(name=node).to_dict()["spec"]["taints"]] == [key]
    finally:
        nodes.patch(name=node, body={"spec": {"taints": []}}, content_type="application/merge-patch+json")
    # NodeSpec.taints is omitempty: kubernetes.core's k8s_taint checks `spec.taints is undefined`
    assert "taints" not in nodes.get(name=node).to_dict()["spec"]


# ------------------------------------------------------------------------ selectors and immutable fields
def test_selectors_and_immutable_fields(dyn, ns):
    dep = r(dyn, "apps/v1", "Deployment")
    code, st = error(lambda: dep.create(namespace=ns, body=deployment(labels={"app": "other"})))
    assert (code, st["reason"]) == (422, "Invalid")
    assert st["message"] == ('Deployment.apps "web" is invalid: spec.template.metadata.labels: Invalid value: '
                             '{"app":"other"}: `selector` does not match template `labels`')
    assert st["details"]["causes"][0]["field"] == "spec.template.metadata.labels"
    dep.create(namespace=ns, body=deployment())
    code, st = error(lambda: merge(dep, ns, "web", {"spec": {"selector": {"matchLabels": {"app": "web", "b": "c"}},
                                                             "template": {"metadata": {"labels": {"b": "c"}}}}}))
    assert code == 422 and st["message"] == ('Deployment.apps "web" is invalid: spec.selector: Invalid value: '
                                             '{"matchLabels":{"app":"web","b":"c"}}: field is immutable')

    job = r(dyn, "batch/v1", "Job")
    job.create(namespace=ns, body={"metadata": {"name": "j"}, "spec": {"template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox:1"}]}}}})
    code, st = error(lambda: merge(job, ns, "j", {"spec": {"template": {"spec": {
        "containers": [{"name": "c", "image": "busybox:2"}]}}}}))
    assert code == 422 and st["message"].startswith('Job.batch "j" is invalid: spec.template: Invalid value: ')
    assert st["message"].endswith(": field is immutable") and st["details"]["causes"][0]["field"] == "spec.template"

    pvc = r(dyn, "v1", "PersistentVolumeClaim")
    pvc.create(namespace=ns, body={"metadata": {"name": "p"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "storageClassName": "local-rwo", "resources": {"requests": {"storage": "2Gi"}}}})
    for change in ({"storageClassName": "shared-rwx"}, {"accessModes": ["ReadWriteMany"]}):
        code, st = error(lambda change=change: merge(pvc, ns, "p", {"spec": change}))
        assert code == 422 and st["message"].startswith(
            'PersistentVolumeClaim "p" is invalid: spec: Forbidden: spec is immutable after creation except '
            "resources.requests and volumeAttributesClassName for bound claims")
    wait_for(lambda: (pvc.get(namespace=ns, name="p").status or {}).get("phase") == "Bound", what="bound")
    code, st = error(lambda: merge(pvc, ns, "p", {"spec": {"resources": {"requests": {"storage": "1Gi"}}}}))
    assert code == 422 and st["message"] == ('PersistentVolumeClaim "p" is invalid: spec.resources.requests.storage: '
                                             "Forbidden: field can not be less than status.capacity")

    svc = r(dyn, "v1", "Service")
    svc.create(namespace=ns, body={"metadata": {"name": "s"}, "spec": {"selector": {"app": "x"}, "ports": [{"port": 80}]}})
    code, st = error(lambda: merge(svc, ns, "s", {"spec": {"clusterIP": "10.96.0.77", "clusterIPs": ["10.96.0.77"]}}))
    assert code == 422 and st["message"] == ('Service "s" is invalid: spec.clusterIPs[0]: Invalid value: '
                                             '["10.96.0.77"]: may not change once set')

    cm = r(dyn, "v1", "ConfigMap")
    cm.create(namespace=ns, body={"metadata": {"name": "frozen"}, "data": {"a": "b"}, "immutable": True})
    code, st = error(lambda: merge(cm, ns, "frozen", {"data": {"a": "c"}}))
    assert code == 422 and st["message"] == ('ConfigMap "frozen" is invalid: data: Forbidden: field is immutable '
                                             "when `immutable` is set")
    code, st = error(lambda: merge(cm, ns, "frozen", {"immutable": False}))
    assert code == 422 and st["details"]["causes"][0]["field"] == "immutable"
    sec = r(dyn, "v1", "Secret")
    sec.create(namespace=ns, body={"metadata": {"name": "frozen"}, "stringData": {"a": "b"}, "immutable": True})
    code, st = error(lambda: merge(sec, ns, "frozen", {"stringData": {"a": "c"}}))
    assert code == 422 and st["message"] == ('Secret "frozen" is invalid: data: Forbidden: field is immutable '
                                             "when `immutable` is set")


# --------------------------------------------------------------- finalizers, preconditions, graceful deletion
def test_finalizers_keep_an_object_until_they_are_removed(dyn, ns):
    cm = r(dyn, "v1", "ConfigMap")
    cm.create(namespace=ns, body={"metadata": {"name": "held", "finalizers": ["example.com/hold"]}})
    deleted = cm.delete(namespace=ns, name="held").to_dict()
    assert deleted["metadata"]["deletionTimestamp"] and deleted["metadata"]["deletionGracePeriodSeconds"] == 0
    assert cm.get(namespace=ns, name="held").metadata.finalizers == ["example.com/hold"]
    code, st = error(lambda: merge(cm, ns, "held", {"metadata": {"finalizers": ["example.com/hold", "example.com/more"]}}))
    assert code == 422 and st["message"] == (
        'ConfigMap "held" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is '
        'being deleted, found new finalizers []string{"example.com/more"}')
    merge(cm, ns, "held", {"metadata": {"finalizers": None}})
    code, _ = error(lambda: cm.get(namespace=ns, name="held"))
    assert code == 404


def test_delete_preconditions(dyn, ns):
    cm = r(dyn, "v1", "ConfigMap")
    created = cm.create(namespace=ns, body={"metadata": {"name": "c"}})
    uid, rv = created.metadata.uid, created.metadata.resourceVersion
    code, st = error(lambda: cm.delete(namespace=ns, name="c", body={"preconditions": {
        "uid": "00000000-0000-0000-0000-000000000000"}}))
    assert (code, st["reason"]) == (409, "Conflict") and st["message"] == (
        'Operation cannot be fulfilled on ConfigMap "c": the UID in the precondition '
        f"(00000000-0000-0000-0000-000000000000) does not match the UID in record ({uid}). "
        "The object might have been deleted and then recreated")
    code, st = error(lambda: cm.delete(namespace=ns, name="c", body={"preconditions": {"resourceVersion": "1"}}))
    assert code == 409 and st["message"] == (
        'Operation cannot be fulfilled on ConfigMap "c": the ResourceVersion in the precondition (1) does not match '
        f"the ResourceVersion in record ({rv}). The object might have been modified")
    assert cm.delete(namespace=ns, name="c", body={"preconditions": {"uid": uid, "resourceVersion": rv}}).status == "Success"


def test_pods_are_deleted_gracefully(dyn, ns):
    pods = r(dyn, "v1", "Pod")
    pods.create(namespace=ns, body={"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox:1"}]}})
    wait_for(lambda: pods.get(namespace=ns, name="p").spec.nodeName, what="scheduled")
    gone = pods.delete(namespace=ns, name="p").to_dict()
    assert gone["metadata"]["deletionTimestamp"] and gone["metadata"]["deletionGracePeriodSeconds"] == 30

    def absent():
        try:
            pods.get(namespace=ns, name="p")
        except ApiException as e:
            return e.status == 404
        return False
    wait_for(absent, timeout=40, what="pod removed after its grace period")


# -------------------------------------------------------------------------------- Deployments
def test_deployments_roll_through_replicasets(dyn, ns):
    dep, rs, pods = r(dyn, "apps/v1", "Deployment"), r(dyn, "apps/v1", "ReplicaSet"), r(dyn, "v1", "Pod")
    dep.create(namespace=ns, body=deployment(replicas=2))

    def settled(revision):
        d = dep.get(namespace=ns, name="web").to_dict()
        st = d.get("status") or {}
        ok = (st.get("observedGeneration") == d["metadata"]["generation"] and st.get("updatedReplicas") == 2
              and st.get("availableReplicas") == 2 and st.get("replicas") == 2
              and (d["metadata"].get("annotations") or {}).get("deployment.kubernetes.io/revision") == revision)
        return d if ok else None
    wait_for(lambda: settled("1"), timeout=60, what="revision 1 available")
    [first] = rs.get(namespace=ns).items
    h = first.metadata.labels["pod-template-hash"]
    assert first.metadata.name == f"web-{h}" and first.metadata.ownerReferences[0].kind == "Deployment"
    assert first.metadata.annotations["deployment.kubernetes.io/revision"] == "1"
    assert first.to_dict()["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": h}
    owned = [p for p in pods.get(namespace=ns).items if p.metadata.ownerReferences]
    assert len(owned) == 2 and {p.metadata.ownerReferences[0].kind for p in owned} == {"ReplicaSet"}
    assert {p.metadata.labels["pod-template-hash"] for p in owned} == {h}

    merge(dep, ns, "web", {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox:1.37"}]}}}})
    wait_for(lambda: settled("2"), timeout=90, what="revision 2 available")
    by_rev = {x.metadata.annotations["deployment.kubernetes.io/revision"]: x for x in rs.get(namespace=ns).items}
    assert set(by_rev) == {"1", "2"} and by_rev["1"].spec.replicas == 0 and by_rev["2"].spec.replicas == 2
    conds = {c["type"]: c for c in dep.get(namespace=ns, name="web").to_dict()["status"]["conditions"]}
    assert conds["Progressing"]["reason"] == "NewReplicaSetAvailable"
    assert conds["Progressing"]["message"] == f'ReplicaSet "{by_rev["2"].metadata.name}" has successfully progressed.'
    assert conds["Available"]["reason"] == "MinimumReplicasAvailable"

    # back to the first template: its ReplicaSet becomes revision 3
    merge(dep, ns, "web", {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}}})
    wait_for(lambda: settled("3"), timeout=90, what="revision 3 available")
    names = {x.metadata.annotations["deployment.kubernetes.io/revision"]: x.metadata.name for x in rs.get(namespace=ns).items}
    assert names == {"2": by_rev["2"].metadata.name, "3": first.metadata.name}


def test_a_paused_deployment_is_not_progressing(dyn, ns):
    dep = r(dyn, "apps/v1", "Deployment")
    dep.create(namespace=ns, body={**deployment(replicas=1), "spec": {**deployment(replicas=1)["spec"], "paused": True}})

    def progressing():
        conds = (dep.get(namespace=ns, name="web").to_dict().get("status") or {}).get("conditions") or []
        return next((c for c in conds if c["type"] == "Progressing"), None)
    c = wait_for(progressing, what="Progressing condition")
    assert (c["status"], c["reason"], c["message"]) == ("Unknown", "DeploymentPaused", "Deployment is paused")
    assert r(dyn, "apps/v1", "ReplicaSet").get(namespace=ns).items == []


# -------------------------------------------------------------- namespaces, ServiceAccount admission, paging
def test_new_namespaces_and_service_account_admission(dyn, ns):
    assert [c.metadata.name for c in r(dyn, "v1", "ConfigMap").get(namespace=ns).items] == ["kube-root-ca.crt"]
    code, st = error(lambda: r(dyn, "v1", "Pod").create(namespace=ns, body={
        "metadata": {"name": "p"}, "spec": {"serviceAccountName": "nope",
                                            "containers": [{"name": "c", "image": "busybox:1"}]}}))
    assert (code, st["reason"]) == (403, "Forbidden")
    assert st["message"] == (f'pods "p" is forbidden: error looking up service account {ns}/nope: '
                             'serviceaccount "nope" not found')


def test_list_limit_and_continue(dyn, ns):
    cm = r(dyn, "v1", "ConfigMap")
    for i in range(3):
        cm.create(namespace=ns, body={"metadata": {"name": f"c{i}"}})
    first = cm.get(namespace=ns, limit=2)
    assert len(first.items) == 2 and first.metadata["continue"] and first.metadata.remainingItemCount == 2
    second = cm.get(namespace=ns, limit=2, _continue=first.metadata["continue"])
    assert len(second.items) == 2 and not second.metadata["continue"]
    assert sorted(i.metadata.name for i in [*first.items, *second.items]) == ["c0", "c1", "c2", "kube-root-ca.crt"]


def test_a_rollout_whose_pods_cannot_be_created_stays_unavailable(dyn, ns):
    dep, sa = r(dyn, "apps/v1", "Deployment"), r(dyn, "v1", "ServiceAccount")
    sa.create(namespace=ns, body={"metadata": {"name": "app"}})
    body = deployment(replicas=1)
    body["spec"]["strategy"] = {"rollingUpdate": {"maxUnavailable": 0}}
    body["spec"]["template"]["spec"]["serviceAccountName"] = "app"
    dep.create(namespace=ns, body=body)
    wait_for(lambda: (dep.get(namespace=ns, name="web").to_dict().get("status") or {}).get("availableReplicas") == 1,
             timeout=60, what="available")
    sa.delete(namespace=ns, name="app")
    merge(dep, ns, "web", {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox:1.37"}]}}}})

    def failing():
        st = dep.get(namespace=ns, name="web").to_dict().get("status") or {}
        conds = {c["type"]: c for c in st.get("conditions") or []}
        return (st, conds) if "ReplicaFailure" in conds else None
    st, conds = wait_for(failing, timeout=60, what="ReplicaFailure")
    # the old pod still serves; the new ReplicaSet wants one it cannot create: not ready for kubernetes.core
    assert (st["replicas"], st["availableReplicas"], st["unavailableReplicas"], st.get("updatedReplicas")) == (1, 1, 1, None)
    new_rs = next(x for x in r(dyn, "apps/v1", "ReplicaSet").get(namespace=ns).items
                  if x.metadata.annotations["deployment.kubernetes.io/revision"] == "2")
    assert conds["ReplicaFailure"]["reason"] == "FailedCreate"
    assert conds["ReplicaFailure"]["message"] == (f'pods "{new_rs.metadata.name}-" is forbidden: error looking up '
                                                  f'service account {ns}/app: serviceaccount "app" not found')
    assert conds["Progressing"]["status"] == "True" and conds["Available"]["status"] == "True"

"""Defaulting of built-in kinds, as kube-apiserver's registry does it (SetDefaults_* of k8s.io/api
v1.36), and the status fields its types leave out when zero (``omitempty``).

Applied on every create and update, before validation, so a client reads back what a real server
stores: a Deployment without ``replicas`` has ``replicas: 1``, a StatefulSet gets ``updateStrategy``,
a pod template gets ``dnsPolicy``/``restartPolicy``/``terminationGracePeriodSeconds``…"""

from __future__ import annotations

from typing import Any

TCP = "TCP"


def _image_pull_policy(image: str) -> str:
    # the tag is what follows the last ':' after the last '/' (a registry port is not a tag)
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    tag = last.rsplit(":", 1)[1] if ":" in last else ""
    return "Always" if tag in ("", "latest") else "IfNotPresent"


def _container(c: dict) -> None:
    if not isinstance(c, dict):
        return
    if c.get("image"):
        c.setdefault("imagePullPolicy", _image_pull_policy(str(c["image"])))
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    c.setdefault("resources", {})
    for p in c.get("ports") or []:
        if isinstance(p, dict):
            p.setdefault("protocol", TCP)
    for e in c.get("env") or []:
        ref = ((e or {}).get("valueFrom") or {}).get("fieldRef") if isinstance(e, dict) else None
        if isinstance(ref, dict):
            ref.setdefault("apiVersion", "v1")
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        pr = c.get(probe)
        if isinstance(pr, dict):
            for k, v in (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1),
                         ("failureThreshold", 3)):
                pr.setdefault(k, v)
            for handler in ("httpGet",):
                if isinstance(pr.get(handler), dict):
                    pr[handler].setdefault("scheme", "HTTP")


def _volume(v: dict) -> None:
    if not isinstance(v, dict):
        return
    for src in ("configMap", "secret", "projected", "downwardAPI"):
        if isinstance(v.get(src), dict):
            v[src].setdefault("defaultMode", 420)
    if isinstance(v.get("hostPath"), dict):
        v["hostPath"].setdefault("type", "")


def pod_spec(spec: dict) -> None:
    if not isinstance(spec, dict):
        return
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(key) or []:
            _container(c)
    for v in spec.get("volumes") or []:
        _volume(v)


def _template(spec: dict) -> None:
    tmpl = spec.get("template")
    if isinstance(tmpl, dict):
        pod_spec(tmpl.setdefault("spec", {}))


def deployment(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    strategy = spec.setdefault("strategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        ru = strategy.setdefault("rollingUpdate", {})
        ru.setdefault("maxUnavailable", "25%")
        ru.setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    _template(spec)


def statefulset(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = spec.setdefault("updateStrategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        strategy.setdefault("rollingUpdate", {}).setdefault("partition", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    policy = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
    policy.setdefault("whenDeleted", "Retain")
    policy.setdefault("whenScaled", "Retain")
    for claim in spec.get("volumeClaimTemplates") or []:
        if isinstance(claim, dict):
            claim.setdefault("apiVersion", "v1")
            claim.setdefault("kind", "PersistentVolumeClaim")
            claim.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")
            claim.setdefault("status", {"phase": "Pending"})
    _template(spec)


def daemonset(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    strategy = spec.setdefault("updateStrategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        ru = strategy.setdefault("rollingUpdate", {})
        ru.setdefault("maxUnavailable", 1)
        ru.setdefault("maxSurge", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    _template(spec)


def replicaset(obj: dict) -> None:
    obj.setdefault("spec", {}).setdefault("replicas", 1)
    _template(obj["spec"])


def job(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    meta = obj.setdefault("metadata", {})
    uid, name = meta.get("uid", ""), meta.get("name", "")
    if not spec.get("manualSelector") and uid:
        # what the Job registry's PrepareForCreate generates: a selector on the Job's uid, and the
        # same labels on the template (and on the Job when it has none)
        labels = {"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name,
                  "controller-uid": uid, "job-name": name}
        spec.setdefault("selector", {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
        tmeta = spec.setdefault("template", {}).setdefault("metadata", {})
        tmeta["labels"] = {**(tmeta.get("labels") or {}), **labels}
        if not meta.get("labels"):
            meta["labels"] = dict(labels)
    spec.setdefault("manualSelector", False)
    spec.setdefault("completionMode", "NonIndexed")
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    _template(spec)


def pod(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    pod_spec(spec)
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("priority", 0)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    # ServiceAccount admission: the pod runs as the namespace's default ServiceAccount
    sa = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
    spec["serviceAccountName"] = sa
    spec["serviceAccount"] = sa
    # DefaultTolerationSeconds admission
    tolerations = spec.setdefault("tolerations", [])
    for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
        if not any(isinstance(t, dict) and t.get("key") == key for t in tolerations):
            tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300})


def service(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if spec["type"] != "ExternalName":
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        spec.setdefault("internalTrafficPolicy", "Cluster")
    if spec["type"] in ("NodePort", "LoadBalancer"):
        spec.setdefault("externalTrafficPolicy", "Cluster")
    for p in spec.get("ports") or []:
        if isinstance(p, dict):
            p.setdefault("protocol", TCP)
            if spec["type"] != "ExternalName" and "port" in p:
                p.setdefault("targetPort", p["port"])


def secret(obj: dict) -> None:
    obj.setdefault("type", "Opaque")


def pvc(obj: dict) -> None:
    obj.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")


def node(obj: dict) -> None:
    # the Node registry stamps NoExecute taints with the time they were added (the taint manager's clock)
    import time

    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    for t in spec.get("taints") or []:
        if isinstance(t, dict) and t.get("effect") == "NoExecute" and not t.get("timeAdded"):
            t["timeAdded"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    # NodeSpec's `taints` and `unschedulable` are omitempty: the last taint removed (or an uncordon)
    # leaves no field behind, which is what a client checking `spec.taints is undefined` reads
    for field in ("taints", "unschedulable"):
        if field in spec and spec[field] in ([], False, None):
            del spec[field]


def network_policy(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    if "policyTypes" not in spec:
        spec["policyTypes"] = ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]


BY_KIND = {
    ("apps", "Deployment"): deployment, ("apps", "StatefulSet"): statefulset, ("apps", "DaemonSet"): daemonset,
    ("apps", "ReplicaSet"): replicaset, ("batch", "Job"): job, ("", "Pod"): pod, ("", "Service"): service,
    ("", "Secret"): secret, ("", "PersistentVolumeClaim"): pvc, ("", "Node"): node,
    ("networking.k8s.io", "NetworkPolicy"): network_policy,
}


def apply(group: str, kind: str, obj: dict) -> None:
    """Default ``obj`` of a built-in kind in place."""
    fn = BY_KIND.get((group, kind))
    if fn is not None and isinstance(obj, dict):
        fn(obj)


# ------------------------------------------------------------------------------- status
# Status fields of int type tagged `omitempty` in k8s.io/api: absent when zero. The others are
# always present (e.g. a StatefulSet's `replicas` and `availableReplicas`, a ReplicaSet's `replicas`).
OMIT_ZERO = {
    ("apps", "Deployment"): ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas",
                             "availableReplicas", "unavailableReplicas", "collisionCount"),
    ("apps", "ReplicaSet"): ("fullyLabeledReplicas", "readyReplicas", "availableReplicas", "observedGeneration"),
    ("apps", "StatefulSet"): ("observedGeneration", "readyReplicas", "currentReplicas", "updatedReplicas",
                              "collisionCount"),
    ("apps", "DaemonSet"): ("observedGeneration", "updatedNumberScheduled", "numberAvailable", "numberUnavailable",
                            "collisionCount"),
    ("batch", "Job"): ("active", "succeeded", "failed"),
}
ALWAYS = {
    ("apps", "ReplicaSet"): ("replicas",),
    ("apps", "StatefulSet"): ("replicas", "availableReplicas"),
    ("apps", "DaemonSet"): ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady"),
}


def status(group: str, kind: str, st: dict[str, Any]) -> dict[str, Any]:
    """``st`` as the real server serialises it: zero `omitempty` counts dropped, required ones present."""
    out = {k: v for k, v in st.items() if not (k in OMIT_ZERO.get((group, kind), ()) and v in (0, None))}
    for k in ALWAYS.get((group, kind), ()):
        out.setdefault(k, 0)
    return out

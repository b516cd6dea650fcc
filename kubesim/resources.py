"""Built-in kinds served by kubesim and the API resource descriptors used for discovery."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Resource:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool = True
    short_names: list[str] = field(default_factory=list)
    subresources: list[str] = field(default_factory=list)
    verbs: list[str] = field(
        default_factory=lambda: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
    )
    generation: bool = False  # metadata.generation maintained (bumped on spec change)
    crd: dict | None = None  # the CRD object for custom resources
    create_only: bool = False  # e.g. SelfSubjectAccessReview

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def key(self) -> str:
        """Storage key: group/plural (shared by all versions of a kind)."""
        return f"{self.group}/{self.plural}"

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def has_status(self) -> bool:
        return "status" in self.subresources

    @property
    def group_resource(self) -> str:
        """e.g. ``jobs.batch`` or ``pods``."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


_S = ["status"]
BUILTINS: list[Resource] = [
    Resource("", "v1", "Namespace", "namespaces", False, ["ns"], _S, ["create", "delete", "get", "list", "patch", "update", "watch"]),
    Resource("", "v1", "Node", "nodes", False, ["no"], _S),
    Resource("", "v1", "Pod", "pods", True, ["po"], ["status", "log", "eviction"], generation=True),
    Resource("", "v1", "Service", "services", True, ["svc"], ["status", "proxy"]),
    Resource("", "v1", "Secret", "secrets", True),
    Resource("", "v1", "ConfigMap", "configmaps", True, ["cm"]),
    Resource("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", True, ["pvc"], _S),
    Resource("", "v1", "PersistentVolume", "persistentvolumes", False, ["pv"], _S),
    Resource("", "v1", "Event", "events", True, ["ev"]),
    Resource("", "v1", "ServiceAccount", "serviceaccounts", True, ["sa"]),
    Resource("", "v1", "Endpoints", "endpoints", True, ["ep"]),
    Resource("events.k8s.io", "v1", "Event", "events", True, ["ev"]),
    Resource("storage.k8s.io", "v1", "StorageClass", "storageclasses", False, ["sc"]),
    Resource("batch", "v1", "Job", "jobs", True, [], _S, generation=True),
    Resource("apps", "v1", "Deployment", "deployments", True, ["deploy"], ["status", "scale"], generation=True),
    Resource("apps", "v1", "StatefulSet", "statefulsets", True, ["sts"], ["status", "scale"], generation=True),
    Resource("apps", "v1", "ReplicaSet", "replicasets", True, ["rs"], ["status", "scale"], generation=True),
    Resource("apps", "v1", "DaemonSet", "daemonsets", True, ["ds"], ["status"], generation=True),
    Resource("apps", "v1", "ControllerRevision", "controllerrevisions", True),
    Resource("coordination.k8s.io", "v1", "Lease", "leases", True),
    Resource("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", True, ["netpol"], generation=True),
    Resource("rbac.authorization.k8s.io", "v1", "Role", "roles", True),
    Resource("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", True),
    Resource("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", False),
    Resource("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", False),
    Resource("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", False,
             ["crd", "crds"], _S, generation=True),
    Resource("resource.k8s.io", "v1", "ResourceClaimTemplate", "resourceclaimtemplates", True),
    Resource("resource.k8s.io", "v1", "ResourceClaim", "resourceclaims", True, [], _S),
    Resource("resource.k8s.io", "v1", "DeviceClass", "deviceclasses", False, [], [], generation=True),
    Resource("authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", False,
             verbs=["create"], create_only=True),
]

# Core events are also readable through events.k8s.io: both share one storage key.
SHARED_STORAGE = {"events.k8s.io/events": "/events"}


def storage_key(res: Resource) -> str:
    return SHARED_STORAGE.get(res.key, res.key)


def crd_resources(crd: dict) -> list[Resource]:
    spec = crd.get("spec", {})
    names = spec.get("names", {})
    out = []
    for v in spec.get("versions") or []:
        if not v.get("served", True):
            continue
        subs = []
        if "status" in (v.get("subresources") or {}):
            subs.append("status")
        if "scale" in (v.get("subresources") or {}):
            subs.append("scale")
        out.append(Resource(spec.get("group", ""), v["name"], names.get("kind", ""), names.get("plural", ""),
                            spec.get("scope", "Namespaced") == "Namespaced", list(names.get("shortNames") or []),
                            subs, generation=True, crd=crd))
    return out

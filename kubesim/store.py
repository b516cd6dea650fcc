"""The object store of one simulated cluster and the API semantics of writes (create, update,
patch, server-side apply, delete with propagation, dryRun, generation, resourceVersion)."""

from __future__ import annotations

import copy
import json
import random
import re
import threading
import time
import uuid
from typing import Any

from . import defaults, openapi, patch, validation
from .resources import BUILTINS, Resource, crd_resources, storage_key
from .selectors import field_matches, labels_match, parse_label_selector


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def rand_suffix(n: int = 5) -> str:
    return "".join(random.choices("bcdfghjklmnpqrstvwxz2456789", k=n))


class ApiError(Exception):
    def __init__(self, code: int, reason: str, message: str, details: dict | None = None):
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details

    def status(self) -> dict:
        out = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": self.message, "reason": self.reason, "code": self.code}
        if self.details is not None:
            out["details"] = self.details
        return out


def _fold_string_data(res: Resource, obj: dict) -> None:
    """Secrets: like the real server, stringData is merged into data (base64) and not stored."""
    if res.kind == "Secret" and not res.group and isinstance(obj.get("stringData"), dict):
        import base64

        data = obj.setdefault("data", {}) or {}
        obj["data"] = data
        for k, v in obj.pop("stringData").items():
            data[k] = base64.b64encode(str(v).encode()).decode()


def not_found(res: Resource, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{res.group_resource} "{name}" not found',
                    {"name": name, "group": res.group, "kind": res.plural})


_NAME_RX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_RX = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")

# ---------------------------------------------------------------------------------- store


class Store:
    """Objects of one cluster. Every public method takes the lock."""

    def __init__(self, user: str = "kubesim-user"):
        self.lock = threading.RLock()
        self.rv = 1000
        self.objects: dict[str, dict[tuple[str, str], dict]] = {}
        self.by_gv: dict[str, dict[str, Resource]] = {}  # "group/version" -> plural -> Resource
        self.crds: dict[str, dict] = {}  # crd name -> crd
        self.user = user
        self.forbidden: list[dict] = []  # [{"group", "resource", "namespace" or None, "verbs"}]
        self.listeners: list = []  # callables(event, res, obj)
        for r in BUILTINS:
            self.add_resource(r)

    # -- kinds
    def add_resource(self, r: Resource) -> None:
        gv = f"{r.group}/{r.version}"
        self.by_gv.setdefault(gv, {})[r.plural] = r
        self.objects.setdefault(storage_key(r), {})

    def resource(self, group: str, version: str, plural: str) -> Resource | None:
        return self.by_gv.get(f"{group}/{version}", {}).get(plural)

    def resource_for_kind(self, api_version: str, kind: str) -> Resource | None:
        group, _, version = api_version.rpartition("/")
        for r in self.by_gv.get(f"{group}/{version}", {}).values():
            if r.kind == kind:
                return r
        return None

    def any_version(self, group: str, plural: str) -> Resource | None:
        for gv, rs in self.by_gv.items():
            if gv.split("/")[0] == group and plural in rs:
                return rs[plural]
        return None

    def register_crd(self, crd: dict) -> None:
        name = crd["metadata"]["name"]
        self.unregister_crd(name, delete_objects=False)
        self.crds[name] = crd
        for r in crd_resources(crd):
            self.add_resource(r)

    def unregister_crd(self, name: str, delete_objects: bool = True) -> None:
        crd = self.crds.pop(name, None)
        if not crd:
            return
        group = crd["spec"]["group"]
        plural = crd["spec"]["names"]["plural"]
        for gv in list(self.by_gv):
            if gv.split("/")[0] == group:
                self.by_gv[gv].pop(plural, None)
                if not self.by_gv[gv]:
                    del self.by_gv[gv]
        if delete_objects:
            self.objects.pop(f"{group}/{plural}", None)

    # -- raw access (controllers)
    def bump(self) -> str:
        self.rv += 1
        return str(self.rv)

    def items(self, key: str, ns: str | None = None) -> list[dict]:
        with self.lock:
            objs = self.objects.get(key, {})
            if ns is None:
                return list(objs.values())
            return [o for (n, _), o in objs.items() if n == ns]

    def raw_get(self, key: str, ns: str, name: str) -> dict | None:
        return self.objects.get(key, {}).get((ns or "", name))

    def raw_put(self, key: str, obj: dict) -> dict:
        """Controller write (no validation). Returns the stored object."""
        with self.lock:
            meta = obj.setdefault("metadata", {})
            k = (meta.get("namespace", ""), meta["name"])
            old = self.objects.setdefault(key, {}).get(k)
            if old is None:
                meta.setdefault("uid", str(uuid.uuid4()))
                meta.setdefault("creationTimestamp", now())
            elif old == obj:
                return old
            meta["resourceVersion"] = self.bump()
            self.objects[key][k] = obj
            self._notify("put", key, obj)
            return obj

    def raw_set_status(self, key: str, ns: str, name: str, status: dict) -> None:
        with self.lock:
            obj = self.raw_get(key, ns, name)
            if obj is None or obj.get("status") == status:
                return
            new = dict(obj)
            new["metadata"] = dict(obj["metadata"])
            new["status"] = status
            new["metadata"]["resourceVersion"] = self.bump()
            self.objects[key][(ns or "", name)] = new

    def raw_delete(self, key: str, ns: str, name: str) -> dict | None:
        """Remove an object now (a controller's or the garbage collector's last step); its dependents
        are then deleted as the garbage collector does (background propagation)."""
        with self.lock:
            obj = self.objects.get(key, {}).pop((ns or "", name), None)
            if obj is not None:
                self._cascade(obj)
                self._notify("delete", key, obj)
            return obj

    def mark_deleted(self, key: str, obj: dict, grace: int | None = None) -> dict | None:
        """Delete ``obj`` as the API server does: an object with finalizers, or a pod on a node that
        is given a grace period, gets ``deletionTimestamp`` and stays until its finalizers are gone
        (pods: until the kubelet has stopped it); anything else is removed at once.
        Returns the object as it stays, or None when it is gone."""
        with self.lock:
            meta = obj["metadata"]
            k = (meta.get("namespace", ""), meta["name"])
            cur = self.objects.get(key, {}).get(k)
            if cur is None:
                return None
            if cur["metadata"].get("deletionTimestamp"):
                return cur
            graceful = key == "/pods" and grace != 0 and (cur.get("spec") or {}).get("nodeName") \
                and (cur.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
            if not graceful and not cur["metadata"].get("finalizers"):
                self.raw_delete(key, *k)
                return None
            new = copy.deepcopy(cur)
            nmeta = new["metadata"]
            if graceful:
                period = grace if grace is not None else (new.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
                nmeta["deletionTimestamp"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + int(period)))
                nmeta["deletionGracePeriodSeconds"] = int(period)
                if "generation" in nmeta:
                    nmeta["generation"] = int(nmeta["generation"]) + 1
            else:
                nmeta["deletionTimestamp"] = now()
                nmeta["deletionGracePeriodSeconds"] = 0
            nmeta["resourceVersion"] = self.bump()
            self.objects[key][k] = new
            self._notify("put", key, new)
            return new

    def dependents(self, uid: str) -> list[tuple[str, dict]]:
        return [(key, o) for key, objs in self.objects.items() for o in objs.values()
                if any(r.get("uid") == uid for r in o.get("metadata", {}).get("ownerReferences") or [])]

    def finish_deletion(self, key: str, obj: dict) -> None:
        """An object being deleted whose finalizers are all gone is removed."""
        m = obj["metadata"]
        if m.get("deletionTimestamp") and not m.get("finalizers") and key != "/pods" and obj.get("kind") != "Namespace":
            self.raw_delete(key, m.get("namespace", ""), m["name"])

    def _notify(self, event: str, key: str, obj: dict) -> None:
        for fn in self.listeners:
            try:
                fn(event, key, obj)
            except Exception:  # pragma: no cover - listeners must not break writes
                pass

    def _cascade(self, owner: dict) -> None:
        uid = owner.get("metadata", {}).get("uid")
        if owner.get("kind") == "Namespace":
            self.delete_namespace_content(owner["metadata"]["name"])
            return
        if not uid:
            return
        for key, o in self.dependents(uid):
            refs = o["metadata"].get("ownerReferences") or []
            others = [r for r in refs if r.get("uid") != uid]
            if others:  # still owned by someone else: only this reference goes (as the GC does)
                new = copy.deepcopy(o)
                new["metadata"]["ownerReferences"] = others
                self.raw_put(key, new)
            else:
                self.mark_deleted(key, o)

    def delete_namespace_content(self, ns: str) -> None:
        """What the namespace controller does for a terminating namespace."""
        for key, objs in list(self.objects.items()):
            for k in [k for k in objs if k[0] == ns]:
                o = objs.get(k)
                if o is not None:
                    self.mark_deleted(key, o)

    # -- authorization (fault: forbidden)
    def check_allowed(self, verb: str, res: Resource, ns: str | None, name: str | None = None) -> None:
        if not self.is_allowed(verb, res.group, res.plural, ns):
            what = f'{res.group_resource} "{name}"' if name else res.group_resource
            where = f' in the namespace "{ns}"' if ns and res.namespaced else ""
            scope = "" if where else " at the cluster scope"
            raise ApiError(403, "Forbidden",
                           f'{what} is forbidden: User "{self.user}" cannot {verb} resource "{res.plural}" '
                           f'in API group "{res.group}"{where}{scope}',
                           {"name": name, "group": res.group, "kind": res.plural} if name else
                           {"group": res.group, "kind": res.plural})

    def is_allowed(self, verb: str, group: str, plural: str, ns: str | None) -> bool:
        for f in self.forbidden:
            if f.get("resource") not in (plural, "*"):
                continue
            if f.get("group", group) not in (group, "*"):
                continue
            if f.get("namespace") and ns and f["namespace"] != ns:
                continue
            verbs = f.get("verbs") or ["*"]
            if "*" in verbs or verb in verbs:
                return False
        return True

    # -- API operations
    def _ns_check(self, res: Resource, ns: str | None, name: str = "") -> None:
        if not (res.namespaced and ns):
            return
        nso = self.raw_get("/namespaces", "", ns)
        if nso is None:
            raise ApiError(404, "NotFound", f'namespaces "{ns}" not found',
                           {"name": ns, "kind": "namespaces"})
        if nso["metadata"].get("deletionTimestamp"):
            raise ApiError(403, "Forbidden",
                           f'{res.group_resource} "{name}" is forbidden: unable to create new content in namespace '
                           f"{ns} because it is being terminated",
                           {"name": name, "group": res.group, "kind": res.plural,
                            "causes": [{"reason": "NamespaceTerminating",
                                        "message": f"namespace {ns} is being terminated",
                                        "field": "metadata.namespace"}]})

    def _admit_pod(self, obj: dict) -> None:
        """ServiceAccount admission: a pod runs as an existing ServiceAccount of its namespace."""
        meta, spec = obj["metadata"], obj.get("spec") or {}
        sa = spec.get("serviceAccountName") or "default"
        if self.raw_get("/serviceaccounts", meta["namespace"], sa) is None:
            raise ApiError(403, "Forbidden",
                           f'pods "{meta.get("name") or meta.get("generateName", "")}" is forbidden: '
                           f'error looking up service account {meta["namespace"]}/{sa}: serviceaccount "{sa}" not found',
                           {"name": meta.get("name", ""), "kind": "pods"})

    def _allocate_cluster_ip(self, svc: dict) -> None:
        """The Service registry's IP allocation (10.96.0.0/12): a free address unless one is asked for."""
        spec = svc.setdefault("spec", {})
        if spec.get("type") == "ExternalName":
            return
        ip = spec.get("clusterIP") or (spec.get("clusterIPs") or [None])[0]
        if not ip:
            used = {(o.get("spec") or {}).get("clusterIP") for o in self.objects.get("/services", {}).values()}
            n = 1
            while True:
                n += 1
                ip = f"10.{96 + (n >> 16) % 16}.{(n >> 8) % 256}.{n % 256}"
                if ip not in used and not ip.endswith(".0"):
                    break
        spec["clusterIP"] = ip
        spec["clusterIPs"] = [ip]

    def namespace_defaults(self, ns: str) -> None:
        """What the ServiceAccount and root-CA publisher controllers put in every new namespace."""
        if self.raw_get("/serviceaccounts", ns, "default") is None:
            self.raw_put("/serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount",
                                              "metadata": {"name": "default", "namespace": ns}})
        if self.raw_get("/configmaps", ns, "kube-root-ca.crt") is None:
            # kubesim serves plain HTTP: there is no cluster CA to publish, so the bundle is empty
            self.raw_put("/configmaps", {"apiVersion": "v1", "kind": "ConfigMap",
                                         "metadata": {"name": "kube-root-ca.crt", "namespace": ns, "annotations": {
                                             "kubernetes.io/description": (
                                                 "Contains a CA bundle that can be used to verify the kube-apiserver "
                                                 "when using internal endpoints such as the internal service IP or "
                                                 "kubernetes.default.svc. No other usage is guaranteed across "
                                                 "distributions of Kubernetes clusters.")}},
                                         "data": {"ca.crt": ""}})

    def get(self, res: Resource, ns: str | None, name: str) -> dict:
        with self.lock:
            obj = self.raw_get(storage_key(res), ns if res.namespaced else "", name)
            if obj is None:
                raise not_found(res, name)
            return self._present(res, obj)

    def _present(self, res: Resource, obj: dict) -> dict:
        if (obj.get("apiVersion") != res.api_version and res.crd is not None) or res.group == "events.k8s.io":
            obj = dict(obj)
            obj["apiVersion"] = res.api_version
        return obj

    def list(self, res: Resource, ns: str | None, label_selector: str = "", field_selector: str = "") -> dict:
        reqs = parse_label_selector(label_selector)
        with self.lock:
            objs = self.items(storage_key(res), ns if res.namespaced and ns else None)
            items = []
            for o in objs:
                if reqs and not labels_match(o.get("metadata", {}).get("labels"), reqs):
                    continue
                if field_selector and not field_matches(o, field_selector):
                    continue
                items.append(self._present(res, o))
            items.sort(key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))
            return {"kind": f"{res.kind}List", "apiVersion": res.api_version,
                    "metadata": {"resourceVersion": str(self.rv)}, "items": items}

    def _validate(self, res: Resource, obj: dict, name: str, old: dict | None = None) -> None:
        causes: list[openapi.FieldError] = []
        meta = obj.get("metadata") or {}
        if not meta.get("name"):
            causes.append(openapi.FieldError("metadata.name", "FieldValueRequired",
                                             "metadata.name: Required value: name or generateName is required"))
        elif not _NAME_RX.match(meta["name"]) or len(meta["name"]) > 253:
            causes.append(openapi.FieldError(
                "metadata.name", "FieldValueInvalid",
                f'metadata.name: Invalid value: "{meta["name"]}": a lowercase RFC 1123 subdomain must consist of '
                "lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"))
        for _lk, lv in (meta.get("labels") or {}).items():
            if not isinstance(lv, str) or len(lv) > 63 or not _LABEL_RX.match(lv):
                causes.append(openapi.FieldError(
                    "metadata.labels", "FieldValueInvalid",
                    f'metadata.labels: Invalid value: "{lv}": a valid label must be an empty string or consist of '
                    "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"))
        if res.crd is not None:
            causes += openapi.field_errors(obj, res.crd, res.version, prune=True)
        elif res.kind == "CustomResourceDefinition":
            spec = obj.get("spec") or {}
            for f in ("group", "names", "scope", "versions"):
                if not spec.get(f):
                    causes.append(openapi.FieldError(f"spec.{f}", "FieldValueRequired", f"spec.{f}: Required value"))
            names = spec.get("names") or {}
            if names.get("plural") and spec.get("group") and meta.get("name") != f"{names['plural']}.{spec['group']}":
                causes.append(openapi.FieldError("metadata.name", "FieldValueInvalid",
                                                 f'metadata.name: Invalid value: "{meta.get("name")}": must be spec.names.plural+"."+spec.group'))
        elif res.kind in ("Pod",):
            for i, c in enumerate((obj.get("spec") or {}).get("containers") or []):
                if not c.get("image"):
                    causes.append(openapi.FieldError(f"spec.containers[{i}].image", "FieldValueRequired",
                                                     f"spec.containers[{i}].image: Required value"))
        if res.crd is None:
            causes += validation.on_create(res.group, res.kind, obj) if old is None else \
                validation.on_update(res.group, res.kind, old, obj)
        if old is not None:
            causes += validation.finalizers_on_update(old, obj)
        if causes:
            kind = f"{res.kind}.{res.group}" if res.group else res.kind
            msgs = [c.message for c in causes]
            joined = msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]"
            raise ApiError(422, "Invalid", f'{kind} "{name}" is invalid: {joined}',
                           {"name": name, "group": res.group, "kind": res.kind,
                            "causes": [{"reason": c.reason, "message": c.message[len(c.field) + 2:]
                                        if c.message.startswith(c.field + ": ") else c.message,
                                        "field": c.field} for c in causes]})

    def create(self, res: Resource, ns: str | None, body: dict, *, dry_run: bool = False,
               manager: str = "", operation: str = "Update", system: bool = False) -> dict:
        """``system``: the cluster's own component asks (standins/store_kube.py), not the user ``forbidden`` binds."""
        if not isinstance(body, dict):
            raise ApiError(400, "BadRequest", "the body of the request was in an unknown format")
        with self.lock:
            if not system:
                self.check_allowed("create", res, ns)
            obj = copy.deepcopy(body)
            meta = obj.setdefault("metadata", {}) or {}
            obj["metadata"] = meta
            if not meta.get("name") and meta.get("generateName"):
                meta["name"] = meta["generateName"] + rand_suffix()
            name = meta.get("name", "")
            if res.namespaced:
                if meta.get("namespace") and ns and meta["namespace"] != ns:
                    raise ApiError(400, "BadRequest",
                                   "the namespace of the provided object does not match the namespace sent on the request")
                meta["namespace"] = ns or meta.get("namespace") or "default"
                ns = meta["namespace"]
            else:
                meta.pop("namespace", None)
            obj["apiVersion"], obj["kind"] = res.api_version, res.kind
            if res.create_only:
                return obj
            self._ns_check(res, ns, name)
            if res.has_status and res.crd is not None:
                obj.pop("status", None)
            _fold_string_data(res, obj)
            sent_paths = patch.field_paths(obj, skip_status=res.has_status) if manager else set()
            for f in ("resourceVersion", "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
                      "managedFields", "selfLink"):
                meta.pop(f, None)
            meta["uid"] = str(uuid.uuid4())
            meta["creationTimestamp"] = now()
            if res.crd is None:
                defaults.apply(res.group, res.kind, obj)  # the Job's selector needs the uid
            self._validate(res, obj, name)  # prunes unknown fields and applies defaults (custom objects)
            key = storage_key(res)
            existing = self.raw_get(key, ns if res.namespaced else "", name)
            if existing is not None:
                being = "object is being deleted: " if existing["metadata"].get("deletionTimestamp") else ""
                raise ApiError(409, "AlreadyExists", f'{being}{res.group_resource} "{name}" already exists',
                               {"name": name, "group": res.group, "kind": res.plural})
            if res.kind == "Pod" and not res.group:
                self._admit_pod(obj)
            if res.kind == "Service" and not res.group:
                self._allocate_cluster_ip(obj)
            if res.generation:
                meta["generation"] = 1
            else:
                meta.pop("generation", None)
            # owned fields: what the request sent and survived pruning (server defaults are unowned)
            paths = {p for p in sent_paths if patch.value_at(obj, p) is not patch._MISSING}
            if res.kind == "Namespace":
                meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = name
                obj.setdefault("spec", {"finalizers": ["kubernetes"]})
                obj["status"] = {"phase": "Active"}
            elif res.kind == "PersistentVolumeClaim" and not res.group:
                obj["status"] = {"phase": "Pending"}  # as the real PrepareForCreate does
            elif res.kind == "Pod" and not res.group:
                obj["status"] = {"phase": "Pending", "qosClass": "BestEffort"}
            elif res.kind == "Service" and not res.group:
                obj["status"] = {"loadBalancer": {}}
            elif (res.group, res.kind) in defaults.OMIT_ZERO:
                obj["status"] = defaults.status(res.group, res.kind, {})
            if manager:
                meta["managedFields"] = [self._mf_entry(manager, operation, res, paths)]
            if dry_run:
                meta["resourceVersion"] = str(self.rv + 1)
                return obj
            meta["resourceVersion"] = self.bump()
            if res.kind == "CustomResourceDefinition":
                self.register_crd(obj)
                obj["status"] = self._crd_status(obj)
            self.objects[key][(ns if res.namespaced else "", name)] = obj
            self._notify("put", key, obj)
            if res.kind == "Namespace" and not res.group:
                self.namespace_defaults(name)
            return self._present(res, obj)

    @staticmethod
    def _crd_status(crd: dict) -> dict:
        spec = crd.get("spec", {})
        names = dict(spec.get("names") or {})
        names.setdefault("singular", names.get("kind", "").lower())
        names.setdefault("listKind", names.get("kind", "") + "List")
        t = now()
        return {"acceptedNames": names, "storedVersions": [v["name"] for v in spec.get("versions", []) if v.get("storage")],
                "conditions": [{"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
                                "message": "no conflicts found", "lastTransitionTime": t},
                               {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                                "message": "the initial names have been accepted", "lastTransitionTime": t}]}

    @staticmethod
    def _mf_entry(manager: str, operation: str, res: Resource, paths: set, subresource: str = "") -> dict:
        e = {"manager": manager, "operation": operation, "apiVersion": res.api_version, "time": now(),
             "fieldsType": "FieldsV1", "fieldsV1": patch.to_fields_v1(paths)}
        if subresource:
            e["subresource"] = subresource
        return e

    def _commit(self, res: Resource, ns: str | None, old: dict, new: dict, *, dry_run: bool,
                subresource: str = "", manager: str = "", managed: list | None = None) -> dict:
        """Finish an update of ``old`` into ``new``: system fields, status rules, validation,
        generation, managed fields, no-op detection."""
        name = old["metadata"]["name"]
        new = copy.deepcopy(new)
        new["apiVersion"], new["kind"] = old.get("apiVersion", res.api_version), res.kind
        nmeta = new.setdefault("metadata", {}) or {}
        new["metadata"] = nmeta
        if nmeta.get("name") and nmeta["name"] != name:
            raise ApiError(400, "BadRequest", f'the name of the object ({nmeta["name"]}) does not match the name on the URL ({name})')
        ometa = old["metadata"]
        sent_rv = nmeta.get("resourceVersion")
        if sent_rv and sent_rv != ometa.get("resourceVersion") and managed is None:
            raise ApiError(409, "Conflict",
                           f'Operation cannot be fulfilled on {res.group_resource} "{name}": the object has been '
                           "modified; please apply your changes to the latest version and try again",
                           {"name": name, "group": res.group, "kind": res.plural})
        for f in ("name", "namespace", "uid", "creationTimestamp", "generation", "resourceVersion", "deletionTimestamp",
                  "deletionGracePeriodSeconds"):
            if f in ometa:
                nmeta[f] = ometa[f]
            else:
                nmeta.pop(f, None)
        if subresource == "status":
            merged = copy.deepcopy(old)
            if "status" in new:
                merged["status"] = new["status"]
            else:
                merged.pop("status", None)
            new = merged
            nmeta = new["metadata"]
        elif res.has_status:
            if "status" in old:
                new["status"] = copy.deepcopy(old["status"])
            else:
                new.pop("status", None)
        if res.kind == "Namespace":
            new["status"] = old.get("status", {"phase": "Active"})
        _fold_string_data(res, new)
        if res.crd is None and subresource != "status":
            defaults.apply(res.group, res.kind, new)
        self._validate(res, new, name, old=old)
        # managed fields
        if managed is not None:
            nmeta["managedFields"] = managed
        elif manager:
            mf = [dict(e) for e in (ometa.get("managedFields") or [])]
            skip = res.has_status and subresource != "status"
            changed, removed = patch.changed_paths(old, new, skip_status=skip)
            if subresource == "status":
                changed = {p for p in changed if p[:1] == ("f:status",)}
            if changed or removed:
                mine = None
                for e in mf:
                    paths = patch.from_fields_v1(e.get("fieldsV1") or {})
                    paths -= changed | removed
                    e["fieldsV1"] = patch.to_fields_v1(paths)
                    if e["manager"] == manager and e["operation"] == "Update" and e.get("subresource", "") == subresource:
                        mine = e
                if mine is None:
                    mine = self._mf_entry(manager, "Update", res, set(), subresource)
                    mf.append(mine)
                mine["fieldsV1"] = patch.to_fields_v1(patch.from_fields_v1(mine["fieldsV1"]) | changed)
                mine["time"] = now()
                mf = [e for e in mf if e["fieldsV1"] or e is mine]
                nmeta["managedFields"] = mf
            elif "managedFields" in ometa:
                nmeta["managedFields"] = ometa["managedFields"]
        elif "managedFields" in ometa:
            nmeta["managedFields"] = ometa["managedFields"]
        else:
            nmeta.pop("managedFields", None)
        if nmeta.get("managedFields") == []:
            nmeta.pop("managedFields")
        # generation
        if res.generation:
            spec_old = {k: v for k, v in old.items() if k not in ("metadata", "status", "apiVersion", "kind")}
            spec_new = {k: v for k, v in new.items() if k not in ("metadata", "status", "apiVersion", "kind")}
            if spec_old != spec_new or ometa.get("deletionTimestamp"):
                nmeta["generation"] = int(ometa.get("generation", 1)) + 1
        if new == old:
            return self._present(res, old)
        if dry_run:
            nmeta["resourceVersion"] = str(self.rv + 1)
            return self._present(res, new)
        nmeta["resourceVersion"] = self.bump()
        key = storage_key(res)
        if res.kind == "CustomResourceDefinition":
            self.register_crd(new)
            new["status"] = self._crd_status(new)
        self.objects[key][(ns if res.namespaced else "", name)] = new
        self._notify("put", key, new)
        self.finish_deletion(key, new)
        return self._present(res, new)

    def _current(self, res: Resource, ns: str | None, name: str) -> dict:
        obj = self.raw_get(storage_key(res), ns if res.namespaced else "", name)
        if obj is None:
            raise not_found(res, name)
        return obj

    def update(self, res: Resource, ns: str | None, name: str, body: dict, *, dry_run: bool = False,
               subresource: str = "", manager: str = "") -> dict:
        with self.lock:
            self.check_allowed("update", res, ns, name)
            old = self._current(res, ns, name)
            return self._commit(res, ns, old, body, dry_run=dry_run, subresource=subresource, manager=manager)

    def patch(self, res: Resource, ns: str | None, name: str, body: Any, content_type: str, *,
              dry_run: bool = False, subresource: str = "", manager: str = "", force: bool = False,
              system: bool = False) -> dict:
        with self.lock:
            if not system:
                self.check_allowed("patch", res, ns, name)
            if content_type == "application/apply-patch+yaml":
                return self._apply(res, ns, name, body, dry_run=dry_run, subresource=subresource,
                                   manager=manager, force=force)
            old = self._current(res, ns, name)
            try:
                if content_type == "application/json-patch+json":
                    new = patch.json_patch(old, body)
                elif content_type == "application/strategic-merge-patch+json":
                    if res.crd is not None:
                        raise ApiError(415, "UnsupportedMediaType",
                                       "strategic merge patch is not supported for custom resources")
                    new = patch.strategic_merge(old, body)
                else:
                    new = patch.merge_patch(old, body)
            except patch.PatchError as exc:
                raise ApiError(422, "Invalid", str(exc)) from exc
            if not isinstance(new, dict):
                raise ApiError(400, "BadRequest", "patch did not produce an object")
            new.setdefault("metadata", {})["resourceVersion"] = (body.get("metadata") or {}).get("resourceVersion") \
                if isinstance(body, dict) and isinstance(body.get("metadata"), dict) else None
            if not new["metadata"]["resourceVersion"]:
                new["metadata"].pop("resourceVersion")
            return self._commit(res, ns, old, new, dry_run=dry_run, subresource=subresource, manager=manager)

    def _apply(self, res: Resource, ns: str | None, name: str, applied: Any, *, dry_run: bool,
               subresource: str, manager: str, force: bool) -> dict:
        if not manager:
            raise ApiError(422, "Invalid", "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: "
                           "is required for apply patch",
                           {"group": "meta.k8s.io", "kind": "PatchOptions",
                            "causes": [{"reason": "FieldValueRequired",
                                        "message": "Required value: is required for apply patch",
                                        "field": "fieldManager"}]})
        if not isinstance(applied, dict):
            raise ApiError(400, "BadRequest", "apply patch must be an object")
        applied = copy.deepcopy(applied)
        ameta = applied.setdefault("metadata", {}) or {}
        applied["metadata"] = ameta
        if ameta.get("name") and ameta["name"] != name:
            raise ApiError(400, "BadRequest", f'the name of the object ({ameta["name"]}) does not match the name on the URL ({name})')
        ameta["name"] = name
        if applied.get("kind") and applied["kind"] != res.kind:
            raise ApiError(400, "BadRequest", f'the kind of the object ({applied["kind"]}) does not match the URL ({res.kind})')
        for f in ("resourceVersion", "uid", "creationTimestamp", "managedFields", "generation"):
            ameta.pop(f, None)
        skip = res.has_status and subresource != "status"
        if skip:
            applied.pop("status", None)
        new_paths = patch.field_paths(applied, skip_status=skip)
        if subresource == "status":
            new_paths = {p for p in new_paths if p[:1] == ("f:status",)}
        key = storage_key(res)
        old = self.raw_get(key, ns if res.namespaced else "", name)
        if old is None:
            if subresource:
                raise not_found(res, name)
            return self.create(res, ns, applied, dry_run=dry_run, manager=manager, operation="Apply")
        mf = [dict(e) for e in (old["metadata"].get("managedFields") or [])]
        conflicts: list[tuple[str, tuple]] = []
        mine = None
        for e in mf:
            is_mine = e["manager"] == manager and e["operation"] == "Apply" and e.get("subresource", "") == subresource
            if is_mine:
                mine = e
                continue
            owned = patch.from_fields_v1(e.get("fieldsV1") or {})
            for p in owned & new_paths:
                if p[-1] == ".":
                    continue
                if patch.value_at(old, p) != patch.value_at(applied, p):
                    conflicts.append((e["manager"], p))
        if conflicts and not force:
            def fmt(p):
                return "." + ".".join(t[2:] if t.startswith("f:") else "[" + t[2:] + "]" for t in p if t != ".")
            msgs = [f'conflict with "{m}": {fmt(p)}' for m, p in conflicts]
            joined = msgs[0] if len(msgs) == 1 else "\n- " + "\n- ".join(msgs)
            raise ApiError(409, "Conflict",
                           f"Apply failed with {len(conflicts)} conflict{'s' if len(conflicts) > 1 else ''}: {joined}",
                           {"name": name, "group": res.group, "kind": res.plural,
                            "causes": [{"reason": "FieldManagerConflict", "message": f'conflict with "{m}"',
                                        "field": fmt(p)} for m, p in conflicts]})
        base = copy.deepcopy(old)
        merged = patch.apply_merge(base, applied)
        # fields this manager applied before and no longer applies are removed unless others own them
        prev = patch.from_fields_v1(mine.get("fieldsV1") or {}) if mine else set()
        others: set = set()
        for e in mf:
            if e is not mine:
                others |= patch.from_fields_v1(e.get("fieldsV1") or {})
        for p in sorted(prev - new_paths - others, key=len, reverse=True):
            patch.delete_at(merged, p)
        # ownership
        conflict_paths = {p for _, p in conflicts}
        out = []
        for e in mf:
            if e is mine:
                continue
            if conflict_paths:
                owned = patch.from_fields_v1(e.get("fieldsV1") or {}) - conflict_paths
                e["fieldsV1"] = patch.to_fields_v1(owned)
                if not owned:
                    continue
            out.append(e)
        if mine is not None and patch.from_fields_v1(mine.get("fieldsV1") or {}) == new_paths:
            entry = mine
        else:
            entry = self._mf_entry(manager, "Apply", res, new_paths, subresource)
        idx = mf.index(mine) if mine is not None else len(out)
        out.insert(min(idx, len(out)), entry)
        merged["metadata"].pop("resourceVersion", None)
        return self._commit(res, ns, old, merged, dry_run=dry_run, subresource=subresource, managed=out)

    def delete(self, res: Resource, ns: str | None, name: str, *, dry_run: bool = False,
               propagation: str = "Background", preconditions: dict | None = None,
               grace: int | None = None, system: bool = False) -> dict:
        with self.lock:
            if not system:
                self.check_allowed("delete", res, ns, name)
            old = self._current(res, ns, name)
            self._check_preconditions(res, old, preconditions or {})
            if dry_run:
                return self._present(res, old)
            key = storage_key(res)
            ometa = old["metadata"]
            if res.kind == "Namespace" and not res.group:
                return self._present(res, self._terminate_namespace(old))
            if propagation == "Orphan":
                for dkey, d in self.dependents(ometa["uid"]):
                    new = copy.deepcopy(d)
                    new["metadata"]["ownerReferences"] = [r for r in new["metadata"]["ownerReferences"]
                                                          if r.get("uid") != ometa["uid"]]
                    if not new["metadata"]["ownerReferences"]:
                        new["metadata"].pop("ownerReferences")
                    self.raw_put(dkey, new)
            elif propagation == "Foreground" and not ometa.get("deletionTimestamp") and self.dependents(ometa["uid"]):
                # the garbage collector deletes the dependents first, then removes this finalizer
                new = copy.deepcopy(old)
                new["metadata"]["finalizers"] = [*(ometa.get("finalizers") or []), "foregroundDeletion"]
                self.objects[key][(ns if res.namespaced else "", name)] = new
                old = new
            kept = self.mark_deleted(key, old, grace)
            if kept is not None:
                if kept["metadata"].get("finalizers") and "foregroundDeletion" in kept["metadata"]["finalizers"]:
                    self._cascade(kept)
                return self._present(res, kept)
            if res.kind == "CustomResourceDefinition":
                self.unregister_crd(name)
            if res.kind in ("Pod",) or res.crd is not None:
                return self._present(res, old)
            return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                    "details": {"name": name, "group": res.group, "kind": res.plural, "uid": ometa["uid"]}}

    @staticmethod
    def _check_preconditions(res: Resource, obj: dict, pre: dict) -> None:
        m = obj["metadata"]
        what = f'Operation cannot be fulfilled on {res.kind} "{m["name"]}": '
        if pre.get("uid") and pre["uid"] != m.get("uid"):
            raise ApiError(409, "Conflict", what + f'the UID in the precondition ({pre["uid"]}) does not match the UID '
                           f'in record ({m.get("uid")}). The object might have been deleted and then recreated',
                           {"name": m["name"], "group": res.group, "kind": res.plural})
        if pre.get("resourceVersion") and pre["resourceVersion"] != m.get("resourceVersion"):
            raise ApiError(409, "Conflict", what + f'the ResourceVersion in the precondition ({pre["resourceVersion"]}) '
                           f'does not match the ResourceVersion in record ({m.get("resourceVersion")}). '
                           "The object might have been modified",
                           {"name": m["name"], "group": res.group, "kind": res.plural})

    def _terminate_namespace(self, ns_obj: dict) -> dict:
        """A deleted namespace is Terminating until the namespace controller has emptied it."""
        name = ns_obj["metadata"]["name"]
        new = copy.deepcopy(ns_obj)
        if not new["metadata"].get("deletionTimestamp"):
            new["metadata"]["deletionTimestamp"] = now()
            new["metadata"]["deletionGracePeriodSeconds"] = 0
            new["status"] = {"phase": "Terminating"}
            new["metadata"]["resourceVersion"] = self.bump()
            self.objects["/namespaces"][("", name)] = new
            self._notify("put", "/namespaces", new)
        self.delete_namespace_content(name)
        return new

    def namespace_empty(self, ns: str) -> bool:
        return not any(k[0] == ns for objs in self.objects.values() for k in objs)


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()



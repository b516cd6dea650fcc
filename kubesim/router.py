"""kubesim's HTTP routing of the Kubernetes API: discovery, CRUD with dry run and field managers, watches,
scale, eviction, access reviews, pod logs and the service proxy, over one cluster's store."""

from __future__ import annotations

import json
import re
import time
from typing import TYPE_CHECKING, Any

from . import store as st
from .resources import Resource
from .server import VERSION, parse_json_or_yaml, split_path
from .store import ApiError

if TYPE_CHECKING:
    from .cluster import SimCluster


def version_priority(version: str) -> tuple:
    """Kubernetes' version priority: GA over beta over alpha, then the higher numbers; other names last."""
    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not m:
        return (-1, 0, 0, version)
    return ({"alpha": 0, "beta": 1, None: 2}[m.group(2)], int(m.group(1)), int(m.group(3) or 0), "")


class ApiRouter:
    def __init__(self, cluster: SimCluster):
        self.cluster = cluster
        self.store = cluster.store

    # ---------------------------------------------------------------- discovery
    def discovery_groups(self) -> dict:
        groups: dict[str, list[str]] = {}
        for gv in self.store.by_gv:
            g, v = gv.split("/")
            if g:
                groups.setdefault(g, []).append(v)
        out = []
        for g, versions in sorted(groups.items()):
            # as the API server orders a group's versions: by Kubernetes version priority (v1 > v1beta1 > v1alpha1)
            ordered = sorted(set(versions), key=version_priority, reverse=True)
            preferred = ordered[0]
            out.append({"name": g, "versions": [{"groupVersion": f"{g}/{v}", "version": v} for v in ordered],
                        "preferredVersion": {"groupVersion": f"{g}/{preferred}", "version": preferred}})
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": out}

    def resource_list(self, group: str, version: str) -> dict:
        rs = self.store.by_gv.get(f"{group}/{version}")
        if rs is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        resources = []
        for r in rs.values():
            d = {"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced, "kind": r.kind,
                 "verbs": r.verbs}
            if r.short_names:
                d["shortNames"] = r.short_names
            resources.append(d)
            for sub in r.subresources:
                verbs = ["get", "patch", "update"] if sub in ("status", "scale") else \
                    ["create"] if sub == "eviction" else ["get", "create"]
                entry = {"name": f"{r.plural}/{sub}", "singularName": "", "namespaced": r.namespaced,
                         "kind": {"scale": "Scale", "eviction": "Eviction"}.get(sub, r.kind), "verbs": verbs}
                if sub == "eviction":
                    entry.update({"group": "policy", "version": "v1"})
                resources.append(entry)
        gv = f"{group}/{version}" if group else version
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}

    # ---------------------------------------------------------------- routing
    def handle(self, handler, method: str, path: str, query: dict, body: bytes):
        parts = split_path(path)
        if not parts:
            return 200, {"paths": ["/api", "/api/v1", "/apis", "/version", "/healthz"]}
        if parts == ["version"]:
            return 200, VERSION
        if parts[0] in ("healthz", "readyz", "livez"):
            handler._send(200, b"ok", "text/plain")
            return None
        if parts == ["api"]:
            return 200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
                {"clientCIDR": "0.0.0.0/0", "serverAddress": f"127.0.0.1:{self.cluster.port}"}]}
        if parts == ["apis"]:
            return 200, self.discovery_groups()
        if parts[0] == "api" and len(parts) >= 2:
            group, version, rest = "", parts[1], parts[2:]
        elif parts[0] == "apis" and len(parts) >= 3:
            group, version, rest = parts[1], parts[2], parts[3:]
        elif parts[0] == "apis" and len(parts) == 2:
            g = next((x for x in self.discovery_groups()["groups"] if x["name"] == parts[1]), None)
            if g is None:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            return 200, {"kind": "APIGroup", "apiVersion": "v1", **g}
        else:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if not rest:
            return 200, self.resource_list(group, version)
        ns = None
        if rest[0] == "namespaces" and len(rest) >= 3 and not (len(rest) == 3 and rest[2] in ("status", "finalize")):
            ns, rest = rest[1], rest[2:]
        plural = rest[0]
        res = self.store.resource(group, version, plural)
        if res is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if ns is not None and not res.namespaced:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        name = rest[1] if len(rest) >= 2 else None
        sub = rest[2] if len(rest) >= 3 else ""
        dry_run = query.get("dryRun") == "All"
        manager = query.get("fieldManager") or self._ua_manager(handler)
        ctype = (handler.headers.get("Content-Type") or "application/json").split(";")[0].strip()
        s = self.store

        if res.create_only:
            if method != "POST":
                raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
            return 201, self.self_subject_access_review(parse_json_or_yaml(body, ctype) or {})

        if sub == "log" and res.kind == "Pod":
            return self.pod_log(handler, ns or "default", name, query)
        if sub == "eviction" and res.kind == "Pod":
            if method != "POST":
                raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
            return self.evict(res, ns or "default", name, parse_json_or_yaml(body, ctype) or {}, dry_run)
        if sub == "proxy" or (name and res.kind == "Service" and len(rest) >= 3 and rest[2] == "proxy"):
            qs = handler.path.split("?", 1)[1] if "?" in handler.path else ""
            tail = "/" + "/".join(rest[3:]) if len(rest) > 3 else "/"
            if handler.path.split("?")[0].endswith("/") and tail != "/":
                tail += "/"
            if res.kind != "Service":
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            return self.service_proxy(handler, method, ns or "default", name, tail, qs, body)
        if sub and sub not in res.subresources:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if sub == "scale":
            return self.scale(method, res, ns, name, body, ctype, dry_run, manager)

        if method in ("GET", "HEAD"):
            if name is None:
                if query.get("watch") in ("true", "1"):
                    return self.watch(handler, res, ns, query)
                s.check_allowed("list", res, ns)
                listing = s.list(res, ns, query.get("labelSelector", ""), query.get("fieldSelector", ""))
                return 200, paginate(listing, query.get("limit"), query.get("continue"))
            s.check_allowed("get", res, ns, name)
            return 200, s.get(res, ns, name)
        if method == "POST":
            if name is not None:
                raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
            obj = parse_json_or_yaml(body, ctype)
            created = s.create(res, ns, obj, dry_run=dry_run, manager=manager)
            return 201, created
        if name is None:
            if method == "DELETE":
                return self.delete_collection(res, ns, query, dry_run, body)
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        if method == "PUT":
            return 200, s.update(res, ns, name, parse_json_or_yaml(body, ctype), dry_run=dry_run,
                                 subresource=sub, manager=manager)
        if method == "PATCH":
            obj = parse_json_or_yaml(body, ctype if ctype != "application/apply-patch+yaml" else "yaml")
            force = query.get("force") in ("true", "1")
            if ctype == "application/apply-patch+yaml" and not query.get("fieldManager"):
                manager = ""
            existed = s.raw_get(st.storage_key(res), ns if res.namespaced else "", name) is not None
            out = s.patch(res, ns, name, obj, ctype, dry_run=dry_run, subresource=sub, manager=manager, force=force)
            return (200 if existed else 201), out
        if method == "DELETE":
            opts = parse_json_or_yaml(body, ctype) or {}
            opts = opts if isinstance(opts, dict) else {}
            if (opts.get("dryRun") or []) == ["All"]:
                dry_run = True
            return 200, s.delete(res, ns, name, dry_run=dry_run, **delete_options(query, opts))
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")

    @staticmethod
    def _ua_manager(handler) -> str:
        ua = handler.headers.get("User-Agent") or "unknown"
        return ua.split("/")[0] or "unknown"

    def delete_collection(self, res: Resource, ns: str | None, query: dict, dry_run: bool, body: bytes = b""):
        listing = self.store.list(res, ns, query.get("labelSelector", ""), query.get("fieldSelector", ""))
        self.store.check_allowed("deletecollection", res, ns)
        opts = parse_json_or_yaml(body, "application/json") or {}
        kwargs = delete_options(query, opts if isinstance(opts, dict) else {})
        kwargs.pop("preconditions", None)
        for item in listing["items"]:
            m = item["metadata"]
            try:
                self.store.delete(res, m.get("namespace"), m["name"], dry_run=dry_run, **kwargs)
            except ApiError:
                pass
        return 200, listing

    def scale(self, method, res, ns, name, body, ctype, dry_run, manager):
        obj = self.store.get(res, ns, name)
        if method in ("PUT", "PATCH"):
            req = parse_json_or_yaml(body, ctype) or {}
            replicas = (req.get("spec") or {}).get("replicas")
            if replicas is not None:
                self.store.patch(res, ns, name, {"spec": {"replicas": replicas}}, "application/merge-patch+json",
                                 dry_run=dry_run, manager=manager)
                obj = self.store.get(res, ns, name)
        return 200, {"kind": "Scale", "apiVersion": "autoscaling/v1",
                     "metadata": {k: obj["metadata"].get(k) for k in ("name", "namespace", "uid", "resourceVersion")},
                     "spec": {"replicas": (obj.get("spec") or {}).get("replicas", 1)},
                     "status": {"replicas": (obj.get("status") or {}).get("replicas", 0)}}

    def watch(self, handler, res: Resource, ns: str | None, query: dict):
        """Minimal watch: changes until timeoutSeconds; without a resourceVersion (or with "0"), the current objects
        first as ADDED events; from a resourceVersion, only what changed after it, as the API server does."""
        self.store.check_allowed("watch", res, ns)
        timeout = min(float(query.get("timeoutSeconds") or 30), 60)
        ls, fs = query.get("labelSelector", ""), query.get("fieldSelector", "")
        try:
            since = int(query.get("resourceVersion") or 0)
        except ValueError:
            raise ApiError(400, "BadRequest", f"invalid resourceVersion {query.get('resourceVersion')!r}") from None

        def gen():
            seen: dict[str, tuple[str, dict]] = {}
            if since:
                seen = {i["metadata"]["uid"]: (i["metadata"].get("resourceVersion"), i)
                        for i in self.store.list(res, ns, ls, fs)["items"]
                        if int(i["metadata"].get("resourceVersion") or 0) <= since}
            deadline = time.time() + timeout
            listed_at = None
            while time.time() < deadline:
                # the store's resourceVersion moves with every write: nothing to list while it stands still
                if self.store.rv != listed_at:
                    listed_at = self.store.rv
                    cur = {i["metadata"]["uid"]: i for i in self.store.list(res, ns, ls, fs)["items"]}
                    for uid, obj in cur.items():
                        rv = obj["metadata"].get("resourceVersion")
                        if uid not in seen or seen[uid][0] != rv:
                            typ = "ADDED" if uid not in seen else "MODIFIED"
                            seen[uid] = (rv, obj)
                            yield json.dumps({"type": typ, "object": obj}).encode() + b"\n"
                    for uid in [u for u in seen if u not in cur]:
                        yield json.dumps({"type": "DELETED", "object": seen.pop(uid)[1]}).encode() + b"\n"
                time.sleep(0.2)

        handler.stream_chunks(gen(), "application/json")
        return None

    def evict(self, res: Resource, ns: str, name: str, body: dict, dry_run: bool):
        """The Eviction API: a graceful delete (no PodDisruptionBudget is modelled)."""
        self.store.check_allowed("create", res, ns, name)
        opts = body.get("deleteOptions") or {}
        if (opts.get("dryRun") or []) == ["All"]:
            dry_run = True
        kwargs = delete_options({}, opts)
        self.store.delete(res, ns, name, dry_run=dry_run, **kwargs)
        return 201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}

    # ---------------------------------------------------------------- SSAR
    def self_subject_access_review(self, body: dict) -> dict:
        spec = body.get("spec") or {}
        ra = spec.get("resourceAttributes") or {}
        allowed = self.store.is_allowed(ra.get("verb", "get"), ra.get("group", ""), ra.get("resource", ""),
                                        ra.get("namespace"))
        status: dict[str, Any] = {"allowed": allowed}
        if allowed:
            status["reason"] = "kubesim: allowed (no RBAC simulated)"
        else:
            status["denied"] = False
            status["reason"] = "kubesim: permission removed by an injected fault"
        return {"kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
                "metadata": {"creationTimestamp": None}, "spec": spec, "status": status}

    # ---------------------------------------------------------------- pod logs
    def pod_log(self, handler, ns: str, name: str, query: dict):
        res = self.store.resource("", "v1", "pods")
        self.store.check_allowed("get", res, ns, name)
        pod = self.store.get(res, ns, name)
        containers = [c["name"] for c in (pod.get("spec") or {}).get("containers") or []]
        container = query.get("container")
        if not container:
            if len(containers) > 1:
                raise ApiError(400, "BadRequest",
                               f"a container name must be specified for pod {name}, choose one of: [{' '.join(containers)}]")
            container = containers[0] if containers else ""
        elif container not in containers:
            raise ApiError(400, "BadRequest", f"container {container} is not valid for pod {name}")
        text = self.cluster.controllers.read_log(ns, name, container, previous=query.get("previous") == "true")
        if text is None:
            phase = (pod.get("status") or {}).get("phase", "Pending")
            raise ApiError(400, "BadRequest",
                           f'container "{container}" in pod "{name}" is waiting to start: '
                           f'{"ContainerCreating" if phase == "Pending" else "PodInitializing"}')
        tail = query.get("tailLines")
        if tail is not None:
            lines = text.splitlines(keepends=True)
            n = int(tail)
            text = "".join(lines[-n:]) if n > 0 else ""
        limit = query.get("limitBytes")
        data = text.encode("utf-8", "replace")
        if limit:
            data = data[: int(limit)]
        if query.get("follow") == "true":
            handler.stream_chunks(self.cluster.controllers.follow_log(ns, name, container, len(text)), "text/plain")
            return None
        handler._send(200, data, "text/plain")
        return None

    # ---------------------------------------------------------------- service proxy
    def service_proxy(self, handler, method, ns, name_port, tail, qs, body):
        name = name_port
        if name.count(":") == 2:  # scheme:name:port
            _, name, _port = name.split(":")
        elif ":" in name:
            name, _port = name.split(":", 1)
        res = self.store.resource("", "v1", "services")
        self.store.check_allowed("get", res, ns, name)
        svc = self.store.raw_get("/services", ns, name)
        if svc is None:
            raise st.not_found(res, name)
        port = self.cluster.controllers.port_for_service(ns, name)
        if port is None:
            raise ApiError(503, "ServiceUnavailable", f'no endpoints available for service "{name}"')
        handler.proxy_to(port, method, tail, qs, body)
        return None


def delete_options(query: dict, opts: dict) -> dict:
    """DeleteOptions from the query and the body: propagation, grace period, preconditions."""
    prop = query.get("propagationPolicy") or opts.get("propagationPolicy")
    if prop is None and opts.get("orphanDependents") is not None:
        prop = "Orphan" if opts["orphanDependents"] else "Background"
    grace = query.get("gracePeriodSeconds", opts.get("gracePeriodSeconds"))
    return {"propagation": prop or "Background", "grace": int(grace) if grace not in (None, "") else None,
            "preconditions": opts.get("preconditions") or {}}


def paginate(listing: dict, limit: str | None, token: str | None) -> dict:
    """``limit`` and ``continue`` as the real server answers them: a page, a continue token and the
    number of items left (tokens are offsets into the listing, consistent for a settled store)."""
    import base64

    if not limit and not token:
        return listing
    items = listing["items"]
    start = 0
    if token:
        try:
            start = int(json.loads(base64.urlsafe_b64decode(token.encode()))["start"])
        except (ValueError, KeyError, TypeError):
            raise ApiError(400, "BadRequest", "continue key is not valid: incorrect encoded start resourceVersion "
                           "(version meta.k8s.io/v1)") from None
    n = int(limit) if limit and int(limit) > 0 else len(items)
    page, rest = items[start:start + n], items[start + n:]
    meta = dict(listing["metadata"])
    if rest:
        meta["continue"] = base64.urlsafe_b64encode(json.dumps({"start": start + n}).encode()).decode()
        meta["remainingItemCount"] = len(rest)
    return {**listing, "metadata": meta, "items": page}

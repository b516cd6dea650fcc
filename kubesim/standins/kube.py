"""The few API calls the stand-ins make against a real API server, in API (camelCase) JSON."""

from __future__ import annotations

import datetime as dt
import json
import logging

log = logging.getLogger("kubesim.standins")


class EventRecorder:
    """``event`` for a stand-in's client (this API-server client, or the emulator's ``StoreKube``): both have
    ``create``, ``component`` and an ``_emitted`` set."""

    _emitted: set[tuple]
    component: str

    def event(self, obj: dict, etype: str, reason: str, message: str, component: str | None = None) -> None:
        """A core/v1 Event on ``obj``, once per object, reason and message (as controllers dedupe)."""
        m = obj["metadata"]
        key = (m.get("uid"), reason, message)
        if key in self._emitted:
            return
        self._emitted.add(key)
        now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        ns = m.get("namespace") or "default"
        self.create({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"generateName": f'{m["name"]}.', "namespace": ns},
            "involvedObject": {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "name": m["name"],
                               "namespace": m.get("namespace"), "uid": m.get("uid"),
                               "resourceVersion": m.get("resourceVersion")},
            "type": etype, "reason": reason, "message": message,
            "source": {"component": component or self.component},
            "reportingComponent": component or self.component, "reportingInstance": "kubesim-standins",
            "firstTimestamp": now, "lastTimestamp": now, "count": 1,
        })


class Kube(EventRecorder):
    """Reads come back as plain JSON (the dynamic client's ResourceInstance wrapping cost the stand-ins most of
    their CPU), and a list asked for twice in one reconcile pass (pods by the kubelet, the operator and the
    frontends) is read once; a write drops what was read of its kind."""

    def __init__(self, api_client, component: str, cache_dir):
        from ..dynamic_client import dynamic_client

        self.api_client = api_client
        self.dyn = dynamic_client(api_client, cache_dir)
        self.component = component
        self._emitted: set[tuple] = set()
        self._pass_lists: dict[tuple, list[dict]] = {}

    def begin_pass(self) -> None:
        """A new reconcile pass reads the cluster afresh."""
        self._pass_lists.clear()

    def _res(self, api_version: str, kind: str):
        return self.dyn.resources.get(api_version=api_version, kind=kind)

    def _get_json(self, path: str, query: dict | None = None) -> dict | None:
        """GET ``path`` as JSON; None for 404."""
        request = self.api_client.param_serialize("GET", path, query_params=list((query or {}).items()),
                                                  header_params={"Accept": "application/json"},
                                                  auth_settings=["BearerToken"])
        resp = self.api_client.call_api(*request)
        data = resp.read()
        if resp.status == 404:
            return None
        if resp.status >= 400:
            self.api_client.response_deserialize(resp, {})   # raises the client's ApiException for the status
        return json.loads(data)

    def watch(self, api_version: str, kind: str, on_change, stop, timeout_s: int = 60) -> None:
        """Call ``on_change()`` for every change of ``kind`` (all namespaces) until ``stop`` is set; a watch the
        server ends, or an API server that went away, is opened again a second later."""
        path = self._res(api_version, kind).path()
        while not stop.is_set():
            try:
                request = self.api_client.param_serialize(
                    "GET", path, query_params=[("watch", "1"), ("timeoutSeconds", str(timeout_s))],
                    header_params={"Accept": "application/json"}, auth_settings=["BearerToken"])
                resp = self.api_client.call_api(*request, _request_timeout=timeout_s + 10)
                if resp.status >= 400:
                    resp.read()
                    stop.wait(1)
                    continue
                for _event in resp.response:    # one JSON line per event: that something changed is enough
                    on_change()
                    if stop.is_set():
                        break
                resp.response.release_conn()
            except Exception as exc:
                log.debug("watch %s: %s", kind, exc)
                stop.wait(1)

    def _forget(self, kind: str) -> None:
        for key in [k for k in self._pass_lists if k[1] == kind]:
            del self._pass_lists[key]

    def list(self, api_version: str, kind: str, namespace: str | None = None, label_selector: str = "") -> list[dict]:
        key = (api_version, kind, namespace, label_selector)
        if key not in self._pass_lists:
            query = {"labelSelector": label_selector} if label_selector else None
            doc = self._get_json(self._res(api_version, kind).path(namespace=namespace), query) or {}
            self._pass_lists[key] = doc.get("items") or []
        return self._pass_lists[key]

    def served(self, api_version: str, kind: str) -> bool:
        """Whether the API server serves ``kind`` (a CRD that is installed)."""
        from kubernetes.dynamic.exceptions import ResourceNotFoundError

        try:
            self._res(api_version, kind)
        except ResourceNotFoundError:
            return False
        return True

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict | None:
        return self._get_json(self._res(api_version, kind).path(name=name, namespace=namespace))

    def create(self, obj: dict) -> dict | None:
        """Create ``obj``; None when it already exists (a stand-in's earlier pass made it)."""
        from kubernetes.dynamic.exceptions import ConflictError

        self._forget(obj["kind"])
        try:
            return self._res(obj["apiVersion"], obj["kind"]).create(
                body=obj, namespace=obj["metadata"].get("namespace")).to_dict()
        except ConflictError:
            return None

    def patch(self, api_version: str, kind: str, name: str, patch: dict, namespace: str | None = None,
              subresource: str | None = None) -> dict:
        self._forget(kind)
        res = self._res(api_version, kind)
        if subresource:
            res = res.subresources[subresource]
        return res.patch(body=patch, name=name, namespace=namespace,
                         content_type="application/merge-patch+json").to_dict()

    def apply(self, obj: dict, field_manager: str) -> dict:
        """Server-side apply of the fields ``obj`` names, owned by ``field_manager`` (taken over from another
        manager, as controllers do)."""
        self._forget(obj["kind"])
        m = obj["metadata"]
        return self._res(obj["apiVersion"], obj["kind"]).server_side_apply(
            body=obj, name=m["name"], namespace=m.get("namespace"), field_manager=field_manager,
            force_conflicts=True).to_dict()

    def service_account_token(self, namespace: str, name: str, seconds: int) -> str:
        """A token of the ServiceAccount (TokenRequest), as the kubelet projects into a pod."""
        from kubernetes import client

        request = client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(
            audiences=[], expiration_seconds=seconds))
        return client.CoreV1Api(self.api_client).create_namespaced_service_account_token(
            name, namespace, request).status.token

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> None:
        from kubernetes.dynamic.exceptions import NotFoundError

        self._forget(kind)
        try:
            self._res(api_version, kind).delete(name=name, namespace=namespace)
        except NotFoundError:
            pass

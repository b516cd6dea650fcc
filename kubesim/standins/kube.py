"""The few API calls the stand-ins make against a real API server, in API (camelCase) JSON."""

from __future__ import annotations

import datetime as dt
import logging

log = logging.getLogger("kubesim.standins")


class Kube:
    def __init__(self, api_client, component: str):
        from kubernetes.dynamic import DynamicClient

        self.dyn = DynamicClient(api_client)
        self.component = component
        self._emitted: set[tuple] = set()

    def _res(self, api_version: str, kind: str):
        return self.dyn.resources.get(api_version=api_version, kind=kind)

    def list(self, api_version: str, kind: str, namespace: str | None = None, label_selector: str = "") -> list[dict]:
        out = self._res(api_version, kind).get(namespace=namespace, label_selector=label_selector or None)
        return out.to_dict().get("items") or []

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict | None:
        from kubernetes.dynamic.exceptions import NotFoundError

        try:
            return self._res(api_version, kind).get(name=name, namespace=namespace).to_dict()
        except NotFoundError:
            return None

    def create(self, obj: dict) -> dict | None:
        """Create ``obj``; None when it already exists (a stand-in's earlier pass made it)."""
        from kubernetes.dynamic.exceptions import ConflictError

        try:
            return self._res(obj["apiVersion"], obj["kind"]).create(
                body=obj, namespace=obj["metadata"].get("namespace")).to_dict()
        except ConflictError:
            return None

    def patch(self, api_version: str, kind: str, name: str, patch: dict, namespace: str | None = None,
              subresource: str | None = None) -> dict:
        res = self._res(api_version, kind)
        if subresource:
            res = res.subresources[subresource]
        return res.patch(body=patch, name=name, namespace=namespace,
                         content_type="application/merge-patch+json").to_dict()

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> None:
        from kubernetes.dynamic.exceptions import NotFoundError

        try:
            self._res(api_version, kind).delete(name=name, namespace=namespace)
        except NotFoundError:
            pass

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

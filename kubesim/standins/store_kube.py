"""The stand-ins' ``Kube`` interface (kube.py) over kubesim's own store, so that a stand-in written as a client of a
real API server runs unchanged as one of kubesim's controllers.

The stand-ins are the cluster's own components, not the collection's user: a ``forbidden`` fault (which takes a
permission away from the user kubesim serves) does not apply to them, as RBAC on a user does not bind a kubelet.
"""

from __future__ import annotations

import copy

from ..store import ApiError, Store
from .kube import EventRecorder


class StoreKube(EventRecorder):
    def __init__(self, store: Store, component: str):
        self.store = store
        self.component = component
        self._emitted: set[tuple] = set()

    def _res(self, api_version: str, kind: str):
        res = self.store.resource_for_kind(api_version, kind)
        if res is None:
            raise ApiError(404, "NotFound", f"the server could not find the requested resource ({api_version} {kind})")
        return res

    def served(self, api_version: str, kind: str) -> bool:
        return self.store.resource_for_kind(api_version, kind) is not None

    def list(self, api_version: str, kind: str, namespace: str | None = None, label_selector: str = "") -> list[dict]:
        return self.store.list(self._res(api_version, kind), namespace, label_selector)["items"]

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict | None:
        try:
            return self.store.get(self._res(api_version, kind), namespace, name)
        except ApiError as exc:
            if exc.code == 404:
                return None
            raise

    def create(self, obj: dict) -> dict | None:
        """Create ``obj``; None when it already exists (as Kube.create)."""
        try:
            return self.store.create(self._res(obj["apiVersion"], obj["kind"]), obj["metadata"].get("namespace"),
                                     copy.deepcopy(obj), manager=self.component, operation="Update", system=True)
        except ApiError as exc:
            if exc.code == 409:
                return None
            raise

    def patch(self, api_version: str, kind: str, name: str, patch: dict, namespace: str | None = None,
              subresource: str | None = None) -> dict:
        return self.store.patch(self._res(api_version, kind), namespace, name, patch,
                                "application/merge-patch+json", subresource=subresource or "",
                                manager=self.component, system=True)

    def apply(self, obj: dict, field_manager: str) -> dict:
        """Server-side apply of the fields ``obj`` names, taken over from other managers (as Kube.apply)."""
        m = obj["metadata"]
        return self.store.patch(self._res(obj["apiVersion"], obj["kind"]), m.get("namespace"), m["name"],
                                copy.deepcopy(obj), "application/apply-patch+yaml", manager=field_manager, force=True,
                                system=True)

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> None:
        try:
            self.store.delete(self._res(api_version, kind), namespace, name, system=True)
        except ApiError as exc:
            if exc.code != 404:
                raise

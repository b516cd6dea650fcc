"""kubesim's garbage collector: objects whose owners are gone are deleted, as the
kube-controller-manager's garbage collector does with background propagation."""

from __future__ import annotations

import copy
import logging

log = logging.getLogger("kubesim.controllers")


class GarbageCollector:
    """A part of :class:`kubesim.controllers.Controllers` (a mixin): it uses the controllers' ``store``."""

    # ------------------------------------------------------------------ garbage collector, namespaces
    def reconcile_deletions(self) -> None:
        """Foreground deletion (the owner goes once its dependents are gone) and terminating
        namespaces (removed once empty), as the garbage collector and namespace controller do."""
        s = self.store
        for key, objs in list(s.objects.items()):
            for o in list(objs.values()):
                m = o["metadata"]
                fins = m.get("finalizers") or []
                if m.get("deletionTimestamp") and "foregroundDeletion" in fins and not s.dependents(m["uid"]):
                    new = copy.deepcopy(o)
                    new["metadata"]["finalizers"] = [f for f in fins if f != "foregroundDeletion"]
                    if not new["metadata"]["finalizers"]:
                        new["metadata"].pop("finalizers")
                    s.raw_put(key, new)
                    s.finish_deletion(key, new)
        for nso in s.items("/namespaces"):
            m = nso["metadata"]
            if m.get("deletionTimestamp"):
                s.delete_namespace_content(m["name"])
                if s.namespace_empty(m["name"]):
                    s.raw_delete("/namespaces", "", m["name"])

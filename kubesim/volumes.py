"""kubesim's volume binding: a PVC is bound to a PV of its StorageClass (or stays Pending with the
provisioner's reason), and a bound claim is a directory under the cluster's state."""

from __future__ import annotations

import copy
import logging
from pathlib import Path

from .standins import storage

log = logging.getLogger("kubesim.controllers")


class VolumeBinding:
    """A part of :class:`kubesim.controllers.Controllers` (a mixin): it uses the controllers' ``event``,
    ``store``, ``volumes_dir``."""

    # ------------------------------------------------------------------ PVCs
    def _sc(self, name: str | None) -> dict | None:
        scs = self.store.items("storage.k8s.io/storageclasses")
        if name is None:
            return next((s for s in scs if (s["metadata"].get("annotations") or {}).get(
                "storageclass.kubernetes.io/is-default-class") == "true"), None)
        return next((s for s in scs if s["metadata"]["name"] == name), None)

    def reconcile_pvcs(self) -> None:
        for pvc in self.store.items("/persistentvolumeclaims"):
            if (pvc.get("status") or {}).get("phase") == "Bound":
                continue
            spec = pvc.get("spec") or {}
            m = pvc["metadata"]
            scname = spec.get("storageClassName")
            sc = self._sc(scname)
            modes = spec.get("accessModes") or ["ReadWriteOnce"]
            problem = None
            if sc is None:
                if scname is None or scname == "":
                    problem = ("FailedBinding", "no persistent volumes available for this claim and no storage class is set")
                else:
                    problem = ("ProvisioningFailed", f'storageclass.storage.k8s.io "{scname}" not found')
            elif storage.provisioning_problem(pvc, sc):
                problem = ("ProvisioningFailed", storage.provisioning_problem(pvc, sc))
            if problem:
                self.event(pvc, "Warning", problem[0], problem[1], "persistentvolume-controller")
                self.store.raw_set_status("/persistentvolumeclaims", m["namespace"], m["name"], {"phase": "Pending"})
                continue
            size = storage.requested_size(pvc)
            d = self.volumes_dir / m["namespace"] / m["name"]
            d.mkdir(parents=True, exist_ok=True)
            pv = storage.persistent_volume(pvc, sc, str(d))
            pv_name = pv["metadata"]["name"]
            self.store.raw_put("/persistentvolumes", {**pv, "status": {"phase": "Bound"}})
            new = copy.deepcopy(pvc)
            new["spec"]["volumeName"] = pv_name
            new["spec"].setdefault("storageClassName", sc["metadata"]["name"])
            new["spec"].setdefault("volumeMode", "Filesystem")
            new["metadata"].setdefault("annotations", {})["pv.kubernetes.io/bind-completed"] = "yes"
            new["status"] = {"phase": "Bound", "accessModes": modes, "capacity": {"storage": size}}
            self.store.raw_put("/persistentvolumeclaims", new)
            self.event(pvc, "Normal", "ProvisioningSucceeded",
                       f'Successfully provisioned volume {pv_name}', sc.get("provisioner", ""))

    def pvc_dir(self, ns: str, claim: str) -> Path:
        return self.volumes_dir / ns / claim

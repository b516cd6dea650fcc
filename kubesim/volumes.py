"""kubesim's PersistentVolume controller, the part of kube-controller-manager the real backend runs for real.

A claim of a class with a provisioner is marked for it (``volume.kubernetes.io/storage-provisioner``) and waits,
Pending; the provisioner (``standins/provisioner.py``, the same stand-in as on the real backend) creates a volume
pre-bound to it; this controller completes the binding, and marks a volume whose claim is gone Released (the
provisioner then deletes it if its class says ``Delete``). A claim without a class, or of a class that does not
exist, stays Pending with the controller's event.
"""

from __future__ import annotations

import copy
import logging
from pathlib import Path

from .standins.provisioner import PROVISIONER_ANNOTATIONS

log = logging.getLogger("kubesim.controllers")

PVCS = "/persistentvolumeclaims"
PVS = "/persistentvolumes"


class VolumeBinding:
    """A part of :class:`kubesim.controllers.Controllers` (a mixin): it uses the controllers' ``event``,
    ``store``, ``volumes_dir``."""

    def _storage_class(self, name: str | None) -> dict | None:
        scs = self.store.items("storage.k8s.io/storageclasses")
        if name is None:
            return next((s for s in scs if (s["metadata"].get("annotations") or {}).get(
                "storageclass.kubernetes.io/is-default-class") == "true"), None)
        return next((s for s in scs if s["metadata"]["name"] == name), None)

    def reconcile_pvcs(self) -> None:
        """Claims waiting for a volume: mark them for their class's provisioner."""
        for pvc in self.store.items(PVCS):
            spec = pvc.get("spec") or {}
            if spec.get("volumeName") or (pvc.get("status") or {}).get("phase") == "Bound":
                continue
            m = pvc["metadata"]
            scname = spec.get("storageClassName")
            sc = self._storage_class(scname)
            if sc is None:
                if not scname:
                    reason, message = "FailedBinding", "no persistent volumes available for this claim and no storage class is set"
                else:
                    reason, message = "ProvisioningFailed", f'storageclass.storage.k8s.io "{scname}" not found'
                self.event(pvc, "Warning", reason, message, "persistentvolume-controller")
                self._set_pending(pvc)
                continue
            provisioner = sc.get("provisioner", "")
            ann = m.get("annotations") or {}
            if any(ann.get(a) == provisioner for a in PROVISIONER_ANNOTATIONS) and spec.get("storageClassName"):
                continue
            new = copy.deepcopy(pvc)
            new["spec"].setdefault("storageClassName", sc["metadata"]["name"])
            new["metadata"].setdefault("annotations", {}).update({a: provisioner for a in PROVISIONER_ANNOTATIONS})
            new["status"] = {"phase": "Pending"}
            self.store.raw_put(PVCS, new)
            self.event(pvc, "Normal", "ExternalProvisioning",
                       f"Waiting for a volume to be created either by the external provisioner '{provisioner}' or "
                       "manually by the system administrator. If volume creation is delayed, please verify that the "
                       "provisioner is running and correctly registered.", "persistentvolume-controller")

    def _set_pending(self, pvc: dict) -> None:
        if (pvc.get("status") or {}).get("phase") != "Pending":
            m = pvc["metadata"]
            self.store.raw_set_status(PVCS, m["namespace"], m["name"], {"phase": "Pending"})

    def reconcile_pvs(self) -> None:
        """Complete the binding of volumes pre-bound to a claim; mark Released those whose claim is gone."""
        claims = {(c["metadata"]["namespace"], c["metadata"]["name"]): c for c in self.store.items(PVCS)}
        for pv in self.store.items(PVS):
            ref = (pv.get("spec") or {}).get("claimRef") or {}
            phase = (pv.get("status") or {}).get("phase")
            claim = claims.get((ref.get("namespace"), ref.get("name")))
            if claim is not None and ref.get("uid") not in (None, claim["metadata"].get("uid")):
                claim = None
            if claim is None:
                if ref and phase == "Bound":
                    self.store.raw_put(PVS, {**pv, "status": {"phase": "Released"}})
                continue
            if phase != "Bound":
                self.store.raw_put(PVS, {**pv, "status": {"phase": "Bound"}})
            if (claim.get("status") or {}).get("phase") != "Bound":
                self._bind_claim(claim, pv)

    def _bind_claim(self, pvc: dict, pv: dict) -> None:
        new = copy.deepcopy(pvc)
        new["spec"]["volumeName"] = pv["metadata"]["name"]
        new["spec"].setdefault("volumeMode", "Filesystem")
        new["metadata"].setdefault("annotations", {}).update(
            {"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes"})
        new["status"] = {"phase": "Bound", "accessModes": pv["spec"].get("accessModes") or ["ReadWriteOnce"],
                         "capacity": dict(pv["spec"].get("capacity") or {})}
        self.store.raw_put(PVCS, new)

    def pvc_dir(self, ns: str, claim: str) -> Path:
        return self.volumes_dir / ns / claim

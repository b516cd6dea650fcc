"""The rehearsal storage provisioner as a client of a real API server.

It plays the external provisioners the rehearsal classes name (`nfs.csi.k8s.io` for RWX,
`rancher.io/local-path` for RWO): the real PV controller marks a claim with
`volume.kubernetes.io/storage-provisioner`, this creates a hostPath PersistentVolume pre-bound to it
(the PV controller completes the binding), refuses access modes the class cannot serve with the
event a CSI driver emits, grows volumes of expandable classes, and deletes released volumes of
`Delete` classes.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ..quantity import quantity
from . import storage

PROVISIONER_ANNOTATIONS = ("volume.kubernetes.io/storage-provisioner", "volume.beta.kubernetes.io/storage-provisioner")


class Provisioner:
    def __init__(self, kube, volumes_dir: Path):
        self.kube = kube
        self.volumes_dir = volumes_dir

    def reconcile(self) -> None:
        classes = {sc["metadata"]["name"]: sc for sc in self.kube.list("storage.k8s.io/v1", "StorageClass")
                   if sc.get("provisioner") in storage.PROVISIONERS}
        for pvc in self.kube.list("v1", "PersistentVolumeClaim"):
            ann = pvc["metadata"].get("annotations") or {}
            spec = pvc.get("spec") or {}
            sc = classes.get(spec.get("storageClassName") or "")
            if sc is None:
                continue
            if not spec.get("volumeName"):
                if any(ann.get(a) == sc["provisioner"] for a in PROVISIONER_ANNOTATIONS):
                    self._provision(pvc, sc)
            elif sc.get("allowVolumeExpansion"):
                self._expand(pvc)
        self._delete_released()

    def _provision(self, pvc: dict, sc: dict) -> None:
        m = pvc["metadata"]
        problem = storage.provisioning_problem(pvc, sc)
        if problem:
            self.kube.event(pvc, "Warning", "ProvisioningFailed", problem, sc["provisioner"])
            return
        path = self.volumes_dir / m["namespace"] / m["name"]
        path.mkdir(parents=True, exist_ok=True)
        pv = storage.persistent_volume(pvc, sc, str(path))
        if self.kube.create(pv) is not None:
            self.kube.event(pvc, "Normal", "ProvisioningSucceeded",
                            f'Successfully provisioned volume {pv["metadata"]["name"]}', sc["provisioner"])

    def _expand(self, pvc: dict) -> None:
        """Grow the volume to the request, as an external resizer does for an online-expandable CSI class."""
        want = storage.requested_size(pvc)
        have = ((pvc.get("status") or {}).get("capacity") or {}).get("storage")
        if not have or quantity(want) <= quantity(have):
            return
        m = pvc["metadata"]
        self.kube.patch("v1", "PersistentVolume", pvc["spec"]["volumeName"], {"spec": {"capacity": {"storage": want}}})
        self.kube.patch("v1", "PersistentVolumeClaim", m["name"], {"status": {"capacity": {"storage": want}}},
                        namespace=m["namespace"], subresource="status")
        self.kube.event(pvc, "Normal", "VolumeResizeSuccessful",
                        f'resize volume {pvc["spec"]["volumeName"]} to {want} succeeded', "external-resizer")

    def _delete_released(self) -> None:
        for pv in self.kube.list("v1", "PersistentVolume"):
            spec = pv.get("spec") or {}
            ann = pv["metadata"].get("annotations") or {}
            if ((pv.get("status") or {}).get("phase") == "Released"
                    and spec.get("persistentVolumeReclaimPolicy") == "Delete"
                    and ann.get("pv.kubernetes.io/provisioned-by") in storage.PROVISIONERS):
                self.kube.delete("v1", "PersistentVolume", pv["metadata"]["name"])
                host_path = (spec.get("hostPath") or {}).get("path")
                if host_path and Path(host_path).is_relative_to(self.volumes_dir):
                    shutil.rmtree(host_path, ignore_errors=True)

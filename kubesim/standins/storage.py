"""Dynamic provisioning decisions of the rehearsal storage classes (both backends)."""

from __future__ import annotations

ACCESS_MODES_ANNOTATION = "kubesim.io/access-modes"
SHORT_MODES = {"RWX": "ReadWriteMany", "RWO": "ReadWriteOnce", "ROX": "ReadOnlyMany", "RWOP": "ReadWriteOncePod"}
# Provisioner names the rehearsal classes carry (real ones, so clients judge them as on a cluster).
RWX_PROVISIONER = "nfs.csi.k8s.io"
RWO_PROVISIONER = "rancher.io/local-path"
PROVISIONERS = (RWX_PROVISIONER, RWO_PROVISIONER)


def supported_modes(sc: dict) -> set[str]:
    ann = (sc.get("metadata", {}).get("annotations") or {}).get(ACCESS_MODES_ANNOTATION)
    if not ann:
        return {"ReadWriteOnce", "ReadWriteOncePod", "ReadWriteMany", "ReadOnlyMany"}
    return {SHORT_MODES.get(a.strip(), a.strip()) for a in ann.split("+")} | {"ReadWriteOnce", "ReadWriteOncePod"}


def provisioning_problem(pvc: dict, sc: dict) -> str | None:
    """The message a provisioner of this class gives for a claim it cannot serve, else None."""
    modes = (pvc.get("spec") or {}).get("accessModes") or ["ReadWriteOnce"]
    bad = [m for m in modes if m not in supported_modes(sc)]
    if bad:
        return (f'failed to provision volume with StorageClass "{sc["metadata"]["name"]}": '
                f"rpc error: code = InvalidArgument desc = access mode {bad[0]} is not supported")
    return None


def requested_size(pvc: dict) -> str:
    return (((pvc.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage", "1Gi")


def persistent_volume(pvc: dict, sc: dict, host_path: str) -> dict:
    """The PV a provisioner creates for ``pvc``: pre-bound by claimRef, as external provisioners do."""
    m = pvc["metadata"]
    spec = pvc.get("spec") or {}
    return {
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": f'pvc-{m["uid"]}',
                     "annotations": {"pv.kubernetes.io/provisioned-by": sc.get("provisioner", "")}},
        "spec": {"capacity": {"storage": requested_size(pvc)},
                 "accessModes": spec.get("accessModes") or ["ReadWriteOnce"],
                 "persistentVolumeReclaimPolicy": sc.get("reclaimPolicy", "Delete"),
                 "storageClassName": sc["metadata"]["name"],
                 "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": m["name"],
                              "namespace": m["namespace"], "uid": m["uid"]},
                 "hostPath": {"path": host_path, "type": "DirectoryOrCreate"},
                 "volumeMode": spec.get("volumeMode") or "Filesystem"},
    }


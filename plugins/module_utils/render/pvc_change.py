# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What may happen to an existing model cache PVC when the inputs change.

A PVC's storage class and access modes are immutable and it can never shrink; it can grow only when
its StorageClass allows expansion. Anything else would mean deleting the claim and the weights on
it (hundreds of GB to download again), which the collection never does on its own.
"""

from __future__ import annotations

_UNITS = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50,
          "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15}


def quantity_bytes(q) -> int:
    """A Kubernetes storage quantity ("533Gi", "1T", "1000") in bytes."""
    text = str(q).strip()
    for unit in sorted(_UNITS, key=len, reverse=True):
        if text.endswith(unit):
            return int(float(text[: -len(unit)]) * _UNITS[unit])
    return int(float(text))


def pvc_change(existing: dict | None, requested_class: str | None, wanted_size_gi: int,
               storage_classes: list[dict]) -> dict:
    """``{"action": "create"|"keep"|"grow"|"refuse", "size": "<n>Gi", "messages": [...]}``.

    ``requested_class`` is the class the user named (None or "" when they named none: an existing
    claim is then adopted whatever its class). ``storage_classes`` are the cluster's StorageClasses.
    """
    wanted = f"{int(wanted_size_gi)}Gi"
    if not existing:
        return {"action": "create", "size": wanted, "messages": []}
    spec = existing.get("spec") or {}
    name = existing.get("metadata", {}).get("name", "the model cache PVC")
    live_class = spec.get("storageClassName") or ""
    live_size = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "0")
    refusals = []
    if requested_class and requested_class != live_class:
        refusals.append(
            f"[pvc-storage-class-immutable] PVC {name} exists on StorageClass '{live_class or '(none)'}'; "
            f"storage_class={requested_class} cannot apply: a PVC's class is immutable, and replacing the claim "
            "deletes the cached weights. Keep the existing class (omit storage_class or pass "
            f"storage_class={live_class}), or remove the cache first with teardown.yml -e purge_model_cache=true "
            "-e confirm_purge=<namespace> and deploy again.")
    if quantity_bytes(wanted) <= quantity_bytes(live_size):
        if refusals:
            return {"action": "refuse", "size": live_size, "messages": refusals}
        return {"action": "keep", "size": live_size, "messages": []}
    sc = next((c for c in storage_classes if c.get("metadata", {}).get("name") == live_class), None)
    if sc is not None and sc.get("allowVolumeExpansion"):
        if refusals:
            return {"action": "refuse", "size": live_size, "messages": refusals}
        return {"action": "grow", "size": wanted,
                "messages": [f"PVC {name} grows from {live_size} to {wanted} (StorageClass '{live_class}' "
                             "allows expansion); the cached weights stay."]}
    refusals.append(
        f"[pvc-cannot-grow] PVC {name} holds {live_size} but this plan needs {wanted}, and its StorageClass "
        f"'{live_class or '(none)'}' {'does not exist' if sc is None else 'does not allow volume expansion'}. "
        "Ask the storage admin to enable allowVolumeExpansion on it, or move the cache to a larger PVC "
        "(teardown.yml -e purge_model_cache=true -e confirm_purge=<namespace>, then deploy with a class "
        "that fits), or keep the current checkpoint.")
    return {"action": "refuse", "size": live_size, "messages": refusals}

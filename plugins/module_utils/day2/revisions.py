# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The revision history of a target, kept in the cluster as one labelled ConfigMap per revision.

Every successful deploy records what it applied: the serving objects as YAML (``kubectl apply -f`` takes
them back), the plan's inputs, the collection's version, when and by whom. A failed update is never
recorded, so the newest revision is always the last one that served. Plain ``kubectl`` reads it:

    kubectl get configmap -l inferops.dynamo/record=revision -L inferops.dynamo/target,inferops.dynamo/revision

Nothing secret goes in: the objects refer to the token Secret by name only.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import yaml

from ansible_collections.inferops.dynamo.plugins.module_utils import naming

MANAGED_BY = "app.kubernetes.io/managed-by"
DATA_FIELDS = ("revision", "target", "workload", "recorded-at", "recorded-by", "collection-version", "source",
               "image", "fingerprint", "benchmark", "benchmark-at", "benchmark-run", "last-failed-update",
               "image-digests", "weights")


class RevisionError(ValueError):
    """A revision that cannot be used as asked; the message lists the revisions there are."""


def selector(target: str | None = None) -> str:
    """The label selector of a target's revisions (every target's without ``target``)."""
    return f"{naming.RECORD_LABEL}=revision" + (f",{naming.TARGET_LABEL}={target}" if target else "")


def configmap_name(workload: str, number: int) -> str:
    return f"{workload}-revision-{int(number)}"


def fingerprint(objects: list[dict]) -> str:
    """What identifies the applied objects: a revision is recorded only when it changes."""
    return hashlib.sha256(json.dumps(objects, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


def workload_image(objects: list[dict]) -> str:
    """The image of the first worker (DynamoGraphDeployment) or server container (Deployment)."""
    for obj in objects:
        spec = obj.get("spec") or {}
        if obj.get("kind") == "DynamoGraphDeployment":
            for comp in spec.get("components") or []:
                if (comp.get("type") or "worker") in ("worker", "prefill", "decode"):
                    containers = ((comp.get("podTemplate") or {}).get("spec") or {}).get("containers") or [{}]
                    return containers[0].get("image", "")
        if obj.get("kind") in ("Deployment", "StatefulSet"):
            containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or [{}]
            return containers[0].get("image", "")
    return ""


def collection_version(root: Path | None = None) -> str:
    """The collection's version: MANIFEST.json of an installed collection, else galaxy.yml of a checkout."""
    root = root or Path(__file__).resolve().parents[3]
    manifest = root / "MANIFEST.json"
    if manifest.is_file():
        return str(json.loads(manifest.read_text())["collection_info"]["version"])
    galaxy = root / "galaxy.yml"
    if galaxy.is_file():
        return str((yaml.safe_load(galaxy.read_text()) or {}).get("version", "unknown"))
    return "unknown"


DOWNLOADED = re.compile(r"^model-download: (\S+/\S+) at (\S+)$", re.M)


def provenance(pods: list[dict], download_log: str = "") -> dict:
    """What ran, as the cluster reports it: each image of the target's pods with the digest its kubelet pulled
    (``status.containerStatuses[].imageID``; a tag can move, a digest cannot), and each repository with the commit
    the model download got (its ``model-download: <repo> at <commit>`` lines)."""
    digests = {}
    for pod in pods or []:
        for status in (pod.get("status") or {}).get("containerStatuses") or []:
            if status.get("image") and status.get("imageID"):
                digests[status["image"]] = status["imageID"]
    return {"image-digests": dict(sorted(digests.items())), "weights": dict(DOWNLOADED.findall(download_log or ""))}


def build(*, labels: dict, namespace: str, workload: str, target: str, number: int, objects: list[dict],
          inputs: dict, recorded_at: str, recorded_by: str, source: str = "deploy",
          version: str | None = None, ran: dict | None = None) -> dict:
    """The ConfigMap of revision ``number``: labels for selection, the record in plain data keys,
    ``objects.yaml`` (the applied objects) and ``inputs.yaml`` (the plan's inputs)."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": configmap_name(workload, number),
            "namespace": namespace,
            "labels": {**labels, naming.TARGET_LABEL: target, naming.RECORD_LABEL: "revision", naming.REVISION_LABEL: str(int(number))},
        },
        "data": {
            "revision": str(int(number)),
            "target": target,
            "workload": workload,
            "recorded-at": recorded_at,
            "recorded-by": recorded_by or "unknown",
            "collection-version": version or collection_version(),
            "source": source,
            "image": workload_image(objects),
            "fingerprint": fingerprint(objects),
            "objects.yaml": yaml.safe_dump_all(objects, sort_keys=False),
            "inputs.yaml": yaml.safe_dump({k: v for k, v in (inputs or {}).items() if v not in (None, "")},
                                          sort_keys=True),
            # provenance(): image -> digest, repository -> commit (empty where the cluster reported none)
            **{key: yaml.safe_dump(value, sort_keys=True) for key, value in (ran or {}).items() if value},
        },
    }


def parse(configmaps: list[dict]) -> list[dict]:
    """Revisions from their ConfigMaps, oldest first: the data fields, plus ``number``, ``name``,
    ``objects`` and ``inputs``. ConfigMaps that are not revisions are ignored."""
    out = []
    for cm in configmaps or []:
        meta = cm.get("metadata") or {}
        data = cm.get("data") or {}
        number = str((meta.get("labels") or {}).get(naming.REVISION_LABEL) or data.get("revision") or "")
        if not number.isdigit() or "objects.yaml" not in data:
            continue
        rev = {k: data.get(k, "") for k in DATA_FIELDS}
        rev.update(number=int(number), name=meta.get("name", ""),
                   objects=[o for o in yaml.safe_load_all(data["objects.yaml"]) if o],
                   inputs=yaml.safe_load(data.get("inputs.yaml") or "{}") or {})
        out.append(rev)
    return sorted(out, key=lambda r: r["number"])


def summary(revisions: list[dict]) -> list[dict]:
    """The revisions without their objects (what a listing or a report shows)."""
    return [{k: v for k, v in r.items() if k not in ("objects",)} for r in revisions]


def next_record(revisions: list[dict], objects: list[dict], keep: int) -> dict:
    """Whether applying ``objects`` makes a new revision (it does unless the newest revision holds the
    same objects), its number, and the revisions to delete so that ``keep`` remain."""
    keep = max(1, int(keep))
    latest = revisions[-1] if revisions else None
    record = latest is None or latest.get("fingerprint") != fingerprint(objects)
    number = (latest["number"] + 1) if latest else 1
    after = len(revisions) + (1 if record else 0)
    prune = [r["name"] for r in revisions[: max(0, after - keep)]]
    return {"record": record, "number": number if record else latest["number"],
            "latest": latest["number"] if latest else None, "prune": prune}


def describe(rev: dict, current: int | None = None) -> str:
    """``revision 2 (current): 2026-01-02T03:04:05Z by alice, image X, deploy; benchmark passed``."""
    mark = " (current)" if current is not None and rev["number"] == current else ""
    bench = f"; benchmark {rev['benchmark']}" + (f" {rev['benchmark-at']}" if rev.get("benchmark-at") else "") \
        if rev.get("benchmark") else ""
    return (f"revision {rev['number']}{mark}: {rev.get('recorded-at') or '?'} by {rev.get('recorded-by') or '?'}, "
            f"image {rev.get('image') or '?'}, {rev.get('source') or 'deploy'}{bench}")


def select(revisions: list[dict], requested=None, target: str = "the target") -> dict:
    """The revision to restore: ``requested`` (a number), by default the one before the newest.

    Raises :class:`RevisionError` listing the revisions there are when it does not exist."""
    current = revisions[-1]["number"] if revisions else None
    listing = "; ".join(describe(r, current) for r in reversed(revisions)) or "none"
    if requested in (None, "", "previous"):
        if len(revisions) < 2:
            raise RevisionError(f"{target} has no earlier revision to roll back to. Revisions: {listing}.")
        return revisions[-2]
    try:
        number = int(str(requested).strip())
    except ValueError as exc:
        raise RevisionError(f"revision must be a revision number, got {requested!r}. Revisions of {target}: "
                            f"{listing}.") from exc
    chosen = next((r for r in revisions if r["number"] == number), None)
    if chosen is None:
        raise RevisionError(f"{target} has no revision {number}. Revisions: {listing}.")
    return chosen

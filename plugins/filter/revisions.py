# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Filters over a target's revision history (one labelled ConfigMap per revision, see module_utils/revisions).

Docs: one sidecar .yml per filter beside this file.
"""

from __future__ import annotations

import json

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import restore as rs
from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import revisions as rv


def _plain(value):
    """Plain JSON data (no templating wrappers), as written to the cluster."""
    return json.loads(json.dumps(value))


def _objects(objects, name: str) -> list[dict]:
    if not isinstance(objects, list) or not all(isinstance(o, dict) and o.get("kind") for o in objects):
        raise AnsibleFilterError(f"{name}: objects must be the list of Kubernetes objects that were applied.")
    return _plain(objects)


def revision_configmap(plan, namespace, number, objects, inputs=None, recorded_at="", recorded_by="",
                       source="deploy", ran=None):
    if not isinstance(plan, dict) or "target" not in plan or "labels" not in plan:
        raise AnsibleFilterError("revision_configmap: expected the plan of inferops.dynamo.deployment_plan.")
    try:
        number = int(number)
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError(f"revision_configmap: number must be a whole number, got {number!r}.") from exc
    return rv.build(labels=_plain(plan["labels"]), namespace=str(namespace), workload=plan["name"],
                    target=plan["target"]["key"], number=number,
                    objects=_objects(objects, "revision_configmap"), inputs=_plain(inputs or {}),
                    recorded_at=str(recorded_at), recorded_by=str(recorded_by), source=str(source),
                    ran=_plain(ran or {}))


def revision_provenance(pods, download_log=""):
    """``{image-digests, weights}``: the target's images with the digests the cluster reports, the repositories
    with the commits the download got."""
    if not isinstance(pods, list):
        raise AnsibleFilterError("revision_provenance: expected the target's pods (a list).")
    return rv.provenance(_plain(pods), str(download_log or ""))


def revision_history(configmaps):
    if not isinstance(configmaps, list):
        raise AnsibleFilterError("revision_history: expected the list of the target's revision ConfigMaps.")
    return rv.parse(_plain(configmaps))


def revision_next(history, objects, keep=10):
    if not isinstance(history, list):
        raise AnsibleFilterError("revision_next: expected the revision_history list.")
    return rv.next_record(history, _objects(objects, "revision_next"), int(keep))


def revision_select(history, requested=None, target="the target"):
    """``{revision, error, listing}``: the revision to restore (default the previous one), or why not."""
    if not isinstance(history, list):
        raise AnsibleFilterError("revision_select: expected the revision_history list.")
    current = history[-1]["number"] if history else None
    listing = [rv.describe(r, current) for r in reversed(history)]
    try:
        return {"revision": rv.select(history, requested, str(target)), "error": "", "listing": listing}
    except rv.RevisionError as exc:
        return {"revision": None, "error": str(exc), "listing": listing}


def revision_restore(revision, namespace, target):
    """``{objects, error}``: what restoring ``revision`` applies (rendered again from its recorded inputs), or why
    the record cannot be trusted."""
    if not isinstance(revision, dict):
        raise AnsibleFilterError("revision_restore: expected a revision of revision_history.")
    try:
        return {"objects": rs.restore_objects(_plain(revision), str(namespace), str(target)), "error": ""}
    except rv.RevisionError as exc:
        return {"objects": [], "error": str(exc)}


def revision_describe(revision, current=None):
    return rv.describe(revision, current)


class FilterModule:
    def filters(self):
        return {
            "revision_configmap": revision_configmap,
            "revision_history": revision_history,
            "revision_next": revision_next,
            "revision_select": revision_select,
            "revision_describe": revision_describe,
            "revision_restore": revision_restore,
            "revision_provenance": revision_provenance,
        }

# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What a server-side apply of some objects would change, asked of the API server itself.

For each object: read the live one, send the same server-side apply with ``dryRun=All`` (the API server
merges, defaults and validates as for real and stores nothing), and compare the live object with the
answer (:mod:`object_diff`). Only what the apply would change is listed; fields other managers own and the
apply keeps are listed apart, and changes that overwrite another manager's value are marked.
"""

from __future__ import annotations

import json

from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import graph_topology as gt
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import client as kc
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import discovery as disc
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import object_diff as od

SYMBOL = {"add": "+", "remove": "-", "change": "~", "replace": "!"}


def plural(api: kc.K8sApi, api_version: str, kind: str, cache: dict) -> str:
    """The resource name of ``kind`` (one discovery GET per group-version)."""
    found = disc.by_kind(api, api_version, kind, cache)
    return found["name"] if found else kind.lower() + "s"


def _strip(obj: dict | None) -> dict | None:
    if obj is None:
        return None
    out = dict(obj)
    out["metadata"] = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "managedFields"}
    return out


def preview_one(api: kc.K8sApi, obj: dict, field_manager: str, force: bool, cache: dict,
                replacement: str = gt.REFUSE) -> dict:
    meta = obj.get("metadata") or {}
    ns, name, kind = meta.get("namespace"), meta.get("name"), obj.get("kind")
    path = kc.object_path(obj["apiVersion"], plural(api, obj["apiVersion"], kind, cache), ns, name)
    live = api.get_json(path)
    entry = {"kind": kind, "name": name, "namespace": ns, "exists": live is not None}
    immutable = gt.immutable_changes(live, obj)
    if immutable and replacement != gt.RECREATE:
        raise kc.K8sError(gt.refusal(kind, name, ns, immutable))
    if immutable:
        # the webhook would refuse the dry run too: the graph is deleted and created anew (graph_replacement)
        entry.update(changes=[{"path": [], "field": "(object)", "op": "replace", "before": None, "after": None,
                               "text": "replaced: " + "; ".join(immutable), "outside": []}], left_outside=[],
                     impact={"rolls_workers": True, "workers": [], "scaled": [], "frontend": [], "replaced": True,
                             "summary": f"Replaces {kind} {name} (deleted, then created): it does not serve until "
                                        "the new graph is Ready."},
                     live=_strip(live), generation=(live.get("metadata") or {}).get("generation"))
        return entry
    if live is None:
        entry.update(changes=[{"path": [], "field": "(object)", "op": "add", "before": None, "after": None,
                               "text": "created", "outside": []}], left_outside=[],
                     impact={"rolls_workers": False, "workers": [], "scaled": [], "frontend": [],
                             "summary": f"Creates {kind} {name}."}, live=None)
        return entry
    query = {"fieldManager": field_manager, "dryRun": "All"}
    if force:
        query["force"] = "true"
    resp = api.request("PATCH", path, query=query, body=json.dumps(obj),
                       headers={"Content-Type": "application/apply-patch+yaml"})
    if resp.status >= 400:
        raise kc.api_error(resp, f"server-side apply dry run of {kind} {name}")
    merged = resp.json()
    changes = od.outside_changes(live, od.diff(live, merged), field_manager)
    entry.update(changes=changes, left_outside=od.foreign_fields(merged, field_manager),
                 impact=od.impact(kind, changes, live, merged), live=_strip(live),
                 generation=(live.get("metadata") or {}).get("generation"))
    return entry


def preview(api: kc.K8sApi, definitions: list[dict], field_manager: str, force: bool = True,
            replacement: str = gt.REFUSE) -> dict:
    """``{objects, pending, rolls_workers, restores_outside, lines}`` for ``definitions``."""
    cache: dict = {}
    objects = [preview_one(api, d, field_manager, force, cache, replacement) for d in definitions]
    return {"objects": objects,
            "pending": any(o["changes"] for o in objects),
            "rolls_workers": any(o["impact"]["rolls_workers"] for o in objects),
            "restores_outside": [c["field"] for o in objects for c in o["changes"] if c.get("outside")],
            "lines": report_lines(objects)}


def report_lines(objects: list[dict]) -> list[str]:
    """The preview as lines, object by object and field by field."""
    lines = []
    for o in objects:
        where = f"{o['kind']} {o['name']}" + (f" (namespace {o['namespace']})" if o.get("namespace") else "")
        if not o["exists"]:
            lines.append(f"{where}: new, will be created")
            continue
        if not o["changes"]:
            lines.append(f"{where}: no change")
        else:
            lines.append(f"{where}: {len(o['changes'])} field(s) change")
            for ch in o["changes"]:
                note = (f"  [changed outside the collection by {', '.join(ch['outside'])}: restored]"
                        if ch.get("outside") else "")
                lines.append(f"  {SYMBOL[ch['op']]} {ch['field']}: {ch['text']}{note}")
            lines.append(f"  {o['impact']['summary']}")
        for extra in o.get("left_outside") or []:
            lines.append(f"  left as it is (owned by {', '.join(extra['managers'])}, not by the collection): "
                         f"{extra['field']}")
    return lines

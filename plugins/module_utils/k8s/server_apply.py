# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Service layer: server-side apply of several objects through one client, with what changed in each.

The same request ``kubectl apply --server-side --force-conflicts`` sends (a PATCH of type
``application/apply-patch+yaml`` with a field manager), with ``dryRun=All`` in check mode. An object counts
as changed when it was created or when anything but its status and bookkeeping (resourceVersion,
generation, managedFields) reads differently after the apply: a status written by a controller between the
read and the apply is not this run's change.
"""

from __future__ import annotations

import copy
import json

from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import graph_topology as gt
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import apply_preview as ap
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import client as kc
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import deletes as dl

BOOKKEEPING = ("resourceVersion", "generation", "managedFields")
# The options of an apply, shared by server_side_apply and apply_diff (its preview).
APPLY_ARGUMENTS = dict(
    definitions=dict(type="list", elements="dict", required=True),
    field_manager=dict(type="str", default="inferops.dynamo"),
    force_conflicts=dict(type="bool", default=True),
    graph_replacement=dict(type="str", default="refuse", choices=["refuse", "recreate"]),
)
# how long a replaced graph may take to go (its pods' grace, the operator's finalizer)
REPLACE_TIMEOUT_S = 600


def invalid_definitions(definitions: list) -> list[int]:
    """The indexes of definitions without apiVersion, kind or metadata.name."""
    return [i for i, d in enumerate(definitions)
            if not isinstance(d, dict) or not d.get("apiVersion") or not d.get("kind")
            or not (d.get("metadata") or {}).get("name")]


def definitions_problem(definitions: list) -> str:
    """The refusal of definitions that cannot be applied (all of them named), or '' when every one can."""
    bad = invalid_definitions(definitions)
    return f"definitions {bad}: each needs apiVersion, kind and metadata.name" if bad else ""


def comparable(obj: dict | None) -> dict:
    """``obj`` without its status and the fields the API server rewrites on every write."""
    if not obj:
        return {}
    out = copy.deepcopy({k: v for k, v in obj.items() if k != "status"})
    meta = out.get("metadata") or {}
    for key in BOOKKEEPING:
        meta.pop(key, None)
    return out


def _namespace_exists(api: kc.K8sApi, ns: str) -> bool:
    return api.get_json(kc.object_path("v1", "namespaces", None, ns)) is not None


def apply_one(api: kc.K8sApi, obj: dict, field_manager: str, force: bool, dry_run: bool, cache: dict,
              replacement: str = gt.REFUSE) -> dict:
    meta = obj.get("metadata") or {}
    ns, name, kind = meta.get("namespace"), meta["name"], obj["kind"]
    plural = ap.plural(api, obj["apiVersion"], kind, cache)
    path = kc.object_path(obj["apiVersion"], plural, ns, name)
    before = api.get_json(path)
    immutable = gt.immutable_changes(before, obj)
    if immutable and replacement != gt.RECREATE:
        raise kc.K8sError(gt.refusal(kind, name, ns, immutable))
    if immutable and not dry_run:
        # the operator's webhook refuses the update: the graph is deleted (its pods with it) and created anew
        gone = dl.delete_all(api, [{"api_version": obj["apiVersion"], "kind": kind, "plural": plural,
                                    "namespace": ns, "name": name}], propagation="Foreground")
        dl.wait_gone(api, gone, REPLACE_TIMEOUT_S)
        before = None
    query = {"fieldManager": field_manager, "force": "true" if force else None, "dryRun": "All" if dry_run else None}
    resp = api.request("PATCH", path, query=query, body=json.dumps(obj),
                       headers={"Content-Type": "application/apply-patch+yaml"})
    if dry_run and resp.status == 404 and ns and before is None and not _namespace_exists(api, ns):
        # --check before the first install: the namespace this run would create is not there for the server to
        # check the object in, so it is reported as it would be created
        return {"kind": kind, "name": name, "namespace": ns, "created": True, "changed": True, "result": obj,
                "diff": {"before": {}, "after": comparable(obj)}}
    if resp.status >= 400:
        raise kc.api_error(resp, f"server-side apply of {kind} {name}")
    after = resp.json()
    old, new = comparable(before), comparable(after)
    return {"kind": kind, "name": name, "namespace": ns, "created": before is None, "changed": old != new,
            "result": after, "diff": {"before": old, "after": new}}


def apply_all(api: kc.K8sApi, definitions: list[dict], field_manager: str, force: bool = True,
              dry_run: bool = False, replacement: str = gt.REFUSE) -> dict:
    """``{changed, objects}``: each definition applied in order (the first refusal stops the rest)."""
    cache: dict = {}
    results = [apply_one(api, d, field_manager, force, dry_run, cache, replacement) for d in definitions]
    return {"changed": any(r["changed"] for r in results), "objects": results}

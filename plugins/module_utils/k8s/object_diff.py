# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What an apply changes, who owns a field, and what drifted: pure functions on Kubernetes objects.

A path is a tuple of segments: ``("f", "spec")`` for a map key and ``("k", '{"name":"Worker"}')`` for an
item of a list the API server merges by key (containers, env, components...), as in ``managedFields``
(``f:spec``, ``k:{"name":"Worker"}``). Other lists (``args``, ``command``) are atomic: one value.

* :func:`diff` lists the field changes between two versions of an object (for example the live object
  and the API server's server-side-apply dry run of the new one): only what the apply will change.
* :func:`owners` reads ``managedFields`` to tell which field managers own a path.
* :func:`impact` says whether a change rolls the Dynamo workers (a new model load) or not.
* :func:`drift` compares the fields the collection last applied (a revision) with the live object.
"""

from __future__ import annotations

import difflib
import json

from ansible_collections.inferops.dynamo.plugins.module_utils import naming

MISSING = type("Missing", (), {"__repr__": lambda self: "MISSING", "__bool__": lambda self: False})()

# Lists whose items the API server merges by key (strategic merge / SSA list-map keys).
LIST_KEYS = {
    "containers": ("name",), "initContainers": ("name",), "ephemeralContainers": ("name",), "env": ("name",),
    "volumes": ("name",), "volumeMounts": ("mountPath",), "volumeDevices": ("devicePath",),
    "components": ("name",), "imagePullSecrets": ("name",), "resourceClaims": ("name",), "claims": ("name",),
    "ports": ("containerPort", "port", "protocol"), "conditions": ("type",), "hostAliases": ("ip",),
}
# Fields that are not the user's to compare: set by controllers or the API server.
IGNORED_ANNOTATIONS = ("deployment.kubernetes.io/revision", "kubectl.kubernetes.io/last-applied-configuration",
                       # the Dynamo operator's own bookkeeping on a DGD (its webhook and its reconciler write them)
                       "nvidia.com/current-worker-hash", "nvidia.com/current-worker-hash-v2",
                       "nvidia.com/workload-provider", "nvidia.com/dynamo-operator-origin-version")
MAX_TEXT = 160


# ---------------------------------------------------------------------------- paths
def _ident(field: str, item: dict) -> str:
    keys = LIST_KEYS[field]
    ident = {k: item[k] for k in keys if k in item} if field == "ports" else {keys[0]: item.get(keys[0])}
    return json.dumps(ident, sort_keys=True, separators=(",", ":"))


def _keyed(field: str, items) -> bool:
    keys = LIST_KEYS.get(field)
    return bool(keys) and isinstance(items, list) and all(
        isinstance(i, dict) and any(k in i for k in keys[:2]) for i in items)


def _ident_match(owned: dict, ident: dict) -> bool:
    common = [k for k in owned if k in ident]
    return bool(common) and all(owned[k] == ident[k] for k in common)


def display(path: tuple) -> str:
    """``spec.components[Worker].podTemplate.spec.containers[main].args``."""
    out = ""
    for kind, key in path:
        if kind == "f":
            out += ("." if out else "") + str(key)
        else:
            ident = json.loads(key)
            out += "[" + (str(next(iter(ident.values()))) if len(ident) == 1
                          else ",".join(f"{k}={v}" for k, v in ident.items())) + "]"
    return out


def value_at(obj, path: tuple):
    cur = obj
    for kind, key in path:
        if kind == "f":
            if not isinstance(cur, dict) or key not in cur:
                return MISSING
            cur = cur[key]
        else:
            ident = json.loads(key)
            if not isinstance(cur, list):
                return MISSING
            cur = next((i for i in cur if isinstance(i, dict) and _ident_match(ident, i)), MISSING)
            if cur is MISSING:
                return cur
    return cur


def comparable(obj: dict | None) -> dict:
    """The part of an object a user sets: everything but apiVersion, kind, status and the server's
    metadata; of metadata only the labels and the annotations controllers do not own."""
    if not obj:
        return {}
    out = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "status", "metadata")}
    meta = obj.get("metadata") or {}
    kept = {}
    if meta.get("labels"):
        kept["labels"] = meta["labels"]
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in IGNORED_ANNOTATIONS}
    if annotations:
        kept["annotations"] = annotations
    if kept:
        out = {"metadata": kept, **out}
    return out


def leaves(obj, path: tuple = (), field: str = "") -> list[tuple[tuple, object]]:
    """``(path, value)`` of every leaf: scalars, atomic lists and empty maps."""
    if isinstance(obj, dict) and obj:
        out = []
        for k, v in obj.items():
            out += leaves(v, (*path, ("f", k)), k)
        return out
    if _keyed(field, obj) and obj:
        out = []
        for item in obj:
            out += leaves(item, (*path, ("k", _ident(field, item))), "")
        return out
    return [(path, obj)]


# ---------------------------------------------------------------------------- diff
def value_text(value) -> str:
    if value is MISSING:
        return "(none)"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, separators=(",", ":"))
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _list_text(before: list, after: list) -> str:
    """Token changes of two lists of scalars (an engine's argument list): ``0.90 -> 0.85 (after
    --mem-fraction-static)``, ``added --foo bar``, ``removed --baz``."""
    a, b = [str(x) for x in before], [str(x) for x in after]
    parts = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        where = f" (after {a[i1 - 1]})" if i1 > 0 else " (at the start)"
        if op == "replace":
            parts.append(f"{' '.join(a[i1:i2])} -> {' '.join(b[j1:j2])}{where}")
        elif op == "insert":
            parts.append(f"added {' '.join(b[j1:j2])}{where}")
        elif op == "delete":
            parts.append(f"removed {' '.join(a[i1:i2])}")
    return value_text("; ".join(parts)) if parts else "reordered"


def _change(path: tuple, before, after) -> dict:
    op = "add" if before is MISSING else "remove" if after is MISSING else "change"
    scalars = (str, int, float, bool, type(None))
    if op == "change" and isinstance(before, list) and isinstance(after, list) and \
            all(isinstance(x, scalars) for x in before + after):
        text = _list_text(before, after)
    else:
        text = f"{value_text(before)} -> {value_text(after)}"
    return {"path": [list(s) for s in path], "field": display(path), "op": op,
            "before": None if before is MISSING else before, "after": None if after is MISSING else after,
            "text": text}


def _walk(a, b, path: tuple, field: str, out: list) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            sub = (*path, ("f", k))
            if k not in b:
                out.append(_change(sub, a[k], MISSING))
            elif k not in a:
                out.append(_change(sub, MISSING, b[k]))
            else:
                _walk(a[k], b[k], sub, k, out)
        return
    if _keyed(field, a) and _keyed(field, b):
        items_a = {_ident(field, i): i for i in a}
        items_b = {_ident(field, i): i for i in b}
        for ident in list(items_a) + [i for i in items_b if i not in items_a]:
            sub = (*path, ("k", ident))
            if ident not in items_b:
                out.append(_change(sub, items_a[ident], MISSING))
            elif ident not in items_a:
                out.append(_change(sub, MISSING, items_b[ident]))
            else:
                _walk(items_a[ident], items_b[ident], sub, "", out)
        return
    if a != b:
        out.append(_change(path, a, b))


def diff(before: dict | None, after: dict | None) -> list[dict]:
    """Field changes from ``before`` to ``after`` (their :func:`comparable` parts), each
    ``{path, field, op (add|remove|change), before, after, text}``; items of keyed lists are matched by
    key, so a reordered list is not a change."""
    out: list[dict] = []
    _walk(comparable(before), comparable(after), (), "", out)
    return out


def path_of(change: dict) -> tuple:
    return tuple(tuple(s) for s in change["path"])


# ---------------------------------------------------------------------------- managedFields
def _entries(obj: dict | None, include_status: bool = False) -> list[dict]:
    return [e for e in ((obj or {}).get("metadata") or {}).get("managedFields") or []
            if include_status or not e.get("subresource")]


def _covers(tree: dict, path: tuple) -> bool:
    if not tree:
        return False
    node = tree
    for kind, key in path:
        if not node:
            return True     # an atomic value owned whole, above this path
        if kind == "f":
            node = node.get("f:" + key)
        else:
            ident = json.loads(key)
            node = next((v for k, v in node.items() if k.startswith("k:") and _ident_match(json.loads(k[2:]), ident)),
                        None)
        if node is None:
            return False
    return True


def owners(obj: dict | None, path: tuple) -> list[str]:
    """Field managers (not of the status subresource) whose ``managedFields`` cover ``path``."""
    return sorted({e.get("manager", "?") for e in _entries(obj) if _covers(e.get("fieldsV1") or {}, path)})


def _tree_leaves(tree: dict, path: tuple = ()) -> list[tuple]:
    out = []
    for token, sub in tree.items():
        if token == ".":
            continue
        if token.startswith("f:"):
            seg = ("f", token[2:])
        elif token.startswith("k:"):
            seg = ("k", json.dumps(json.loads(token[2:]), sort_keys=True, separators=(",", ":")))
        else:               # v: (set members) and i: (indexes): the list is reported whole
            out.append(path)
            continue
        if not sub or "." in sub:
            out.append((*path, seg))    # a leaf, or a list item added whole
        else:
            out += _tree_leaves(sub, (*path, seg))
    return sorted(set(out))


def _in_scope(path: tuple) -> bool:
    if not path:
        return False
    if path[0] == ("f", "metadata"):
        return len(path) > 2 and path[1] in (("f", "labels"), ("f", "annotations")) \
            and not (path[1] == ("f", "annotations") and path[2][1] in IGNORED_ANNOTATIONS)
    return path[0][0] == "f" and path[0][1] not in ("status", "apiVersion", "kind")


def _related(a: tuple, b: tuple) -> bool:
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def foreign_fields(obj: dict | None, field_manager: str, known: list[tuple] | None = None) -> list[dict]:
    """Fields other managers own and ``field_manager`` does not (a server-side apply leaves them as they
    are), outside ``known`` paths: ``{path, field, value, managers}``."""
    mine = [e for e in _entries(obj) if e.get("manager") == field_manager]
    found: dict[tuple, set] = {}
    for e in _entries(obj):
        if e.get("manager") == field_manager:
            continue
        for path in _tree_leaves(e.get("fieldsV1") or {}):
            if not _in_scope(path) or any(_covers(m.get("fieldsV1") or {}, path) for m in mine):
                continue
            if any(_related(path, k) for k in known or []):
                continue
            found.setdefault(path, set()).add(e.get("manager", "?"))
    return [{"path": [list(s) for s in p], "field": display(p), "value": value_at(obj, p),
             "managers": sorted(m)} for p, m in sorted(found.items(), key=lambda kv: display(kv[0]))]


def outside_changes(live: dict | None, changes: list[dict], field_manager: str) -> list[dict]:
    """``changes`` (live -> dry run) annotated with ``outside``: the other managers that own the live value,
    that is the fields the apply restores after a change made outside the collection."""
    out = []
    for ch in changes:
        others = [m for m in owners(live, path_of(ch)) if m != field_manager]
        out.append({**ch, "outside": others})
    return out


# ---------------------------------------------------------------------------- impact
def _components(obj: dict | None) -> dict:
    comps = ((obj or {}).get("spec") or {}).get("components")
    return {c.get("name"): (c.get("type") or "worker") for c in comps} if isinstance(comps, list) else {}


def impact(kind: str, changes: list[dict], before: dict | None = None, after: dict | None = None) -> dict:
    """Whether ``changes`` roll the workers.

    The Dynamo operator hashes every worker pod spec together: any change to a worker component (other than
    its replicas) rolls every worker, which means a new model load (minutes to tens of minutes); replica
    changes scale without a roll, and the frontend updates in place. For a Deployment, any change of
    ``spec.template`` replaces its pods. Returns ``{rolls_workers, workers, scaled, frontend, summary}``."""
    types = {**_components(before), **_components(after)}
    rolled, scaled, frontend, other = set(), [], set(), []
    for ch in changes:
        path = path_of(ch)
        if not path or path[0] != ("f", "spec"):
            continue
        if kind == "DynamoGraphDeployment":
            if len(path) >= 3 and path[1] == ("f", "components"):
                name = next(iter(json.loads(path[2][1]).values()))
                worker = types.get(name, "worker") in naming.WORKER_TYPES
                if len(path) == 4 and path[3] == ("f", "replicas") and ch["op"] == "change":
                    scaled.append(f"{name} {ch['before']} -> {ch['after']}")
                elif worker:
                    rolled.add(name)
                else:
                    frontend.add(name)
            else:
                other.append(ch["field"])
        elif kind in ("Deployment", "StatefulSet"):
            if len(path) >= 2 and path[1] == ("f", "template"):
                rolled.add(kind)
            elif path[1:] == (("f", "replicas"),):
                scaled.append(f"replicas {ch['before']} -> {ch['after']}")
    if kind == "DynamoGraphDeployment" and other:
        # spec-wide fields (backendFramework, env...) reach every worker pod spec
        rolled |= {n for n, t in types.items() if t in naming.WORKER_TYPES}
    workers = sorted(n for n, t in types.items() if t in naming.WORKER_TYPES) if rolled and types else sorted(rolled)
    if rolled and kind == "DynamoGraphDeployment":
        summary = (f"Rolls every worker ({', '.join(workers)}): a worker pod spec changed, so each worker "
                   "restarts and loads the model again (minutes to tens of minutes).")
    elif rolled:
        summary = (f"Replaces every pod of the {kind}: its pod template changed, so each server restarts and "
                   "loads the model again (minutes to tens of minutes).")
    elif scaled or frontend:
        parts = ([f"replicas only ({'; '.join(scaled)})"] if scaled else []) + \
                ([f"the frontend ({', '.join(sorted(frontend))}) restarts in place, no model load"] if frontend else [])
        summary = "Does not roll the workers: " + "; ".join(parts) + "."
    elif changes:
        summary = "Does not roll the workers: labels, annotations or other objects only."
    else:
        summary = "No change."
    return {"rolls_workers": bool(rolled), "workers": workers if rolled else [], "scaled": scaled,
            "frontend": sorted(frontend), "summary": summary}


# ---------------------------------------------------------------------------- drift
def drift(applied: dict | None, live: dict | None, field_manager: str) -> list[dict]:
    """How the live object differs from what ``field_manager`` last applied (``applied``, a revision's object).

    * ``changed``/``removed``: a field of ``applied`` that ``field_manager`` no longer owns: another manager
      changed it (a ``kubectl edit``, an API patch), named in ``managers``;
    * ``differs``: a field still owned by ``field_manager`` whose value is not the applied one (applied later
      by the collection and not recorded: a failed update kept for inspection);
    * ``added``: a field another manager set that ``field_manager`` does not own (a server-side apply keeps it).

    Without ``managedFields`` on the live object, values are compared. Each item is
    ``{field, op, applied, live, managers}``."""
    if live is None:
        return [{"field": "(object)", "op": "removed", "applied": "present", "live": None, "managers": []}]
    tracked = bool(_entries(live))
    out = []
    known = []
    for path, value in leaves(comparable(applied)):
        known.append(path)
        now = value_at(live, path)
        if tracked:
            who = owners(live, path)
            if field_manager in who:
                if now == value:
                    continue
                op, managers = "differs", [field_manager]
            else:
                managers = [m for m in who if m != field_manager]
                if now == value and not managers:
                    continue
                op = "removed" if now is MISSING else "changed"
        else:
            if now == value:
                continue
            op, managers = ("removed" if now is MISSING else "changed"), []
        out.append({"field": display(path), "op": op, "applied": value,
                    "live": None if now is MISSING else now, "managers": managers})
    for extra in foreign_fields(live, field_manager, known):
        out.append({"field": extra["field"], "op": "added", "applied": None, "live": extra["value"],
                    "managers": extra["managers"]})
    return out


def drift_text(item: dict) -> str:
    who = f" by {', '.join(item['managers'])}" if item.get("managers") else ""
    if item["op"] == "added":
        return f"{item['field']} added{who}: {value_text(item['live'])}"
    if item["op"] == "removed":
        return f"{item['field']} removed{who} (was {value_text(item['applied'])})"
    if item["op"] == "differs":
        return f"{item['field']} is {value_text(item['live'])}, not the recorded {value_text(item['applied'])}"
    if item.get("applied") == item.get("live"):
        return f"{item['field']} now owned{who} (same value {value_text(item['live'])})"
    if isinstance(item.get("applied"), list) and isinstance(item.get("live"), list):
        return f"{item['field']} changed{who}: {_list_text(item['applied'], item['live'])}"
    return f"{item['field']} changed{who}: {value_text(item['applied'])} -> {value_text(item['live'])}"

"""Patch semantics: JSON merge patch, strategic merge patch (approximation), JSON patch and
server-side apply field ownership (managedFields, FieldsV1)."""

from __future__ import annotations

import copy
import json
from typing import Any

# list field name -> merge key (strategic merge and server-side apply). An approximation of the
# patchMergeKey tags of the built-in types plus the DGD components list-map.
MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "imagePullSecrets": "name",
    "resourceClaims": "name",
    "claims": "name",
    "conditions": "type",
    "hostAliases": "ip",
    "components": "name",
    "ownerReferences": "uid",
    "topologySpreadConstraints": "topologyKey",
}


def merge_key_for(field: str, items: list) -> str | None:
    if field == "ports":
        for it in items:
            if isinstance(it, dict):
                if "containerPort" in it:
                    return "containerPort"
                if "port" in it:
                    return "port"
        return None
    return MERGE_KEYS.get(field)


class PatchError(Exception):
    pass


# ------------------------------------------------------------------------------ merge patch

def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            result.pop(k, None)
        else:
            result[k] = merge_patch(result.get(k), v)
    return result


# ------------------------------------------------------------------------------ strategic merge

def strategic_merge(target: Any, patch: Any, field: str = "") -> Any:
    if isinstance(patch, dict):
        if patch.get("$patch") == "replace":
            return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
        if patch.get("$patch") == "delete":
            return None
        result = copy.deepcopy(target) if isinstance(target, dict) else {}
        retain = patch.get("$retainKeys")
        for k, v in patch.items():
            if k.startswith("$"):
                continue
            if k.startswith("$setElementOrder/") or k.startswith("$deleteFromPrimitiveList/"):
                continue
            if v is None:
                result.pop(k, None)
            elif isinstance(v, list):
                result[k] = _merge_list(result.get(k), v, k)
            else:
                merged = strategic_merge(result.get(k), v, k)
                if merged is None and isinstance(v, dict) and v.get("$patch") == "delete":
                    result.pop(k, None)
                else:
                    result[k] = merged
        for k, v in patch.items():
            if k.startswith("$deleteFromPrimitiveList/"):
                name = k.split("/", 1)[1]
                if isinstance(result.get(name), list):
                    result[name] = [x for x in result[name] if x not in v]
        if isinstance(retain, list):
            result = {k: v for k, v in result.items() if k in retain}
        return result
    return copy.deepcopy(patch)


def _merge_list(target: Any, patch: list, field: str) -> list:
    key = merge_key_for(field, patch + (target if isinstance(target, list) else []))
    if not key or not isinstance(target, list):
        if key:
            return [{k: v for k, v in p.items() if k != "$patch"} for p in patch
                    if not (isinstance(p, dict) and p.get("$patch") == "delete")]
        return copy.deepcopy(patch)
    result = copy.deepcopy(target)
    for item in patch:
        if not isinstance(item, dict):
            result.append(copy.deepcopy(item))
            continue
        if item.get("$patch") == "replace":
            return [{k: v for k, v in i.items() if k != "$patch"} for i in patch if isinstance(i, dict)]
        idx = next((i for i, t in enumerate(result) if isinstance(t, dict) and t.get(key) == item.get(key)), None)
        if item.get("$patch") == "delete":
            if idx is not None:
                result.pop(idx)
            continue
        if idx is None:
            result.append(strategic_merge({}, item))
        else:
            result[idx] = strategic_merge(result[idx], item)
    return result


# ------------------------------------------------------------------------------ JSON patch

def _unescape(tok: str) -> str:
    return tok.replace("~1", "/").replace("~0", "~")


def _walk(doc: Any, pointer: str) -> tuple[Any, str]:
    if not pointer.startswith("/"):
        raise PatchError(f"invalid JSON pointer {pointer!r}")
    toks = [_unescape(t) for t in pointer[1:].split("/")]
    cur = doc
    for t in toks[:-1]:
        if isinstance(cur, list):
            cur = cur[int(t)]
        elif isinstance(cur, dict):
            if t not in cur:
                raise PatchError(f"doc is missing path: {pointer}")
            cur = cur[t]
        else:
            raise PatchError(f"doc is missing path: {pointer}")
    return cur, toks[-1]


def json_patch(doc: Any, ops: list) -> Any:
    doc = copy.deepcopy(doc)
    if not isinstance(ops, list):
        raise PatchError("json patch must be a list")
    for op in ops:
        kind, path = op.get("op"), op.get("path", "")
        try:
            if kind in ("add", "replace", "test"):
                value = copy.deepcopy(op.get("value"))
            if kind == "move" or kind == "copy":
                src_parent, src_key = _walk(doc, op["from"])
                value = src_parent[int(src_key)] if isinstance(src_parent, list) else src_parent[src_key]
                value = copy.deepcopy(value)
                if kind == "move":
                    if isinstance(src_parent, list):
                        src_parent.pop(int(src_key))
                    else:
                        del src_parent[src_key]
                kind = "add"
            if path == "" and kind in ("add", "replace"):
                doc = value
                continue
            parent, key = _walk(doc, path)
            if kind == "add":
                if isinstance(parent, list):
                    if key == "-":
                        parent.append(value)
                    else:
                        parent.insert(int(key), value)
                else:
                    parent[key] = value
            elif kind == "replace":
                if isinstance(parent, list):
                    parent[int(key)] = value
                else:
                    if key not in parent:
                        raise PatchError(f"replace operation does not apply: doc is missing key: {path}")
                    parent[key] = value
            elif kind == "remove":
                if isinstance(parent, list):
                    parent.pop(int(key))
                else:
                    if key not in parent:
                        raise PatchError(f"remove operation does not apply: doc is missing path: {path}")
                    del parent[key]
            elif kind == "test":
                cur = parent[int(key)] if isinstance(parent, list) else parent.get(key)
                if cur != value:
                    raise PatchError(f"testing value {path} failed")
            else:
                raise PatchError(f"unexpected op {kind!r}")
        except (IndexError, ValueError, KeyError, TypeError) as exc:
            raise PatchError(f"json patch {kind} {path}: {exc}") from exc
    return doc


# ------------------------------------------------------------------------------ server-side apply

Path = tuple[str, ...]
IGNORED_META = {"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
                "managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds", "generateName"}


def _key_token(item: dict, key: str) -> str:
    return "k:" + json.dumps({key: item.get(key)}, separators=(",", ":"))


def field_paths(obj: Any, prefix: Path = (), field: str = "", top: bool = True, skip_status: bool = True) -> set[Path]:
    """Leaf field paths of an object (FieldsV1 tokens)."""
    out: set[Path] = set()
    if isinstance(obj, dict):
        if not obj and prefix:
            out.add(prefix)
        for k, v in obj.items():
            if top and k in ("apiVersion", "kind"):
                continue
            if top and k == "status" and skip_status:
                continue
            if top and k == "metadata" and isinstance(v, dict):
                for mk, mv in v.items():
                    if mk in IGNORED_META:
                        continue
                    out |= field_paths(mv, (*prefix, "f:metadata", "f:" + mk), mk, False)
                continue
            out |= field_paths(v, (*prefix, "f:" + k), k, False)
    elif isinstance(obj, list):
        key = merge_key_for(field, obj)
        if key and all(isinstance(i, dict) and key in i for i in obj):
            for it in obj:
                ip = (*prefix, _key_token(it, key))
                out.add((*ip, "."))
                out |= field_paths(it, ip, "", False)
        else:
            out.add(prefix)
    else:
        out.add(prefix)
    return out


_MISSING = object()


def value_at(obj: Any, path: Path) -> Any:
    cur = obj
    for tok in path:
        if tok == ".":
            return cur
        if tok.startswith("f:"):
            if not isinstance(cur, dict) or tok[2:] not in cur:
                return _MISSING
            cur = cur[tok[2:]]
        elif tok.startswith("k:"):
            (k, v), = json.loads(tok[2:]).items()
            if not isinstance(cur, list):
                return _MISSING
            cur = next((i for i in cur if isinstance(i, dict) and i.get(k) == v), _MISSING)
            if cur is _MISSING:
                return cur
    return cur


def delete_at(obj: Any, path: Path) -> None:
    if not path:
        return
    if path[-1] == ".":
        path = path[:-1]
    parent = value_at(obj, path[:-1]) if len(path) > 1 else obj
    tok = path[-1]
    if tok.startswith("f:") and isinstance(parent, dict):
        parent.pop(tok[2:], None)
    elif tok.startswith("k:") and isinstance(parent, list):
        (k, v), = json.loads(tok[2:]).items()
        parent[:] = [i for i in parent if not (isinstance(i, dict) and i.get(k) == v)]


def apply_merge(current: Any, applied: Any, field: str = "") -> Any:
    """Merge an apply configuration into the live object (maps recursive, keyed lists by key,
    other lists atomic)."""
    if isinstance(applied, dict) and isinstance(current, dict):
        out = copy.deepcopy(current)
        for k, v in applied.items():
            out[k] = apply_merge(current.get(k), v, k)
        return out
    if isinstance(applied, list) and isinstance(current, list):
        key = merge_key_for(field, applied)
        if key and all(isinstance(i, dict) and key in i for i in applied + current):
            # As the API server merges: the live items keep their places (an apply of some items, by another
            # manager, moves nothing), the slots of the applied ones take them in the applied order, and new items
            # follow at the end.
            applied_by_key = {i.get(key): i for i in applied}
            cur_by_key = {i.get(key): i for i in current}
            refill = iter([k for k in applied_by_key if k in cur_by_key])
            out = []
            for item in current:
                if item.get(key) in applied_by_key:
                    k = next(refill)
                    out.append(apply_merge(cur_by_key[k], applied_by_key[k]))
                else:
                    out.append(copy.deepcopy(item))
            out.extend(apply_merge({}, it) for k, it in applied_by_key.items() if k not in cur_by_key)
            return out
    return copy.deepcopy(applied)


def to_fields_v1(paths: set[Path]) -> dict:
    root: dict = {}
    for p in sorted(paths):
        cur = root
        for tok in p:
            cur = cur.setdefault(tok, {})
    return root


def from_fields_v1(fv: dict, prefix: Path = ()) -> set[Path]:
    out: set[Path] = set()
    if not fv:
        if prefix:
            out.add(prefix)
        return out
    for k, v in fv.items():
        out |= from_fields_v1(v, (*prefix, k))
    return out


def changed_paths(old: dict, new: dict, skip_status: bool) -> tuple[set[Path], set[Path]]:
    """(paths whose value was set/changed in new, paths removed in new)."""
    newp = field_paths(new, skip_status=skip_status)
    oldp = field_paths(old, skip_status=skip_status) if old else set()
    changed = {p for p in newp if p not in oldp or value_at(old, p) != value_at(new, p)}
    return changed, oldp - newp

"""Label and field selectors: parsing a selector string, and matching labels or an object against it."""

from __future__ import annotations

import re
from typing import Any


def parse_label_selector(sel: str) -> list[tuple[str, str, list[str]]]:
    reqs = []
    if not sel:
        return reqs
    parts, depth, cur = [], 0, ""
    for ch in sel:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    for p in parts:
        p = p.strip()
        if not p:
            continue
        m = re.match(r"^(\S+)\s+(in|notin)\s*\((.*)\)$", p)
        if m:
            reqs.append((m.group(1), m.group(2), [v.strip() for v in m.group(3).split(",") if v.strip()]))
        elif "!=" in p:
            k, v = p.split("!=", 1)
            reqs.append((k.strip(), "!=", [v.strip()]))
        elif "==" in p:
            k, v = p.split("==", 1)
            reqs.append((k.strip(), "=", [v.strip()]))
        elif "=" in p:
            k, v = p.split("=", 1)
            reqs.append((k.strip(), "=", [v.strip()]))
        elif p.startswith("!"):
            reqs.append((p[1:].strip(), "!", []))
        else:
            reqs.append((p, "exists", []))
    return reqs


def labels_match(labels: dict, reqs: list) -> bool:
    labels = labels or {}
    for k, op, vals in reqs:
        if op == "=" and labels.get(k) != vals[0]:
            return False
        if op == "!=" and labels.get(k) == vals[0]:
            return False
        if op == "in" and labels.get(k) not in vals:
            return False
        if op == "notin" and k in labels and labels[k] in vals:
            return False
        if op == "exists" and k not in labels:
            return False
        if op == "!" and k in labels:
            return False
    return True


def selector_matches(selector: dict | None, labels: dict) -> bool:
    """A Service-style map selector or a LabelSelector (matchLabels/matchExpressions)."""
    if not selector:
        return False
    labels = labels or {}
    if "matchLabels" in selector or "matchExpressions" in selector:
        for k, v in (selector.get("matchLabels") or {}).items():
            if labels.get(k) != v:
                return False
        for e in selector.get("matchExpressions") or []:
            k, op, vals = e.get("key"), e.get("operator"), e.get("values") or []
            if (op == "In" and labels.get(k) not in vals) or (op == "NotIn" and labels.get(k) in vals) \
                    or (op == "Exists" and k not in labels) or (op == "DoesNotExist" and k in labels):
                return False
        return True
    return all(labels.get(k) == v for k, v in selector.items())


def _get_path(obj: dict, dotted: str) -> Any:
    cur: Any = obj
    for part in dotted.split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def field_matches(obj: dict, sel: str) -> bool:
    for part in sel.split(","):
        part = part.strip()
        if not part:
            continue
        neg = "!=" in part
        k, v = re.split(r"!=|==|=", part, maxsplit=1)
        val = _get_path(obj, k.strip())
        val = "" if val is None else str(val)
        if neg == (val == v.strip()):
            return False
    return True

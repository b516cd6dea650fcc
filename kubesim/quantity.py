"""Kubernetes resource quantities ("4", "500m", "533Gi") as numbers."""

from __future__ import annotations

import re
from typing import Any


def quantity(v: Any) -> float:
    if v is None:
        return 0.0
    s = str(v)
    try:
        return float(s)
    except ValueError:
        pass
    m = re.match(r"^([0-9.]+)([a-zA-Z]*)$", s)
    if not m:
        return 0.0
    num, suf = float(m.group(1)), m.group(2)
    mult = {"m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 1024, "Mi": 1024**2, "Gi": 1024**3,
            "Ti": 1024**4}.get(suf, 1)
    return num * mult

"""The faults a rehearsal cluster can be given (see docs/kubesim.md) and how a fault's name patterns match."""

from __future__ import annotations

import fnmatch
import json
import threading
from typing import Any


def match_any(patterns: Any, *names: str) -> bool:
    if not patterns:
        return False
    if isinstance(patterns, str):
        patterns = [patterns]
    for p in patterns:
        for n in names:
            if n and (fnmatch.fnmatch(n, p) or p in n):
                return True
    return False


class Faults:
    """Injected faults of one cluster (all fields plain data; see docs/kubesim.md)."""

    KINDS = ("api-down", "job-fail", "download-fail", "never-ready", "slow-download", "frontend-errors",
             "frontend-speed", "image-pull", "crashloop", "unschedulable", "forbid")

    def __init__(self):
        self.lock = threading.Lock()
        self.active: dict[str, Any] = {}

    def get(self, kind: str, default: Any = None) -> Any:
        return self.active.get(kind, default)

    def snapshot(self) -> dict:
        with self.lock:
            return json.loads(json.dumps(self.active))

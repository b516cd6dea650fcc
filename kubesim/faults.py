"""The faults a rehearsal cluster can be given, on either backend (see docs/kubesim.md): the one table of their
kinds, how a fault's name patterns match (globs), and which fault applies to a pod."""

from __future__ import annotations

import fnmatch
import json
import threading
from typing import Any

from .standins.operator_rules import DGD_LABEL, TYPE_LABEL, WORKER_TYPES

# kind -> what it does; every kind applies on both backends unless REFUSED_ON_REAL says why not
FAULTS = {
    "api-down": "the API server stops answering (connection refused) until the fault is cleared",
    "job-fail": "pods of Jobs whose name (or pod name) matches `pattern` exit 1",
    "download-fail": "a model download matching `pattern` stops at `at` % with `reason` (disk-full, not-found)",
    "never-ready": "worker pods of a DGD matching `pattern`, or of an image matching `image`, never get Ready",
    "slow-download": "model downloads take `seconds`",
    "frontend-errors": "a `rate` above 0 stops every engine of the served workloads: the real frontend refuses requests",
    "frontend-speed": "the engines restart at `factor` of their speed (--speedup-ratio)",
    "image-pull": "containers whose image matches `pattern` cannot be pulled (ErrImagePull, then ImagePullBackOff)",
    "crashloop": "pods (or their owner or DGD) matching `pattern`, or of an image matching `image`, crash-loop",
    "unschedulable": "pods matching `pattern` stay Pending (FailedScheduling)",
    "forbid": "requests for `resource` [in `namespace`, for `verbs`] are refused with 403",
}
REFUSED_ON_REAL = {
    "forbid": "real RBAC decides here: use the namespace-scoped context (kubesim-N-team) or a Role of your own",
    "unschedulable": "the real scheduler decides here: request more GPUs than the nodes have free, or fill them",
}


def match_any(patterns: Any, *names: str) -> bool:
    """Whether any name matches any of the glob ``patterns`` (a string or a list; none matches nothing)."""
    if not patterns:
        return False
    if isinstance(patterns, str):
        patterns = [patterns]
    return any(fnmatch.fnmatch(n, p) for p in patterns for n in names if n)


def fault_for(pod: dict, faults) -> str | None:
    """The injected fault that applies to this pod (``image-pull``, ``crash-loop``, ``never-ready`` or
    ``job-fail``), or None; ``faults`` maps a kind to its arguments."""
    m = pod["metadata"]
    owners = [r.get("name", "") for r in m.get("ownerReferences") or []]
    images = [c.get("image", "") for c in (pod.get("spec") or {}).get("containers") or []]
    labels = m.get("labels") or {}
    dgd = labels.get(DGD_LABEL, "")
    if faults.get("image-pull") and match_any(faults.get("image-pull").get("pattern"), *images):
        return "image-pull"
    crashloop = faults.get("crashloop") or {}
    if crashloop and (match_any(crashloop.get("pattern"), m["name"], *owners, dgd)
                      or match_any(crashloop.get("image"), *images)):
        return "crash-loop"
    never_ready = faults.get("never-ready") or {}
    if never_ready and labels.get(TYPE_LABEL) in WORKER_TYPES \
            and (match_any(never_ready.get("pattern"), dgd) or match_any(never_ready.get("image"), *images)):
        return "never-ready"
    job = labels.get("job-name") or labels.get("batch.kubernetes.io/job-name") or ""
    if faults.get("job-fail") and job and match_any(faults.get("job-fail").get("pattern"), job, m["name"]):
        return "job-fail"
    return None


class Faults:
    """Injected faults of one emulated cluster (all fields plain data)."""

    KINDS = tuple(FAULTS)

    def __init__(self):
        self.lock = threading.Lock()
        self.active: dict[str, Any] = {}

    def get(self, kind: str, default: Any = None) -> Any:
        return self.active.get(kind, default)

    def snapshot(self) -> dict:
        with self.lock:
            return json.loads(json.dumps(self.active))

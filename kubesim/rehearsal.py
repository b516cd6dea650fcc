"""Rehearsal clusters as the project's tests and benches start them: one place for where the CRDs come
from, for building the real control plane on first use and for the short delays tests run with."""

from __future__ import annotations

import os
from pathlib import Path

from .launcher import ClusterSet, start

PROJECT = Path(__file__).resolve().parent.parent
SHARED_CRDS = PROJECT.parent / "shared" / "crds"

# Short enough for CI, long enough that a watcher still sees a pod loading and a download running.
QUICK = {"ready_seconds": 1.0, "download_seconds": 1.0}

# Every catalog target the rehearsal serves, with the variables its deploy needs beyond sku, mode and framework (the
# plan refuses placeholders): the tests deploy them with these, and the profile calibration renders them the same way.
TARGETS: dict[str, dict[str, str]] = {
    "sglang-agg-gb200": {"sku": "gb200", "mode": "agg"},
    "sglang-agg-gb300": {"sku": "gb300", "mode": "agg"},
    "sglang-disagg-gb200": {"sku": "gb200", "mode": "disagg", "rdma_provider": "infiniband"},
    "sglang-disagg-gb300": {"sku": "gb300", "mode": "disagg", "rdma_provider": "infiniband"},
    "sglang-kv-router-gb200": {"sku": "gb200", "mode": "kv-router"},
    "sglang-kv-router-gb300": {"sku": "gb300", "mode": "kv-router"},
    "vllm-agg-gb200": {"sku": "gb200", "mode": "agg", "framework": "vllm"},
    "vllm-agg-gb300": {"sku": "gb300", "mode": "agg", "framework": "vllm"},
    "vllm-agg-b200": {"sku": "b200", "mode": "agg", "framework": "vllm",
                      "draft_repo": "example-org/muse-spark-dspark-draft"},
    "vllm-agg-mi355x": {"sku": "mi355x", "mode": "agg", "framework": "vllm",
                        "checkpoint_repo": "example-org/muse-spark-mxfp4"},
    "vllm-agg-mi350x": {"sku": "mi350x", "mode": "agg", "framework": "vllm",
                        "checkpoint_repo": "example-org/muse-spark-mxfp4"},
}


def project_crd_dir() -> str | None:
    """KUBESIM_CRD_DIR when set (``none``: kubesim's minimal CRDs), else the real Dynamo CRDs when they
    are beside the project (as in CI), else None (kubesim's minimal ones)."""
    chosen = os.environ.get("KUBESIM_CRD_DIR")
    if chosen:
        return None if chosen == "none" else chosen
    return str(SHARED_CRDS) if SHARED_CRDS.is_dir() else None


def start_rehearsal(clusters: int = 1, *, backend: str = "kubesim", **kwargs) -> ClusterSet:
    """``kubesim.start`` with the project's CRDs; the real backend's binaries are built first when this
    machine has not built them yet (a no-op afterwards), so a fresh clone needs no extra step."""
    if backend == "real":
        from .control_plane import build

        build.build()
        build.build_operator()
        build.build_helm()
    kwargs.setdefault("crd_dir", project_crd_dir())
    return start(clusters, backend=backend, **kwargs)

"""The CRDs a rehearsal cluster serves, for both backends: kubesim's minimal Dynamo ones, replaced by the real ones
of ``crd_dir`` when given, and the prometheus-operator's monitoring CRDs a platform team installs beside Prometheus
(read from the Go module cache that ``make control-plane`` fills; left out, and said, where Go cannot fetch them)."""

from __future__ import annotations

import copy
import functools
import hashlib
import logging
import subprocess
from pathlib import Path

import yaml

from .control_plane.build import cache_root

MINIMAL_CRDS = Path(__file__).resolve().parent / "crds"
# What the collection's monitoring objects need (PodMonitor, PrometheusRule) and the sibling most clusters have.
MONITORING_KINDS = ("podmonitors", "servicemonitors", "prometheusrules")

log = logging.getLogger("kubesim")


def monitoring_crd_files() -> list[Path]:
    from .control_plane import build

    try:
        return [build.monitoring_crd(kind) for kind in MONITORING_KINDS]
    except (OSError, RuntimeError, subprocess.CalledProcessError, ValueError) as exc:
        log.warning("no monitoring CRDs on this cluster (%s): deploys will skip their monitoring objects", exc)
        return []


# ai-dynamo 1.5.1's planner requires, of a worker component whose GPUs come (also) from DRA claims (the ComputeDomain
# of GB200/GB300 disaggregated targets), the GPU shape its operator reports in ``status.components``: gpusPerEngine and
# gpusPerReplica (the operator's api/v1beta1). A DGD CRD of an earlier operator release lacks them, and the API
# server would prune what the operator stand-in reports: the rehearsal serves the planner's release, so it declares
# the two optional integers where they are missing (docs/autoscaling.md).
PLANNER_GPU_SHAPE_FIELDS = ("gpusPerEngine", "gpusPerReplica")
DGD_CRD = "nvidia.com_dynamographdeployments.yaml"
CACHE = cache_root() / "crds"


def with_planner_gpu_shape(crd: dict) -> dict:
    """``crd`` (a DGD CRD) with the planner's GPU-shape status fields declared on v1beta1, where missing."""
    for version in crd["spec"]["versions"]:
        if version["name"] != "v1beta1":
            continue
        status = version["schema"]["openAPIV3Schema"]["properties"].get("status") or {}
        components = (status.get("properties") or {}).get("components") or {}
        item = components.get("additionalProperties") or components.get("items")
        if item is None or "properties" not in item:
            continue
        for field in PLANNER_GPU_SHAPE_FIELDS:
            item["properties"].setdefault(field, {"type": "integer", "format": "int32", "minimum": 0})
    return crd


def for_the_planner(path: Path) -> Path:
    return _amended_dgd(str(path), path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _amended_dgd(name: str, _mtime_ns: int) -> Path:
    """Parsed once per file and version: the DGD CRD is large (about 1.3 s of YAML), and a daemon of 100 clusters
    asks for it 100 times."""
    path = Path(name)
    crd = yaml.safe_load(path.read_text())
    amended = with_planner_gpu_shape(copy.deepcopy(crd))
    if amended == crd:
        return path
    text = yaml.safe_dump(amended, sort_keys=False)
    out = CACHE / hashlib.sha256(text.encode()).hexdigest()[:16] / path.name
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
    return out


def crd_files(crd_dir: str | None, monitoring: bool = True, planner_gpu_shape: bool = True) -> list[Path]:
    """kubesim's minimal CRDs, replaced by those of ``crd_dir``, then by the Dynamo operator's own (its source's
    ``config/crd/bases``, what it reads and writes) where its source is on this machine."""
    from .control_plane.build import operator_crd_dir

    by_name = {p.name: p for p in sorted(MINIMAL_CRDS.glob("*.yaml"))}
    for folder in (crd_dir, operator_crd_dir(clone=False)):
        if folder:
            by_name.update({p.name: p for p in sorted(Path(folder).glob("*.y*ml"))})
    if DGD_CRD in by_name and planner_gpu_shape:
        by_name[DGD_CRD] = for_the_planner(by_name[DGD_CRD])
    return [*by_name.values(), *(monitoring_crd_files() if monitoring else [])]

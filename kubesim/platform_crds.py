"""The CRDs a rehearsal cluster serves, for both backends: kubesim's minimal Dynamo ones, replaced by the real ones
of ``crd_dir`` when given, and the prometheus-operator's monitoring CRDs a platform team installs beside Prometheus
(read from the Go module cache that ``make control-plane`` fills; left out, and said, where Go cannot fetch them)."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

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


def crd_files(crd_dir: str | None, monitoring: bool = True) -> list[Path]:
    by_name = {p.name: p for p in sorted(MINIMAL_CRDS.glob("*.yaml"))}
    if crd_dir:
        by_name.update({p.name: p for p in sorted(Path(crd_dir).glob("*.y*ml"))})
    return [*by_name.values(), *(monitoring_crd_files() if monitoring else [])]

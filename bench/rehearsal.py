"""Where the benches find the project's rehearsal data: one place for the paths they all use."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
GROUP_VARS = REPO / "inventories" / "local" / "group_vars" / "dynamo_clusters"
TRACE = REPO / "inventories" / "rehearsal-data" / "agentic-rehearsal.jsonl"


def rehearsal_inventory(path: Path, cluster, namespace: str, **host_vars) -> Path:
    """An inventory of one host, ``rehearsal``, for ``cluster``: the variables of inventories/local/group_vars,
    the trace from the project, the roles polling every second (a poll interval would otherwise add to every
    wait), and ``host_vars``."""
    host: dict = {}
    for f in sorted(GROUP_VARS.glob("*.yml")):
        host.update(yaml.safe_load(f.read_text()) or {})
    host.update({"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                 "model_cache_trace_url": f"file://{TRACE}", "cluster_kubeconfig": str(cluster.kubeconfig),
                 "cluster_context": cluster.context, "k8s_namespace": namespace,
                 "model_cache_poll_seconds": 1, "engine_poll_seconds": 1, **host_vars})
    # the control node named too, so that what runs there (a delegated report) uses the same interpreter (the
    # control node's cost bench counts module processes through it)
    control = {k: host[k] for k in ("ansible_connection", "ansible_python_interpreter")}
    path.write_text(yaml.safe_dump({"all": {"hosts": {"localhost": control},
                                            "children": {"dynamo_clusters": {"hosts": {"rehearsal": host}}}}}))
    return path

# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""GPU and RDMA capacity of a set of nodes, for the preflight checks. Pure functions."""

from __future__ import annotations


def _quantity(value) -> int:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return 0


def node_capacity(nodes: list[dict], gpu_resource: str, extra_resources: list[str] | None = None) -> dict:
    """Allocatable GPUs per node and in total, and which ``extra_resources`` no node offers."""
    per_node = {}
    offered: set[str] = set()
    for node in nodes or []:
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        per_node[node["metadata"]["name"]] = _quantity(allocatable.get(gpu_resource, 0))
        offered.update(k for k, v in allocatable.items() if _quantity(v) > 0)
    return {
        "nodes": len(per_node),
        "per_node": per_node,
        "total": sum(per_node.values()),
        "largest": max(per_node.values(), default=0),
        "missing": [r for r in (extra_resources or []) if r not in offered],
    }

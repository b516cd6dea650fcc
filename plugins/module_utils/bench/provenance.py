# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The exact stack a benchmark ran on, for ``summary.json`` (pure Python).

Enough to reproduce or to tell two runs apart: the images, a hash of the rendered worker and frontend
command lines (command, args, env), the plan's inputs and a hash of the whole plan, the collection and
AIPerf versions, the SKU and the node and GPU counts, the trace the Job replayed with its SHA-256 (as
the Job measured it on the PVC) and the run's start and end times.
"""

from __future__ import annotations

import hashlib
import json
import os

MANIFEST_FILES = ("MANIFEST.json", "galaxy.yml")


def _sha256(value):
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode()).hexdigest()


def command_lines(plan):
    """What runs in each serving container, in plan order: ``[{component, image, command, args, env}]``."""
    out = []
    for part in [plan.get("frontend"), *list(plan.get("workers") or [])]:
        if part:
            out.append({k: part.get(k) for k in ("component", "image", "command", "args", "env")})
    return out


def collection_version(root):
    """The collection's version from an installed MANIFEST.json or a checkout's galaxy.yml, else None."""
    manifest = os.path.join(root, "MANIFEST.json")
    try:
        with open(manifest, encoding="utf-8") as fh:
            return json.load(fh)["collection_info"]["version"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        with open(os.path.join(root, "galaxy.yml"), encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("version:"):
                    return line.split(":", 1)[1].strip().strip("'\"") or None
    except OSError:
        pass
    return None


def provenance(plan, plan_inputs=None, aiperf_image=None, run_info=None, summary_raw=None,
               collection=None, expected_trace_sha256=None, trace_source=None):
    """The ``provenance`` block of ``summary.json``."""
    plan = plan or {}
    run_info = run_info or {}
    summary_raw = summary_raw or {}
    commands = command_lines(plan)
    workers = plan.get("workers") or []
    trace = (plan.get("benchmark") or {}).get("trace") or {}
    inputs = {k: v for k, v in (plan_inputs or {}).items() if v not in (None, "")}
    measured_sha = run_info.get("trace_sha256")
    return {
        "collection": {"name": plan.get("collection", "inferops.dynamo"), "version": collection},
        "aiperf": {"version": summary_raw.get("aiperf_version") or run_info.get("aiperf_version"),
                   "image": aiperf_image, "schema_version": summary_raw.get("schema_version"),
                   "benchmark_id": summary_raw.get("benchmark_id"),
                   "command": (summary_raw.get("run_info") or {}).get("cli_command")},
        "images": sorted({c["image"] for c in commands if c.get("image")}),
        "command_lines_sha256": _sha256(commands) if commands else None,
        "plan_inputs": inputs,
        "plan_sha256": _sha256(plan) if plan else None,
        "target": (plan.get("target") or {}).get("key"),
        "checkpoint": (plan.get("checkpoint") or {}).get("hf_id"),
        "served_model_name": (plan.get("model") or {}).get("served_model_name"),
        "sku": (plan.get("sku") or {}).get("key"),
        "nodes": sum(int(w.get("nodes", 1)) * int(w.get("replicas", 1)) for w in workers) or None,
        "gpus": plan.get("gpus_total"),
        "trace": {"name": trace.get("name") or trace.get("path_on_cache"), "source": trace_source or None,
                  "file": run_info.get("trace_file"),
                  "sha256": measured_sha, "lines": run_info.get("trace_lines"),
                  "expected_sha256": expected_trace_sha256 or None,
                  "sha256_matches": (measured_sha == expected_trace_sha256) if measured_sha and expected_trace_sha256
                  else None,
                  "replayed_sha256": run_info.get("replayed_sha256"), "replayed_lines": run_info.get("replayed_lines")},
        "started": run_info.get("started") or summary_raw.get("start_time"),
        "finished": run_info.get("finished") or summary_raw.get("end_time"),
        "aiperf_start_time": summary_raw.get("start_time"), "aiperf_end_time": summary_raw.get("end_time"),
    }

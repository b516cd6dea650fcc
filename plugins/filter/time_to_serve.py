# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Filters of the time-to-serve path: the model source, the runtime image pre-pull and the phase report.

Docs: one sidecar .yml per filter beside this file.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import time_to_serve as _tts
from ansible_collections.inferops.dynamo.plugins.module_utils.render import model_transfer
from ansible_collections.inferops.dynamo.plugins.module_utils.render import objects as render


def _plan(plan, name: str) -> dict:
    if not isinstance(plan, dict) or "workers" not in plan or "sku" not in plan:
        raise AnsibleFilterError(f"{name}: expected the 'plan' returned by inferops.dynamo.deployment_plan, "
                                 f"got {type(plan).__name__}. Run the inferops.dynamo.plan role first.")
    return plan


def model_cache_source(source, parallelism=1, retries=model_transfer.DOWNLOAD_RETRIES):
    try:
        return model_transfer.model_source(source, int(parallelism), int(retries))
    except (model_transfer.SourceError, ValueError) as exc:
        problems = getattr(exc, "problems", [str(exc)])
        raise AnsibleFilterError(
            f"model_cache_source refused ({len(problems)} problem{'s' if len(problems) > 1 else ''}): "
            + "; ".join(problems) + ". Nothing was changed.") from exc


def prepull_job(plan, namespace, nodes, deadline_s=3600):
    plan = _plan(plan, "prepull_job")
    if not namespace:
        raise AnsibleFilterError("prepull_job: a namespace is required.")
    try:
        count = int(nodes)
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError(f"prepull_job: nodes must be the number of the SKU's nodes, got {nodes!r}.") from exc
    if count <= 0:
        raise AnsibleFilterError("prepull_job: there is no node of the SKU to pre-pull on.")
    return render.prepull_job(plan, namespace, count, int(deadline_s))


def prepull_nodes(nodes, plan):
    if not isinstance(nodes, list):
        raise AnsibleFilterError("prepull_nodes: expected the list of Node objects.")
    return model_transfer.nodes_missing_images(_plan(plan, "prepull_nodes"), nodes)


def time_to_serve(data, cluster=""):
    if not isinstance(data, dict) or "started_at" not in data:
        raise AnsibleFilterError("time_to_serve: expected a dict with started_at (epoch seconds) and the live objects.")
    result = _tts.report(
        float(data["started_at"]), data.get("answered_at"), download_job=data.get("download_job") or None,
        trace_job=data.get("trace_job") or None, prepull_job=data.get("prepull_job") or None,
        pods=data.get("pods") or [], smoke_seconds=data.get("smoke_seconds"), overlap=data.get("overlap", True))
    result["lines"] = _tts.lines(result, cluster)
    return result


class FilterModule:
    def filters(self):
        return {
            "model_cache_source": model_cache_source,
            "prepull_job": prepull_job,
            "prepull_nodes": prepull_nodes,
            "time_to_serve": time_to_serve,
        }

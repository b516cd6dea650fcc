# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Filters of a running target's life: does an update fit, what a failed one did, what runs where.

Docs: one sidecar .yml per filter beside this file.
"""

from __future__ import annotations

import json

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import fleet_status as fs
from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import update_report as ur
from ansible_collections.inferops.dynamo.plugins.module_utils.preflight import gpu_occupancy as go
from ansible_collections.inferops.dynamo.plugins.module_utils.preflight import workload_provider as wp

WORKLOAD_KINDS = ("DynamoGraphDeployment", "Deployment", "StatefulSet")


def _plain(value):
    return json.loads(json.dumps(value))


def gpu_fit(nodes, pods, objects, live=None, rolls_workers=False, resources=None, target="the target",
            cluster="the cluster", node_selector="", sku="", teardown_hint=""):
    """Whether the workload of ``objects`` fits beside the running ``pods`` on ``nodes`` (see gpu_occupancy)."""
    if not isinstance(nodes, list) or not isinstance(pods, list):
        raise AnsibleFilterError("gpu_fit: expected the SKU's Nodes and the Pods (lists of objects).")
    workload = next((o for o in objects or [] if isinstance(o, dict) and o.get("kind") in WORKLOAD_KINDS), None)
    if workload is None:
        raise AnsibleFilterError("gpu_fit: objects hold no DynamoGraphDeployment or Deployment.")
    resources = [str(r) for r in resources or []]
    if not resources:
        raise AnsibleFilterError("gpu_fit: resources must name the GPU resource first (e.g. [nvidia.com/gpu]).")
    return go.check(_plain(nodes), _plain(pods), _plain(workload), _plain(live) if live else None,
                    resources=resources, rolls_workers=bool(rolls_workers), target=str(target),
                    cluster=str(cluster), node_selector=str(node_selector), sku=str(sku),
                    teardown_hint=str(teardown_hint))


def workload_provider(objects, live=None, grove_served=False, rolls_workers=False):
    """How the cluster's Dynamo operator runs the graph of ``objects`` (see workload_provider)."""
    desired = next((o for o in objects or [] if isinstance(o, dict) and o.get("kind") == "DynamoGraphDeployment"), None)
    if desired is None:
        return {"provider": None, "surge": True, "outages": []}
    name = wp.provider(_plain(live) if live else None, _plain(desired), bool(grove_served))
    return {"provider": name, "surge": wp.surge(name),
            "outages": wp.rolling_outages(name, _plain(desired), bool(rolls_workers) and live is not None)}


def update_failure(stage, message, at, engine_status=None):
    """What an update looked like when it failed (see update_report.failure)."""
    if engine_status is not None and not isinstance(engine_status, dict):
        raise AnsibleFilterError("update_failure: engine_status must be the readiness wait's result (a dict) or none.")
    return ur.failure(stage=str(stage) if stage else None, message=message, at=str(at),
                      engine_status=_plain(engine_status) if engine_status else None)


def _kwargs(value, name, keys):
    if not isinstance(value, dict):
        raise AnsibleFilterError(f"{name}: expected a dict with {', '.join(keys)}.")
    unknown = sorted(set(value) - set(keys))
    if unknown:
        raise AnsibleFilterError(f"{name}: unknown key(s) {', '.join(unknown)}; valid: {', '.join(keys)}.")
    return _plain(value)


REPORT_KEYS = ("target", "cluster", "namespace", "action", "stage", "failure", "tried", "previous", "restored",
               "restore_error", "not_settled", "rollback_on_failure", "atomic", "outage_text", "rollback_cmd",
               "teardown_cmd", "unchanged")
OUTAGE_KEYS = ("serving_at_failure", "unserved_since", "failed_at", "stage", "restore_started", "served_again",
               "restore_rolls", "kept_serving")


def update_report(facts):
    args = _kwargs(facts, "update_report", REPORT_KEYS)
    for key in ("target", "cluster", "namespace", "action", "stage", "failure"):
        args.setdefault(key, "")
    args.setdefault("tried", [])
    args.setdefault("previous", None)
    for key in ("restored", "atomic", "restore_error", "not_settled"):
        args[key] = args.get(key) or None
    args["rollback_on_failure"] = bool(args.get("rollback_on_failure", True))
    args["unchanged"] = bool(args.get("unchanged", False))
    return ur.update_report(**args)


def update_outage(facts):
    args = _kwargs(facts, "update_outage", OUTAGE_KEYS)
    return ur.outage(serving_at_failure=bool(args.get("serving_at_failure")),
                     unserved_since=args.get("unserved_since") or None, failed_at=str(args.get("failed_at") or ""),
                     stage=str(args.get("stage") or ""), restore_started=args.get("restore_started") or None,
                     served_again=args.get("served_again") or None, restore_rolls=bool(args.get("restore_rolls")),
                     kept_serving=bool(args.get("kept_serving")))


def target_status(reads, cluster, namespace, field_manager="inferops.dynamo"):
    if not isinstance(reads, dict):
        raise AnsibleFilterError("target_status: expected the reads of inferops.dynamo.cluster_facts.")
    return fs.target_rows(str(cluster), str(namespace), _plain(reads), str(field_manager))


def unreachable_status(message, cluster, namespace):
    return [fs.unreachable_row(str(cluster), str(namespace), str(message))]


def status_live_targets(rows):
    """What prometheus_status reads for one cluster's rows (runtime and framework from the catalog)."""
    from ansible_collections.inferops.dynamo.plugins.module_utils.plan.catalog import load_catalog

    return fs.live_targets(_plain(rows or []), load_catalog().targets)


def status_with_live(rows, live):
    if not isinstance(live, dict):
        raise AnsibleFilterError("status_with_live: expected the 'targets' returned by inferops.dynamo.prometheus_status.")
    return fs.with_live(_plain(rows or []), _plain(live))


def fleet_status(hostvars, hosts, title="Status"):
    """The rows of every cluster (each host's ``release_status_rows``), as text, Markdown and data."""
    rows = []
    for host in hosts or []:
        rows += list((hostvars.get(host) or {}).get("release_status_rows") or [])
    rows = _plain(rows)
    return {"rows": rows, "lines": fs.table_lines(rows), "markdown": fs.markdown(rows, str(title))}


class FilterModule:
    def filters(self):
        return {
            "gpu_fit": gpu_fit,
            "workload_provider": workload_provider,
            "update_report": update_report,
            "update_outage": update_outage,
            "update_failure": update_failure,
            "target_status": target_status,
            "unreachable_status": unreachable_status,
            "fleet_status": fleet_status,
            "status_live_targets": status_live_targets,
            "status_with_live": status_with_live,
        }

# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The NetworkPolicies of a target: who may reach its endpoint, its workers and its planner.

The OpenAI endpoint has no authentication and the workers' ports (metrics, KV events, the NIXL bootstrap) take
anything that connects, so by default only these get in:

- the frontend (or standalone vLLM's server): pods of the target's own namespace (its benchmark Job, the user's
  clients there), the namespaces and pod labels the user names (``network_policy_clients``), the monitoring
  namespace, and the API server's address ranges the user names (``network_policy_api_server_cidrs``; the smoke
  test goes through the API server's service proxy, which a CNI may count as traffic from outside the cluster);
- the workers: pods of their own graph only (the frontend, the other workers, the planner), and the monitoring
  namespace for their metrics;
- the planner: the monitoring namespace, for its metrics.

Policies restrict ingress only: workers reach each other, the API server and the weights as before. The Dynamo
operator labels every pod of a graph with its name and component type, which the selectors read.
Pure Python: no Ansible imports.
"""

from __future__ import annotations

from ansible_collections.inferops.dynamo.plugins.module_utils import naming

API_VERSION = "networking.k8s.io/v1"
NAME_LABEL = "kubernetes.io/metadata.name"      # every namespace carries its name (Kubernetes >= 1.22)


def _namespace(name: str) -> dict:
    return {"namespaceSelector": {"matchLabels": {NAME_LABEL: name}}}


def client_peers(clients: list[dict]) -> list[dict]:
    """network_policy_clients as NetworkPolicy peers: a namespace, pod labels, or pods so labelled there."""
    peers = []
    for client in clients or []:
        peer: dict = {}
        if client.get("namespace"):
            peer.update(_namespace(client["namespace"]))
        if client.get("pod_labels"):
            # without a namespace: pods so labelled in the target's own namespace (NetworkPolicy's own reading)
            peer["podSelector"] = {"matchLabels": {str(k): str(v) for k, v in client["pod_labels"].items()}}
        peers.append(peer)
    return peers


def _policy(plan: dict, ns: str, name: str, selector: dict, sources: list[dict]) -> dict:
    return {
        "apiVersion": API_VERSION,
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": ns, "labels": dict(plan["labels"])},
        "spec": {"podSelector": selector, "policyTypes": ["Ingress"], "ingress": sources},
    }


def network_policies(plan: dict, ns: str) -> list[dict]:
    """The target's NetworkPolicies (none when the plan turned them off)."""
    settings = plan.get("network_policy") or {}
    if not settings.get("enabled"):
        return []
    monitoring = _namespace(settings["monitoring_namespace"])
    api_servers = [{"ipBlock": {"cidr": c}} for c in settings.get("api_server_cidrs") or []]
    callers = [{"podSelector": {}}, *client_peers(settings.get("clients") or []), monitoring, *api_servers]
    name = plan["name"]
    if plan["kind"] != "DynamoGraphDeployment":
        selector = {"matchLabels": {"app.kubernetes.io/name": name}}
        return [_policy(plan, ns, f"{name}-server", selector, [{"from": callers}])]
    graph = {naming.DGD_LABEL: name}
    policies = [
        _policy(plan, ns, f"{name}-frontend", {"matchLabels": {**graph, naming.COMPONENT_TYPE_LABEL: "frontend"}},
                [{"from": callers}]),
        _policy(plan, ns, f"{name}-workers",
                {"matchLabels": graph, "matchExpressions": [{"key": naming.COMPONENT_TYPE_LABEL, "operator": "In",
                                                             "values": list(naming.WORKER_TYPES)}]},
                [{"from": [{"podSelector": {"matchLabels": graph}}, monitoring]}]),
    ]
    if (plan.get("autoscaling") or {}).get("engine") == "planner":
        policies.append(_policy(plan, ns, f"{name}-planner",
                                {"matchLabels": {**graph, naming.COMPONENT_TYPE_LABEL: "planner"}},
                                [{"from": [monitoring]}]))
    return policies

# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which workload provider the cluster's Dynamo operator turns a graph into, and what that means for an update.

The operator decides once per graph and records it on the DGD (annotation ``nvidia.com/workload-provider``): Grove
(a PodCliqueSet) when its Grove gate is on, which it turns on where the ``grove.io`` API is served, unless the DGD
is annotated ``nvidia.com/enable-grove: "false"``; otherwise its own DynamoComponentDeployments and Deployments
(LeaderWorkerSets for multinode workers). The operator rolls Deployment workers itself, new ones first (a surge);
Grove and LWS roll natively, one pod or group at a time with no surge, so a one-replica worker is down while it
rolls.
"""

from __future__ import annotations

PROVIDER_ANNOTATION = "nvidia.com/workload-provider"
ENABLE_GROVE_ANNOTATION = "nvidia.com/enable-grove"
GROVE, COMPONENT = "grove", "component"


def provider(live: dict | None, desired: dict | None, grove_served: bool) -> str:
    """``grove`` or ``component``: the live graph's recorded provider, else what the operator will choose."""
    for obj in (live, desired):
        recorded = ((obj or {}).get("metadata") or {}).get("annotations") or {}
        if obj is live and recorded.get(PROVIDER_ANNOTATION):
            return recorded[PROVIDER_ANNOTATION]
    opted_out = (((desired or {}).get("metadata") or {}).get("annotations") or {}).get(ENABLE_GROVE_ANNOTATION)
    return GROVE if grove_served and opted_out != "false" else COMPONENT


def surge(provider_name: str) -> bool:
    """Whether the operator adds new workers before it removes old ones (Deployments) or not (Grove, LWS)."""
    return provider_name != GROVE


def rolling_outages(provider_name: str, desired: dict, rolls_workers: bool) -> list[str]:
    """The worker components an update interrupts because they roll without a surge and have one replica."""
    if surge(provider_name) or not rolls_workers:
        return []
    out = []
    for c in (desired.get("spec") or {}).get("components") or []:
        if c.get("type") in ("worker", "prefill", "decode") and c.get("scalingAdapter") is None \
                and int(c.get("replicas", 1)) <= 1:
            out.append(c["name"])
    return out

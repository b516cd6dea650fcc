# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Who else uses a target's model cache: what a purge must not pull from under them.

The cache claim and the token Secret are shared by every target of the model in the namespace (and an adopted
claim belongs to whoever made it), so a purge asked for from one target's teardown may delete them only when no
other workload mounts the claim. Pure Python: no Ansible imports.
"""

from __future__ import annotations

from ansible_collections.inferops.dynamo.plugins.module_utils import naming

# the cache's own Jobs, which the purge deletes with it
CACHE_JOBS = ("model-download", "stage-benchmark-trace")


def _mounts(pod: dict, claim: str) -> bool:
    return any((v.get("persistentVolumeClaim") or {}).get("claimName") == claim
               for v in (pod.get("spec") or {}).get("volumes") or [])


def _ours(pod: dict, plan: dict) -> bool:
    labels = (pod.get("metadata") or {}).get("labels") or {}
    return (labels.get(naming.DGD_LABEL) == plan["name"] or labels.get("app.kubernetes.io/name") == plan["name"]
            or labels.get(naming.TARGET_LABEL) == plan["target"]["key"] or labels.get("job-name") in CACHE_JOBS)


def other_users(pods: list[dict], plan: dict) -> list[str]:
    """``namespace/pod`` of every live pod that mounts the plan's cache claim and is neither the target's own nor
    one of the cache's Jobs."""
    claim = plan["model_cache"]["pvc"]
    users = []
    for pod in pods or []:
        meta = pod.get("metadata") or {}
        if meta.get("deletionTimestamp") or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        if _mounts(pod, claim) and not _ours(pod, plan):
            users.append(f"{meta.get('namespace', '')}/{meta.get('name', '')}")
    return sorted(users)


def purge_refusal(pods: list[dict], plan: dict) -> str:
    """Why a purge of the plan's model cache must not happen (empty: it may)."""
    claim = plan["model_cache"]["pvc"]
    if plan["model_cache"].get("adopted"):
        return (f"purge_model_cache=true would delete the claim {claim}, which this deploy adopted as it is "
                "(model_cache_source type pvc): the collection never deletes an adopted claim. Delete it yourself if "
                "you mean it. Nothing was deleted.")
    users = other_users(pods, plan)
    if users:
        return (f"purge_model_cache=true would delete the model cache {claim}, which other workloads still mount: "
                f"{', '.join(users)}. Tear those down first (or purge without them). Nothing was deleted.")
    return ""

"""What a worker publishes about itself with Dynamo's Kubernetes discovery backend: a DynamoWorkerMetadata named after
its pod whose ``spec.data.model_cards`` hold its model deployment cards (the engine's role, KV blocks,
``max_num_batched_tokens``...). ai-dynamo 1.5.1's planner reads the engines' limits from them (without them its load
loop cannot estimate a prefill engine's TTFT, and it never scales a disaggregated graph down).

The rehearsal's engines discover each other through files (``dynamo_runtime.PLANES``); each one writes the same
cards, in the same wrapper, under ``v1/mdc`` of its graph's discovery directory. This stand-in mirrors a serving
worker pod's cards into its DynamoWorkerMetadata, owned by the pod so that the garbage collector removes it with the
pod, as the worker's own lease would."""

from __future__ import annotations

import json
import logging
from pathlib import Path

log = logging.getLogger("kubesim.standins.worker_metadata")
API_VERSION, KIND = "nvidia.com/v1alpha1", "DynamoWorkerMetadata"


def cards_of(discovery_dir: Path, pod_ip: str) -> dict[str, dict]:
    """The model cards a worker serving on ``pod_ip`` registered: its system server's address is in each card's
    metadata URLs (the engine serves its config and tokenizer from it)."""
    out = {}
    for path in sorted((discovery_dir / "v1" / "mdc").glob("*")):
        try:
            wrapper = json.loads(path.read_text())
        except (OSError, ValueError):
            continue                # being written: the next pass reads it
        if f"//{pod_ip}:" in json.dumps(wrapper.get("card_json") or {}):
            out[path.name] = wrapper
    return out


def worker_metadata(pod: dict, cards: dict[str, dict]) -> dict:
    m = pod["metadata"]
    return {"apiVersion": API_VERSION, "kind": KIND,
            "metadata": {"name": m["name"], "namespace": m["namespace"],
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": m["name"], "uid": m["uid"]}]},
            "spec": {"data": {"model_cards": cards}}}


class WorkerMetadata:
    """Publishes each serving worker pod's cards once they are all registered (one per role it serves)."""

    def __init__(self, kube):
        self.kube = kube
        self.published: set[str] = set()
        self.served: bool | None = None

    def publish(self, pod: dict, discovery_dir: Path, pod_ip: str) -> None:
        uid = pod["metadata"]["uid"]
        if uid in self.published:
            return
        if self.served is None:
            self.served = self.kube.served(API_VERSION, KIND)
        if not self.served:
            return
        cards = cards_of(discovery_dir, pod_ip)
        if not cards:
            return
        self.kube.create(worker_metadata(pod, cards))
        self.published.add(uid)

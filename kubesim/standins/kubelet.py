"""The kubelet's part that kwok does not play, as a client of a real API server.

* **Admission.** A pod bound to a kwok node waits until this admits it (annotation
  ``kubesim.inferops.dev/admitted``). Admission decides, once, whether an injected fault applies
  (image pull, crash loop, never ready, job failure: kwok's stages then show the kubelet's states),
  and whether the stand-ins run the pod themselves (runnable images and the model download:
  ``kubesim.inferops.dev/runtime=standin``); everything else kwok moves through its stages.
* **Logs.** Each admitted pod gets a CRI-format log file and a kwok ``Logs`` object pointing at it,
  so ``kubectl logs`` and the API's ``pods/log`` read it through kwok's kubelet endpoint.
* **Runnable pods** run as processes in the cluster's network namespace (``runner.PodRunner``): their
  exit code decides the pod's phase, so the real Job controller sets Complete or Failed.
"""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path

from ..faults import fault_for, match_any
from .model_servers import SERVING, STARTING
from .transfers import NodeImages, node_status_images

log = logging.getLogger("kubesim.standins.kubelet")

ADMITTED = "kubesim.inferops.dev/admitted"
RUNTIME = "kubesim.inferops.dev/runtime"
FAULT = "kubesim.inferops.dev/fault"
PULL_DELAY = "kubesim.inferops.dev/pull-ms"
READY_DELAY = "kubesim.inferops.dev/ready-ms"
LOGS_API = ("kwok.x-k8s.io/v1alpha1", "Logs")


def cri_line(text: str, stream: str = "stdout") -> str:
    """One line in the CRI log format kubelets write (and kwok reads)."""
    ts = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return f"{ts} {stream} F {text.rstrip(chr(10))}\n"


class Kubelet:
    def __init__(self, kube, logs_dir: Path, faults: dict, runner, kwok_nodes_selector: str = "",
                 image_pull_seconds: float = 0.0, model_servers=None):
        self.kube = kube
        self.model_servers = model_servers   # runs serving pods' processes: their readiness waits for it
        self.logs_dir = logs_dir
        self.faults = faults          # the cluster's live fault table (kubesim's kinds and args)
        self.runner = runner
        self._seen: set[str] = set()
        self.images = NodeImages(image_pull_seconds, runner.runnable_images)
        self._reported_images: dict[str, list[str]] = {}

    def log_file(self, pod: dict, container: str) -> Path:
        m = pod["metadata"]
        p = self.logs_dir / m["namespace"] / m["name"] / f"{container}.log"
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    def reconcile(self) -> None:
        live: set[str] = set()
        for pod in self.kube.list("v1", "Pod"):
            m = pod["metadata"]
            live.add(m["uid"])
            if not (pod.get("spec") or {}).get("nodeName") or m.get("deletionTimestamp"):
                continue
            ann = m.get("annotations") or {}
            if ann.get(ADMITTED) != "true":
                self._admit(pod)
            elif ann.get(FAULT) in (None, "never-ready") and ann.get(RUNTIME) != "standin":
                self._readiness(pod, ann.get(FAULT) == "never-ready")
            if ann.get(ADMITTED) == "true" and ann.get(RUNTIME) == "standin":
                self.runner.ensure(pod, self.log_file(pod, pod["spec"]["containers"][0]["name"]))
        self.runner.forget(live)
        self._report_images()

    def _report_images(self) -> None:
        """The engine images each node finished pulling, in the Node's status.images (as a kubelet does)."""
        for node in {n for n, _ in self.images._ready_at}:
            present = self.images.present(node)
            if present and self._reported_images.get(node) != present:
                self.kube.patch("v1", "Node", node, {"status": {"images": node_status_images(present)}},
                                subresource="status")
                self._reported_images[node] = present

    def _readiness(self, pod: dict, failing: bool) -> None:
        """never-ready is judged live, as on kubesim: a serving worker's probe starts failing when the fault
        is set (kwok's pod-unready stage) and passes again once it is cleared (pod-ready)."""
        now_failing = fault_for(pod, self.faults) == "never-ready"
        if now_failing != failing:
            m = pod["metadata"]
            self.kube.patch("v1", "Pod", m["name"], {"metadata": {"annotations": {FAULT: "never-ready" if now_failing
                                                                                  else None}}},
                            namespace=m["namespace"])

    def _admit(self, pod: dict) -> None:
        m = pod["metadata"]
        fault = fault_for(pod, self.faults)
        runtime = "standin" if fault is None and self.runner.runs(pod) else "kwok"
        containers = pod["spec"].get("containers") or []
        for c in containers:
            path = self.log_file(pod, c["name"])
            if fault == "crash-loop":
                path.write_text("".join(cri_line(x) for x in crash_traceback(m["name"]).splitlines()))
            elif fault == "job-fail":
                path.write_text(cri_line("Error: kubesim injected failure (fault job-fail): the job's command "
                                         "exited with code 1", "stderr"))
            elif not path.exists():
                path.write_text(cri_line(f"kubesim: container {c['name']} (image {c.get('image', '')}) started"))
        self.kube.create({
            "apiVersion": LOGS_API[0], "kind": LOGS_API[1],
            "metadata": {"name": m["name"], "namespace": m["namespace"],
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": m["name"], "uid": m["uid"]}]},
            "spec": {"logs": [{"containers": [c["name"]], "logsFile": str(self.log_file(pod, c["name"])),
                               "follow": True} for c in containers]},
        })
        annotations = {ADMITTED: "true", RUNTIME: runtime}
        if fault:
            annotations[FAULT] = fault
        if runtime == "kwok" and fault is None:
            # kwok's pod-start stage waits this long: the node pulling the engine image.
            wait, _ = self.images.remaining(pod)
            annotations[PULL_DELAY] = str(int(wait * 1000))
            owners = [r.get("kind") for r in m.get("ownerReferences") or []]
            if "Job" in owners and READY_DELAY not in (m.get("annotations") or {}):
                annotations[READY_DELAY] = "0"  # a Job pod has no model to load: it is ready once started
            if self.model_servers is not None and self.model_servers.serves(pod):
                annotations[SERVING] = STARTING   # Ready once its process answers (model_servers)
        self.kube.patch("v1", "Pod", m["name"], {"metadata": {"annotations": annotations}}, namespace=m["namespace"])
        if fault == "image-pull":
            # kwok's stage shows the waiting state; its events cannot name the image, a kubelet's do
            self.kube.event(pod, "Warning", "Failed", image_pull_failure(unpullable_image(pod, self.faults) or ""),
                            "kubelet")


def unpullable_image(pod: dict, faults) -> str | None:
    """The first image of the pod that the image-pull fault makes unpullable, or None."""
    pattern = (faults.get("image-pull") or {}).get("pattern")
    return next((c.get("image", "") for c in (pod.get("spec") or {}).get("containers") or []
                 if match_any(pattern, c.get("image", ""))), None)


def image_pull_failure(image: str) -> str:
    """What a kubelet (containerd) says, in the container's waiting state and its Failed event, when an image
    does not exist."""
    return (f'Failed to pull image "{image}": rpc error: code = NotFound desc = failed to pull and unpack image '
            f'"{image}": failed to resolve reference "{image}": {image}: not found')


def crash_traceback(pod: str) -> str:
    """What a worker that runs out of memory at start prints (the crash-loop fault's log)."""
    return ("Traceback (most recent call last):\n"
            '  File "/opt/dynamo/venv/lib/python3.12/site-packages/dynamo/sglang/main.py", line 212, in main\n'
            "    engine = await init_engine(config)\n"
            '  File "/opt/dynamo/venv/lib/python3.12/site-packages/sglang/srt/model_executor/model_runner.py", line 388, in init_memory_pool\n'
            "    raise RuntimeError(\n"
            "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. "
            f"(kubesim fault crashloop, pod {pod})\n")

"""Configured transfer durations shared by both backends: image pulls and trace staging.

* **Image pulls.** An engine image (any image that is neither one of the small runnable utility images,
  nor the model download's) takes ``image_pull_seconds`` the first time it lands on a node, as a runtime
  image of tens of GB does; later pods on that node start at once, and a pod that arrives while the pull
  is under way waits only for the rest of it (a kubelet pulls an image once per node). The node then
  lists the image in ``status.images``, as a kubelet reports it.
* **Trace staging.** The benchmark trace Job (the container that has ``TRACE_URL`` in its environment)
  really runs, and does not finish before ``trace_seconds``: the time a real fetch of the trace takes.
"""

from __future__ import annotations

import threading
import time

from .download import is_download


def _text(c: dict) -> str:
    return " ".join(str(x) for x in (c.get("command") or []) + (c.get("args") or []))


def pulls_slowly(container: dict, runnable_images: tuple[str, ...]) -> bool:
    """Whether this container's image is an engine image (the slow pull) rather than a utility image."""
    image = container.get("image", "")
    if not image or is_download(_text(container)):
        return False
    return not any(p in image for p in runnable_images)


def is_trace_stage(container: dict) -> bool:
    return any(e.get("name") == "TRACE_URL" for e in container.get("env") or [])


def trace_hold(pod: dict, started: float, trace_seconds: float) -> bool:
    """True while a finished trace-staging process must still look like it is fetching."""
    containers = (pod.get("spec") or {}).get("containers") or [{}]
    return trace_seconds > 0 and is_trace_stage(containers[0]) and time.time() - started < trace_seconds


class NodeImages:
    """Which engine images each node holds, and when a pull under way finishes."""

    def __init__(self, pull_seconds: float, runnable_images: tuple[str, ...], clock=time.time):
        self.pull_seconds = float(pull_seconds)
        self._clock = clock
        self.runnable_images = tuple(runnable_images)
        self._ready_at: dict[tuple[str, str], float] = {}
        self._lock = threading.Lock()

    def remaining(self, pod: dict) -> tuple[float, list[str]]:
        """Seconds until every slow image of the pod is on its node (starting the pulls it needs), and
        the images this pod waits for."""
        node = (pod.get("spec") or {}).get("nodeName") or ""
        if not node:
            return 0.0, []
        now = self._clock()
        wait, images = 0.0, []
        with self._lock:
            for c in (pod.get("spec") or {}).get("containers") or []:
                if not pulls_slowly(c, self.runnable_images):
                    continue
                # an instant pull (0 s) is still recorded: the node lists the image from then on
                ready_at = self._ready_at.setdefault((node, c["image"]), now + max(0.0, self.pull_seconds))
                if ready_at > now:
                    images.append(c["image"])
                wait = max(wait, ready_at - now)
        return wait, images

    def next_pull_done(self) -> float | None:
        """When the soonest pull under way finishes (None: none is under way)."""
        now = self._clock()
        with self._lock:
            return min((t for t in self._ready_at.values() if t > now), default=None)

    def present(self, node: str) -> list[str]:
        """The images whose pull on ``node`` has finished."""
        now = self._clock()
        with self._lock:
            return sorted(img for (n, img), t in self._ready_at.items() if n == node and t <= now)


def node_status_images(images: list[str]) -> list[dict]:
    """``status.images`` as a kubelet reports it (the size is what a runtime image of this kind weighs)."""
    return [{"names": [image], "sizeBytes": 30 * 1024 ** 3} for image in images]

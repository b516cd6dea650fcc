"""The model servers of the real backend: a simulated OpenAI frontend on each serving pod's IP.

A Ready DGD's frontend pods, and the Ready pods of a Deployment behind a Service, get a frontend that
listens on the pod IP and the Service's target port inside the cluster's network namespace. So the
smoke test reaches it through the real API server's service proxy (EndpointSlices written by the real
controller), and runnable pods by the Service's name. The latency profile and the fault controls
(``frontend-speed``, ``frontend-errors``) are kubesim's.
"""

from __future__ import annotations

import logging

from ..frontend import Frontend
from ..serving import frontend_profile
from . import operator_rules as op
from .model_servers import deployment_of
from .served_model import served_model_name

log = logging.getLogger("kubesim.standins.frontends")


def _ready(obj: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (obj.get("status") or {}).get("conditions") or [])


def _selects(selector: dict, labels: dict) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


class Frontends:
    def __init__(self, kube, netns_path: str, faults: dict, speed_factor: float = 1.0):
        self.kube = kube
        self.netns_path = netns_path
        self.faults = faults
        self.speed_factor = speed_factor
        self.running: dict[tuple[str, str, int], Frontend] = {}    # (namespace/pod, ip, port)
        self._applied: dict[tuple[str, str, int], tuple] = {}

    def wanted(self) -> dict[tuple[str, str, int], dict]:
        """Serving pods and the workload whose profile they serve."""
        pods = [p for p in self.kube.list("v1", "Pod") if _ready(p) and (p.get("status") or {}).get("podIP")]
        out: dict[tuple[str, str, int], dict] = {}
        for dgd in self.kube.list("nvidia.com/v1beta1", "DynamoGraphDeployment"):
            if not _ready(dgd):
                continue
            m = dgd["metadata"]
            for p in pods:
                labels = p["metadata"].get("labels") or {}
                if (p["metadata"]["namespace"] == m["namespace"] and labels.get(op.DGD_LABEL) == m["name"]
                        and labels.get(op.TYPE_LABEL) == "frontend"):
                    out[(f'{m["namespace"]}/{p["metadata"]["name"]}', p["status"]["podIP"], op.FRONTEND_PORT)] = dgd
        for svc in self.kube.list("v1", "Service"):
            sel = (svc.get("spec") or {}).get("selector") or {}
            ns = svc["metadata"]["namespace"]
            for p in pods:
                if p["metadata"]["namespace"] != ns or not _selects(sel, p["metadata"].get("labels") or {}):
                    continue
                owner = deployment_of(self.kube, p)
                if owner is None:
                    continue
                for port in (svc.get("spec") or {}).get("ports") or []:
                    target = port.get("targetPort", port.get("port"))
                    if isinstance(target, int):
                        out[(f'{ns}/{p["metadata"]["name"]}', p["status"]["podIP"], target)] = owner
        return out

    def reconcile(self) -> None:
        wanted = self.wanted()
        for key in [k for k in self.running if k not in wanted]:
            self.running.pop(key).stop()
            self._applied.pop(key, None)
        for key, wl in wanted.items():
            fe = self.running.get(key)
            if fe is None:
                _pod, ip, port = key
                fe = Frontend(frontend_profile(wl, self.speed_factor, served_model_name(wl)), host=ip, port=port,
                              netns_path=self.netns_path)
                try:
                    fe.start()
                except RuntimeError:
                    log.exception("cannot serve %s", key)
                    continue
                self.running[key] = fe
            wanted_faults = self._fault_settings()
            if self._applied.get(key) != wanted_faults:
                rate, status, speed = wanted_faults
                fe.update(error_rate=rate, error_status=status, speed_factor=speed)
                self._applied[key] = wanted_faults

    def _fault_settings(self) -> tuple[float, int, float]:
        err = self.faults.get("frontend-errors") or {}
        spd = self.faults.get("frontend-speed") or {}
        return (float(err.get("rate", 0.0)), int(err.get("status", 500)),
                self.speed_factor * float(spd.get("factor", 1.0)))

    def stop(self) -> None:
        for fe in self.running.values():
            fe.stop()
        self.running.clear()
        self._applied.clear()

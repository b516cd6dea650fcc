"""What answers a served workload's requests on kubesim: one simulated frontend per serving workload, paced by the
figures the collection annotated (kubesim/frontend.py); or, with ``KUBESIM_MODEL_SERVERS=dynamo``, the real Dynamo
runtime on the serving pods' IPs in the cluster's network namespace, run by the real backend's own model-server
stand-in (standins/model_servers.py) as a client of this store, and reached from the host through forwarders."""

from __future__ import annotations

import logging

from .objects import DGD, DGD_LABEL, PODS, TYPE_LABEL
from .selectors import selector_matches
from .standins.operator_rules import pod_ready
from .standins.served_model import served_model_name

log = logging.getLogger("kubesim.controllers")


def frontend_profile(wl: dict, speed_factor: float, served_model: str):
    """The simulated frontend's profile for a served workload: the model it names and the latency the
    collection annotated from the target's expected figures (both backends)."""
    from .frontend import FrontendProfile

    ann = wl["metadata"].get("annotations") or {}
    return FrontendProfile(
        served_model=served_model,
        ttft_ms=float(ann.get("inferops.dynamo/expected-ttft-p50-ms", 200)),
        tokens_per_s_per_user=float(ann.get("inferops.dynamo/expected-output-tps-per-user-p50", 50)),
        expected_concurrency=int(float(ann.get("inferops.dynamo/expected-concurrency", 16))),
        speed_factor=speed_factor)


class Serving:
    """A part of :class:`kubesim.controllers.Controllers` (a mixin): it uses the controllers' ``cfg``,
    ``cluster``, ``forwarders``, ``frontend_match``, ``frontends``, ``model_servers``, ``store``."""

    # ------------------------------------------------------------------ the real Dynamo runtime
    def runtime_model_servers(self):
        """The real backend's model-server stand-in over this cluster's store, when the cluster has a namespace
        for it (emulator.py); None otherwise."""
        if self.cluster.netns is None:
            return None
        from .standins.model_servers import ModelServers
        from .standins.served_profiles import REHEARSAL_HF_HOME, rehearsal_profiles
        from .standins.store_kube import StoreKube

        profiles = rehearsal_profiles()
        return ModelServers(StoreKube(self.store, "kubesim-model-servers"), self.cluster.netns,
                            self.cluster.state_dir / "runtime", self.cluster.faults, profiles,
                            model_path=profiles.model_path, hf_home=REHEARSAL_HF_HOME)

    def serving_held(self, pod: dict) -> bool:
        """Whether the pod's readiness waits for its model server's process to answer (as a real worker's probe)."""
        if self.model_servers is None or not self.model_servers.serves(pod):
            return False
        from .standins.model_servers import SERVING, UP

        return (pod["metadata"].get("annotations") or {}).get(SERVING) != UP

    def runtime_port_for_service(self, ns: str, name: str) -> int | None:
        """A host port that leads to a Ready pod behind the Service, on its target port, in the namespace."""
        from .netns_forward import NetnsForwarder

        svc = self.store.raw_get("/services", ns, name)
        spec = (svc or {}).get("spec") or {}
        if not spec.get("selector") or not spec.get("ports"):
            return None
        target = spec["ports"][0].get("targetPort", spec["ports"][0].get("port"))
        for pod in self.store.items(PODS, ns):
            ip = (pod.get("status") or {}).get("podIP")
            if not ip or not pod_ready(pod) or not selector_matches(spec["selector"],
                                                                    pod["metadata"].get("labels") or {}):
                continue
            port = target if isinstance(target, int) else _named_port(pod, target)
            if port is None:
                continue
            fwd = self.forwarders.get((ip, port))
            if fwd is None:
                fwd = self.forwarders[(ip, port)] = NetnsForwarder(self.cluster.netns.path, ip, port)
            return fwd.port
        return None

    def stop_model_servers(self) -> None:
        for fwd in self.forwarders.values():
            fwd.close()
        self.forwarders.clear()
        if self.model_servers is not None:
            self.model_servers.stop()

    # ------------------------------------------------------------------ frontends
    def served_workloads(self) -> list[tuple[str, dict, str, dict]]:
        """[(key, workload, ns, serving pod labels)] for Ready workloads."""
        out = []
        for dgd in self.store.items(DGD):
            conds = (dgd.get("status") or {}).get("conditions") or []
            if any(c["type"] == "Ready" and c["status"] == "True" for c in conds):
                m = dgd["metadata"]
                out.append((f'dgd/{m["namespace"]}/{m["name"]}', dgd, m["namespace"],
                            {DGD_LABEL: m["name"], TYPE_LABEL: "frontend"}))
        for key in ("apps/deployments", "apps/statefulsets"):
            for wl in self.store.items(key):
                spec, s = wl.get("spec") or {}, wl.get("status") or {}
                want = spec.get("replicas", 1) if spec.get("replicas") is not None else 1
                if want > 0 and s.get("readyReplicas", 0) >= want:
                    m = wl["metadata"]
                    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
                    out.append((f'{key}/{m["namespace"]}/{m["name"]}', wl, m["namespace"], labels))
        return out

    def profile_for(self, wl: dict):
        return frontend_profile(wl, self.cfg.speed_factor, served_model_name(wl, lambda ns, name: self.store.raw_get("/configmaps", ns, name)))

    def _apply_frontend_faults(self, fe) -> None:
        f = self.cluster.faults
        err = f.get("frontend-errors") or {}
        spd = f.get("frontend-speed") or {}
        try:
            fe.update(error_rate=float(err.get("rate", 0.0)), error_status=int(err.get("status", 500)),
                      speed_factor=self.cfg.speed_factor * float(spd.get("factor", 1.0)))
        except Exception:
            log.exception("frontend update failed")

    def reconcile_frontends(self) -> None:
        if self.model_servers is not None:
            self.model_servers.reconcile()
            return
        with self.store.lock:
            served = self.served_workloads()
        keys = {k for k, *_ in served}
        for k in list(self.frontends):
            if k not in keys:
                fe = self.frontends.pop(k)
                self.frontend_match.pop(k, None)
                try:
                    fe.stop()
                except Exception:
                    pass
        for k, wl, ns, labels in served:
            if k in self.frontends:
                continue
            try:
                from .frontend import Frontend

                fe = Frontend(self.profile_for(wl))
                fe.start()
                self._apply_frontend_faults(fe)
            except Exception:
                log.exception("cannot start frontend for %s", k)
                continue
            self.frontends[k] = fe
            self.frontend_match[k] = (ns, labels)

    def frontend_port_for_service(self, ns: str, name: str) -> int | None:
        if self.model_servers is not None:
            return self.runtime_port_for_service(ns, name)
        svc = self.store.raw_get("/services", ns, name)
        if svc is None:
            return None
        sel = (svc.get("spec") or {}).get("selector")
        for k, (wns, labels) in list(self.frontend_match.items()):
            if wns == ns and sel and selector_matches(sel, labels):
                fe = self.frontends.get(k)
                if fe is not None:
                    return fe.port
        return None


def _named_port(pod: dict, name: str) -> int | None:
    for c in (pod.get("spec") or {}).get("containers") or []:
        for p in c.get("ports") or []:
            if p.get("name") == name:
                return p.get("containerPort")
    return None

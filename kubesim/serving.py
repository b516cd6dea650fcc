"""What answers a served workload's requests on kubesim: the real Dynamo runtime on the serving pods' IPs in the
cluster's network namespace, run by the real backend's own model-server stand-in (standins/model_servers.py) as a
client of this store, and reached from the host through forwarders (netns_forward.py)."""

from __future__ import annotations

from .objects import PODS
from .selectors import selector_matches
from .standins.operator_rules import pod_ready


class Serving:
    """A part of :class:`kubesim.controllers.Controllers` (a mixin): it uses the controllers' ``cfg``,
    ``cluster``, ``forwarders``, ``model_servers``, ``store``."""

    # ------------------------------------------------------------------ the real Dynamo runtime
    def runtime_model_servers(self):
        """The real backend's model-server stand-in over this cluster's store, in the cluster's network namespace."""
        from .standins.model_servers import ModelServers
        from .standins.served_profiles import REHEARSAL_HF_HOME, rehearsal_profiles
        from .standins.store_kube import StoreKube

        profiles = rehearsal_profiles()
        return ModelServers(StoreKube(self.store, "kubesim-model-servers"), self.cluster.netns,
                            self.cluster.state_dir / "runtime", self.cluster.faults, profiles,
                            model_path=profiles.model_path, hf_home=REHEARSAL_HF_HOME,
                            speed_factor=self.cfg.speed_factor)

    def serving_held(self, pod: dict) -> bool:
        """Whether the pod's readiness waits for its model server's process to answer (as a real worker's probe)."""
        if not self.model_servers.serves(pod):
            return False
        from .standins.model_servers import SERVING, UP

        return (pod["metadata"].get("annotations") or {}).get(SERVING) != UP

    def port_for_service(self, ns: str, name: str) -> int | None:
        """A host port that leads to a Ready pod behind the Service, on its target port, in the namespace; None when
        there is none."""
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
        self.model_servers.stop()

    def reconcile_model_servers(self) -> None:
        self.model_servers.reconcile()


def _named_port(pod: dict, name: str) -> int | None:
    for c in (pod.get("spec") or {}).get("containers") or []:
        for p in c.get("ports") or []:
            if p.get("name") == name:
                return p.get("containerPort")
    return None

"""The model servers of the real backend: the real Dynamo runtime (ai-dynamo 1.5.1) on the serving pods' IPs.

Each pod that serves runs, inside the cluster's network namespace and bound to the pod's IP, the process a
real cluster's pod would run, with the arguments the collection rendered for it:

* a DynamoGraphDeployment's frontend pod runs ``dynamo.frontend`` (its rendered router mode) on port 8000;
* each of its worker pods runs a ``dynamo.mocker`` of the worker's engine, role, block size and batch, with
  its request plane on the pod's IP and its system port (health, ``/metrics``) where the operator puts it;
  a multinode worker's engine runs once per replica, on its first pod;
* a standalone ``vllm serve`` pod runs a frontend on the container's port with the served model name and a
  vLLM mocker beside it (one engine per pod, as ``vllm serve`` is).

The processes of one workload find each other through Dynamo's file discovery backend (one directory per
workload), so the frontend sees the workers of its own graph only. The timings come from the workload's
calibrated profile (``profiles``), computed in the background the first time (a target the catalog publishes no
figures for, such as standalone vLLM on B200, runs on the mocker's own timings); until a pod's process serves,
the pod is annotated ``serving=starting`` and the kubelet stand-in keeps it unready (a real worker's startup
probe fails until its engine answers).

Faults act on these processes: ``frontend-speed`` restarts the mockers with a slower engine
(``--speedup-ratio``: 0.5 makes every step take twice as long); ``frontend-errors`` stops every engine of the
served workloads while it stands (killed workers): the real frontend then answers each request itself, with 503
"not ready to serve requests yet" (the fault's ``status`` is the frontend's to choose here, and any rate above zero
stops them all: a frontend routes around a partial loss).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from ..control_plane.netns import call_inside
from ..faults import fault_for
from . import dynamo_runtime as rt
from . import operator_rules as op
from . import planner_pod
from . import pod_env as pod_env_of
from .mocker_profile import ProfileError
from .pod_env import command_words
from .served_model import served_model_name
from .worker_metadata import WorkerMetadata

log = logging.getLogger("kubesim.standins.model_servers")

SERVING = "kubesim.inferops.dev/serving"
STARTING, UP = "starting", "up"
# What the operator sets on worker pods: the system server (health for the probes, /metrics) on 9090, healthy
# once the engine's generate endpoint is.
WORKER_SYSTEM_PORT = op.WORKER_SYSTEM_PORT
WORKER_SYSTEM_ENV = {"DYN_SYSTEM_ENABLED": "true", "DYN_SYSTEM_PORT": str(WORKER_SYSTEM_PORT),
                     "DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS": '["generate"]'}
VLLM_PORT = 8000
MODELS_PATH = "/v1/models"
# the components that serve requests, and the planner that scales them (when the pods can reach the API server)
SERVED_TYPES = ("frontend", *op.WORKER_TYPES)
PLANNER_TYPE = "planner"
# what a graph's processes take from their pod's environment (the operator sets them: operator_rules.operator_env)
POD_RUNTIME_ENV = ("DYN_NAMESPACE",)


def runtime_unavailable() -> str | None:
    """None when this machine can serve with the runtime, else why not: each cluster's processes live in a network
    namespace (root, iproute2), run by the runtime's own virtualenv (`make setup`)."""
    if os.geteuid() != 0:
        return "its network namespaces need root"
    if shutil.which("ip") is None:
        return "its network namespaces need iproute2 (`ip`)"
    return rt.available()


def require_runtime() -> None:
    """Refuse a rehearsal that could not serve: every served target runs on the real Dynamo runtime."""
    problem = runtime_unavailable()
    if problem:
        raise RuntimeError(f"the rehearsal serves every target with the real Dynamo runtime, which cannot run here: "
                           f"{problem} (it needs root, iproute2 and the virtualenv `make setup` makes)")


def _ready(obj: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (obj.get("status") or {}).get("conditions") or [])


def is_standalone_vllm(pod_spec: dict) -> bool:
    words = [w for c in pod_spec.get("containers") or [] for w in command_words(c)]
    return "vllm" in " ".join(words) and "serve" in words


def _container_port(container: dict, default: int) -> int:
    words = command_words(container)
    for i, w in enumerate(words):
        if w == "--port" and i + 1 < len(words) and words[i + 1].isdigit():
            return int(words[i + 1])
        if w.startswith("--port=") and w[7:].isdigit():
            return int(w[7:])
    return default


def deployment_of(kube, pod: dict) -> dict | None:
    """The Deployment that owns ``pod`` through its ReplicaSet, as the API server has it."""
    ns = pod["metadata"]["namespace"]
    for ref in pod["metadata"].get("ownerReferences") or []:
        if ref.get("kind") == "ReplicaSet":
            rs = kube.get("apps/v1", "ReplicaSet", ref["name"], ns) or {}
            for r2 in rs.get("metadata", {}).get("ownerReferences") or []:
                if r2.get("kind") == "Deployment":
                    return kube.get("apps/v1", "Deployment", r2["name"], ns)
    return None


UNRESOLVED_PORT = ""


def probe_url(container: dict, ip: str) -> str | None:
    """The URL of the container's HTTP readiness probe (a named port resolved against the container's ports, as the
    kubelet does: a name it does not declare is ``UNRESOLVED_PORT``), or None when it has none."""
    probe = (container.get("readinessProbe") or {}).get("httpGet")
    if not probe:
        return None
    port = probe.get("port")
    if isinstance(port, str) and not port.isdigit():
        port = next((p.get("containerPort") for p in container.get("ports") or [] if p.get("name") == port), None)
        if port is None:
            return UNRESOLVED_PORT
    return f"{str(probe.get('scheme') or 'HTTP').lower()}://{ip}:{port}{probe.get('path') or '/'}"


@dataclass(frozen=True)
class PodServer:
    """The process one pod runs: which workload it belongs to, its role and the address it serves on."""

    uid: str
    pod: str                   # namespace/name
    ip: str
    workload: str              # the workload's uid (a standalone pod is its own workload)
    role: str                  # frontend, or a worker type (worker, prefill, decode)
    container: dict = field(compare=False, hash=False)
    port: int = 0
    # a standalone pod runs both a frontend and an engine
    standalone: bool = False
    manifest: dict = field(default_factory=dict, compare=False, hash=False)


class Readiness(NamedTuple):
    """What a serving pod's probe reads: a 200 from ``url`` and, with ``lists_a_model``, a non-empty model list."""

    url: str
    lists_a_model: bool = False


class ModelServers:
    def __init__(self, kube, netns, state_dir: Path, faults: dict, profiles, *, model_path: str, hf_home: Path,
                 in_cluster: planner_pod.InCluster | None = None, speed_factor: float = 1.0):
        self.kube = kube
        self.netns = netns
        self.state_dir = state_dir
        self.faults = faults
        self.profiles = profiles            # workload -> profile path, or None while it is being made
        self.model_path = model_path        # the rehearsal tokenizer snapshot every served name resolves to
        self.hf_home = hf_home
        self.in_cluster = in_cluster        # how a pod reaches the API server; without it no planner runs
        self.speed_factor = speed_factor    # the cluster's engine speed (`kubesim start --speed-factor`)
        self.metadata = WorkerMetadata(kube)
        self._accounts: dict[str, Path] = {}              # pod uid -> its ServiceAccount directory
        self.graphs: dict[str, rt.ServedGraph] = {}       # workload uid -> its processes
        self.servers: dict[str, PodServer] = {}           # pod uid -> what it runs
        self._workloads: dict[str, dict] = {}

    # ---------------------------------------------------------------- what serves
    def serves(self, pod: dict) -> bool:
        """Whether this stand-in runs the pod's process (the kubelet holds its readiness until it serves)."""
        labels = pod["metadata"].get("labels") or {}
        if op.DGD_LABEL in labels:
            return labels.get(op.TYPE_LABEL) in self._run_types()
        return is_standalone_vllm(pod.get("spec") or {})

    def _run_types(self) -> tuple[str, ...]:
        return (*SERVED_TYPES, PLANNER_TYPE) if self.in_cluster else SERVED_TYPES

    def wanted(self) -> dict[str, PodServer]:
        pods = [p for p in self.kube.list("v1", "Pod")
                if (p.get("status") or {}).get("podIP") and not p["metadata"].get("deletionTimestamp")
                and (p.get("status") or {}).get("phase") == "Running"]
        out: dict[str, PodServer] = {}
        self._workloads = {}
        dgds = {d["metadata"]["uid"]: d for d in self.kube.list("nvidia.com/v1beta1", "DynamoGraphDeployment")
                if not d["metadata"].get("deletionTimestamp")}
        by_component: dict[tuple[str, str], list[dict]] = {}
        # a pod belongs to the graph its labels name (the operator's pods are owned through their Deployment)
        graph_of = {(d["metadata"]["namespace"], d["metadata"]["name"]): uid for uid, d in dgds.items()}
        for p in pods:
            m = p["metadata"]
            owner = graph_of.get((m["namespace"], (m.get("labels") or {}).get(op.DGD_LABEL)))
            if owner:
                by_component.setdefault((owner, (m.get("labels") or {}).get(op.COMP_LABEL, "")), []).append(p)
            elif is_standalone_vllm(p.get("spec") or {}):
                container = p["spec"]["containers"][0]
                self._workloads[m["uid"]] = self._standalone_workload(p)
                out[m["uid"]] = PodServer(m["uid"], f'{m["namespace"]}/{m["name"]}', p["status"]["podIP"], m["uid"],
                                          "worker", container, _container_port(container, VLLM_PORT), standalone=True)
        for uid, dgd in dgds.items():
            self._workloads[uid] = dgd
            for comp in op.components(dgd):
                if comp.type not in self._run_types():
                    continue        # kwok's stages make the pod Ready; nothing of it runs here
                mine = sorted(by_component.get((uid, comp.name), []), key=lambda p: p["metadata"]["name"])
                if comp.type != "frontend" and comp.nodes > 1:
                    mine = mine[::comp.nodes]      # the engine runs on each replica's first pod
                for p in mine:
                    m = p["metadata"]
                    out[m["uid"]] = PodServer(m["uid"], f'{m["namespace"]}/{m["name"]}', p["status"]["podIP"], uid,
                                              comp.type, p["spec"]["containers"][0], self._port(comp.type),
                                              manifest=p)
        return out

    @staticmethod
    def _port(component_type: str) -> int:
        """Where a pod answers its health: the frontend's HTTP port, a worker's system port, the planner's metrics."""
        return {"frontend": op.FRONTEND_PORT, PLANNER_TYPE: op.PLANNER_METRICS_PORT}.get(component_type,
                                                                                         WORKER_SYSTEM_PORT)

    def _standalone_workload(self, pod: dict) -> dict:
        """The Deployment a standalone pod belongs to (its annotations hold the published figures)."""
        return deployment_of(self.kube, pod) or pod

    # ---------------------------------------------------------------- processes
    def _fault_settings(self) -> tuple[float, bool]:
        """(engine speed, engines down): the cluster's speed, times the frontend-speed fault's factor."""
        speed = self.speed_factor * float((self.faults.get("frontend-speed") or {}).get("factor", 1.0))
        down = float((self.faults.get("frontend-errors") or {}).get("rate", 0.0)) > 0
        return speed, down

    def _crashed(self, server: PodServer) -> bool:
        """Whether the crashloop fault stands for the pod: its container is not running, so neither is its process
        (a serving worker the fault reaches dies at once, with the requests it was serving)."""
        return bool(server.manifest) and fault_for(server.manifest, self.faults) == "crash-loop"

    def _processes(self, server: PodServer, profile: Path, served: str) -> list[rt.RuntimeProcess]:
        if self._crashed(server):
            return []
        name = server.pod.replace("/", "_")
        if server.role == PLANNER_TYPE:
            return [planner_pod.planner_process(f"{name}-planner", server.manifest, server.container, kube=self.kube,
                                                in_cluster=self.in_cluster, root=self.state_dir / "pods" / name)]
        if self._discovers_through_kubernetes(server):
            return self._in_pod(server, name, self._serving_processes(server, profile, served, name,
                                                                      rt.KUBERNETES_PLANES))
        pod_env = {e["name"]: str(e["value"]) for e in server.container.get("env") or []
                   if e.get("name") in POD_RUNTIME_ENV and "value" in e}
        return [dataclasses.replace(p, env={**p.env, **pod_env}) for p in self._serving_processes(server, profile,
                                                                                                   served, name)]

    def _discovers_through_kubernetes(self, server: PodServer) -> bool:
        """A pod the real operator made: its environment names Kubernetes discovery, which its processes use
        through the API server, as the pod's ServiceAccount (the operator's discovery account and Role)."""
        return self.in_cluster is not None and not server.standalone and any(
            e.get("name") == "DYN_DISCOVERY_BACKEND" and e.get("value") == "kubernetes"
            for e in server.container.get("env") or [])

    def _in_pod(self, server: PodServer, name: str, procs: list[rt.RuntimeProcess]) -> list[rt.RuntimeProcess]:
        """``procs`` with the container's own environment (the operator's DYN_* and the downward API's POD_*) and
        its ServiceAccount mounted where in-cluster clients read it."""
        account = self._accounts.get(server.uid)
        if account is None:
            account = self._accounts[server.uid] = planner_pod.service_account_dir(
                self.kube, server.manifest, self.in_cluster, self.state_dir / "pods" / name)
        resolved = pod_env_of.container_env(server.manifest, server.container,
                                            lambda ns, n: self.kube.get("v1", "Secret", n, ns),
                                            lambda ns, n: self.kube.get("v1", "ConfigMap", n, ns), pod_ip=server.ip)
        own = {k: v for k, v in resolved.items() if k.startswith(("DYN_", "POD_"))}
        # every pod shares the cluster's network namespace here: the system server binds the pod's own address
        own["DYN_SYSTEM_HOST"] = server.ip
        api = {"KUBERNETES_SERVICE_HOST": self.in_cluster.host, "KUBERNETES_SERVICE_PORT": str(self.in_cluster.port)}
        return [dataclasses.replace(p, argv=["sh", "-c", planner_pod.MOUNT_AND_RUN, str(account), *p.argv],
                                    env={**own, **p.env, **api}) for p in procs]

    def _serving_processes(self, server: PodServer, profile: Path, served: str, name: str,
                           planes: tuple[str, ...] = rt.PLANES) -> list[rt.RuntimeProcess]:
        speed, down = self._fault_settings()
        procs = []
        if server.role == "frontend" or server.standalone:
            fe = rt.frontend_process(f"{name}-frontend", "frontend", None if server.standalone else server.container,
                                     http_host=server.ip, http_port=server.port,
                                     router_mode="round-robin" if server.standalone else None, planes=planes)
            procs.append(fe)
        if server.role != "frontend" and not down:
            env = {"DYN_TCP_RPC_HOST": server.ip, "DYN_SYSTEM_HOST": server.ip, **WORKER_SYSTEM_ENV}
            try:
                blocks = self.profiles.kv_blocks(self._workloads[server.workload], server.container)
            except ProfileError:
                blocks = None
            procs.append(rt.mocker_process(f"{name}-engine", "worker", server.role, server.container,
                                           model_path=self.model_path, served=served, profile_path=profile, env=env,
                                           speedup=speed, kv_blocks=blocks, planes=planes))
        return procs

    def _graph(self, workload: str) -> rt.ServedGraph:
        graph = self.graphs.get(workload)
        if graph is None:
            graph = self.graphs[workload] = rt.ServedGraph(
                [], discovery_dir=self.state_dir / "discovery" / workload, log_dir=self.state_dir / "logs" / workload,
                hf_home=self.hf_home, exec_prefix=self.netns.exec_prefix())
        return graph

    def reconcile(self) -> None:
        wanted = self.wanted()
        for uid in [u for u in self.servers if u not in wanted]:
            self._stop(self.servers.pop(uid))
        for uid, server in wanted.items():
            try:
                self._serve(uid, server)
            except Exception:  # one pod's trouble (a profile, a spawn) must not stop the others' processes
                log.exception("cannot serve %s", server.pod)
        self._restart_exited()
        self._report_serving(wanted)

    def _serve(self, uid: str, server: PodServer) -> None:
        if server.role == PLANNER_TYPE and uid in self.servers:
            return                         # started once with its token and configuration, as a container is
        workload = self._workloads[server.workload]
        served = served_model_name(workload, lambda ns, name: self.kube.get("v1", "ConfigMap", name, ns))
        profile = None
        if server.role in op.WORKER_TYPES:
            try:
                profile = self.profiles.get(workload, served)
            except ProfileError:
                pass                       # no published figures: the mocker's own timings
            else:
                if profile is None:
                    return                 # calibrating: the pod stays starting
        graph = self._graph(server.workload)
        procs = self._processes(server, profile, served)
        self._stop_others(graph, server, {p.name for p in procs}, kill=self._crashed(server))
        for proc in procs:
            running = next((p for p in graph.processes if p.name == proc.name), None)
            if running is not None and running.argv != proc.argv:
                graph.stop([proc.name])     # a fault changed how it runs
            graph.processes = [p for p in graph.processes if p.name != proc.name] + [proc]
            graph.start([proc.name])
        self.servers[uid] = server

    def _restart_exited(self) -> None:
        """A process that died is started again, as the kubelet restarts a container (its log keeps the cause)."""
        for graph in self.graphs.values():
            for name, code in graph.exited().items():
                log.warning("%s exited with %s; restarting: %s", name, code, graph.log_tail(name, 500))
                graph.running.pop(name, None)
                graph.start([name])

    @staticmethod
    def _stop_others(graph: rt.ServedGraph, server: PodServer, keep: set[str], kill: bool = False) -> None:
        """Stop the pod's processes that should not run now (its engine while frontend-errors stands; all of them,
        killed, while the crashloop fault does)."""
        prefix = server.pod.replace("/", "_") + "-"
        names = [p.name for p in graph.processes if p.name.startswith(prefix) and p.name not in keep]
        graph.stop(names, kill=kill)
        graph.processes = [p for p in graph.processes if p.name not in names]

    def _stop(self, server: PodServer) -> None:
        graph = self.graphs.get(server.workload)
        if graph is None:
            return
        self._stop_others(graph, server, set())
        self._accounts.pop(server.uid, None)
        if not graph.processes:
            self.graphs.pop(server.workload, None)
            shutil.rmtree(graph.discovery_dir, ignore_errors=True)

    # ---------------------------------------------------------------- readiness
    def _report_serving(self, wanted: dict[str, PodServer]) -> None:
        """Mark each pod ``up`` once its process answers its health endpoint (probed from inside the namespace)."""
        pods = {p["metadata"]["uid"]: p for p in self.kube.list("v1", "Pod") if p["metadata"]["uid"] in wanted}
        for uid, s in wanted.items():
            graph = self.graphs.get(s.workload)
            if s.role in op.WORKER_TYPES and not s.standalone and graph is not None and uid in pods \
                    and not self._discovers_through_kubernetes(s):      # those publish their own
                self.metadata.publish(pods[uid], graph.discovery_dir, s.ip)
        pending = {uid: s for uid, s in wanted.items()
                   if ((pods.get(uid) or {}).get("metadata", {}).get("annotations") or {}).get(SERVING) != UP}
        if not pending:
            return
        answered = self._probe({uid: self._readiness(s) for uid, s in pending.items()})
        for uid in answered:
            p = pods.get(uid)
            if p is not None:
                self.kube.patch("v1", "Pod", p["metadata"]["name"], {"metadata": {"annotations": {SERVING: UP}}},
                                namespace=p["metadata"]["namespace"])

    @staticmethod
    def _readiness(server: PodServer) -> Readiness:
        probe = None if server.standalone else probe_url(server.container, server.ip)
        if probe is not None:
            return Readiness(probe)          # the container's own readiness probe, as the kubelet runs it
        if server.standalone:
            # `vllm serve` answers its health only once its engine has loaded: here the pod's frontend must list the
            # model its engine registered (its /health answers before that)
            return Readiness(f"http://{server.ip}:{server.port}{MODELS_PATH}", lists_a_model=True)
        if server.role == "frontend":
            return Readiness(f"http://{server.ip}:{server.port}/health")
        if server.role == PLANNER_TYPE:
            return Readiness(f"http://{server.ip}:{server.port}/metrics")
        return Readiness(f"http://{server.ip}:{WORKER_SYSTEM_PORT}/live")

    def _probe(self, checks: dict[str, Readiness]) -> list[str]:
        def probe_all() -> list[str]:
            answered = []
            for uid, check in checks.items():
                if check.url == UNRESOLVED_PORT:
                    continue                 # a probe on a port the container does not declare never passes
                try:
                    with urllib.request.urlopen(check.url, timeout=1.0) as r:
                        if r.status == 200 and (not check.lists_a_model or json.load(r).get("data")):
                            answered.append(uid)
                except (urllib.error.URLError, OSError, ValueError):  # ValueError: not JSON
                    continue
            return answered

        return call_inside(self.netns.path, probe_all)

    def stop(self) -> None:
        for graph in self.graphs.values():
            graph.stop()
        self.graphs.clear()
        self.servers.clear()

"""One real control plane: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok,
each a process of ours inside the cluster's network namespace, plus the objects a platform team
would have installed before our collection arrives (GPU nodes, storage classes, the Dynamo CRDs and
operator, a namespace-scoped deployer)."""

from __future__ import annotations

import base64
import json
import logging
import os
import shutil
import signal
import ssl
import subprocess
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .. import platform_crds
from ..dynamic_client import dynamic_client
from ..faults import FAULTS as FAULT_TABLE
from ..faults import REFUSED_ON_REAL
from ..inventory import REPO_ROOT, load_catalog, make_nodes, parse_storage_classes
from ..standins import prometheus
from ..standins.operator_rules import compute_domain_slice
from . import build, dynamo_platform, netns, pki

log = logging.getLogger("kubesim.control_plane")

HERE = Path(__file__).resolve().parent
KWOK_STAGES = HERE / "kwok-stages.yaml"
API_PORT = 6443
KUBELET_PORT = 10250
# The fake-node annotation kwok manages; nodes without it are left alone.
KWOK_NODE_ANNOTATION = ("kwok.x-k8s.io/node", "fake")
TEAM_NAMESPACE = "team-a"
TEAM_SERVICE_ACCOUNT = "deployer"
TOKEN_SECONDS = 30 * 24 * 3600


@dataclass
class RealConfig:
    nodes: str
    rdma: bool = True
    storage_classes: str = "shared-rwx:RWX,local-rwo:RWO"
    crd_dir: str | None = None
    monitoring_crds: bool = True
    catalog: str = str(REPO_ROOT / "catalog" / "skus.yml")
    ready_seconds: float = 2.0
    download_seconds: float = 3.0
    speed_factor: float = 1.0
    image_pull_seconds: float = 0.0
    trace_seconds: float = 0.0
    # a real Prometheus in the cluster (standins/prometheus.py), scraping every this many seconds; 0: none
    prometheus_interval: float = 0.0
    # the Dynamo operator's Grove gate (the chart's global.grove.enabled): DGDs become Grove PodCliqueSets
    grove: bool = False
    extra: dict = field(default_factory=dict)


class Processes:
    """The children of one cluster, by pid, so a stop (or the next start) can always find them."""

    def __init__(self, record: Path):
        self.record = record
        self.procs: dict[str, subprocess.Popen] = {}
        self.argv: dict[str, tuple[list[str], Path]] = {}

    def spawn(self, name: str, argv: list[str], log_file: Path) -> subprocess.Popen:
        self.argv[name] = (argv, log_file)
        log_file.parent.mkdir(parents=True, exist_ok=True)
        with open(log_file, "ab") as fh:
            proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
        self.procs[name] = proc
        self._save()
        return proc

    def _save(self) -> None:
        self.record.write_text(json.dumps({n: p.pid for n, p in self.procs.items()}))

    def halt(self, name: str) -> None:
        """Stop one process (its argv is kept, so ``respawn`` brings it back as it was)."""
        p = self.procs.get(name)
        if p and p.poll() is None:
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def respawn(self, name: str) -> None:
        p = self.procs.get(name)
        if p is None or p.poll() is not None:
            argv, log_file = self.argv[name]
            self.spawn(name, argv, log_file)

    def running(self, name: str) -> bool:
        p = self.procs.get(name)
        return p is not None and p.poll() is None

    def dead(self) -> dict[str, int]:
        return {n: p.returncode for n, p in self.procs.items() if p.poll() is not None}

    def stop(self, timeout: float = 5) -> None:
        # Reverse start order: clients before the API server, the API server before etcd.
        for name in reversed(list(self.procs)):
            p = self.procs[name]
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.time() + timeout
        for p in self.procs.values():
            try:
                p.wait(max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs.clear()
        self.record.unlink(missing_ok=True)


def kill_recorded(record: Path) -> None:
    """Kill what an earlier, crashed supervisor left behind (by the pids it recorded)."""
    try:
        pids = json.loads(record.read_text())
    except (OSError, ValueError):
        return
    for pid in pids.values():
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    record.unlink(missing_ok=True)


class RealCluster:
    def __init__(self, index: int, state_dir: Path, config: RealConfig, ns: netns.Netns):
        self.index = index
        self.name = f"kubesim-{index}"
        self.config = config
        self.ns = ns
        self.dir = state_dir / str(index)
        self.procs = Processes(self.dir / "pids.json")
        self.bins = build.binaries()
        self.pki: pki.Pki | None = None
        self.team_token = ""
        self.started_s = 0.0
        self.standins = StandIns(self.name, self.dir)

    # ------------------------------------------------------------------ addresses
    @property
    def server(self) -> str:
        return f"https://{self.ns.ns_ip}:{API_PORT}"

    def _kubeconfig(self, server: str) -> dict:
        assert self.pki
        return {"apiVersion": "v1", "kind": "Config",
                "clusters": [{"name": self.name, "cluster": {"server": server, "certificate-authority": self.pki.ca}}],
                "users": [{"name": "admin", "user": {"client-certificate": self.pki.path("admin.crt"),
                                                      "client-key": self.pki.path("admin.key")}}],
                "contexts": [{"name": self.name, "context": {"cluster": self.name, "user": "admin"}}],
                "current-context": self.name}

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        t0 = time.monotonic()
        kill_recorded(self.dir / "pids.json")
        shutil.rmtree(self.dir, ignore_errors=True)
        (self.dir / "logs").mkdir(parents=True)
        if not netns.exists(self.ns.name):      # allocate() made it; a restart of this cluster makes it again
            netns.create(self.ns)
        self.pki = pki.create(self.dir / "pki", apiserver_ips=(self.ns.ns_ip, "127.0.0.1", "10.96.0.1"),
                              node_ips=(self.ns.ns_ip, "127.0.0.1"))
        inner = self.dir / "inner.kubeconfig"
        inner.write_text(yaml.safe_dump(self._kubeconfig(f"https://127.0.0.1:{API_PORT}")))
        self._spawn("etcd", [
            self.bins["etcd"], "--name", self.name, "--data-dir", str(self.dir / "etcd"),
            "--listen-client-urls", "http://127.0.0.1:2379", "--advertise-client-urls", "http://127.0.0.1:2379",
            "--listen-peer-urls", "http://127.0.0.1:2380", "--initial-advertise-peer-urls", "http://127.0.0.1:2380",
            "--initial-cluster", f"{self.name}=http://127.0.0.1:2380",
            # A rehearsal cluster lives minutes; durability is not worth the fsync latency.
            "--unsafe-no-fsync", "--log-level", "warn", "--quota-backend-bytes", str(2 * 1024**3)])
        p = self.pki
        self._spawn("kube-apiserver", [
            self.bins["kube-apiserver"], "--etcd-servers", "http://127.0.0.1:2379",
            "--bind-address", "0.0.0.0", "--secure-port", str(API_PORT), "--advertise-address", self.ns.ns_ip,
            "--service-cluster-ip-range", netns.SERVICE_CIDR,
            "--client-ca-file", p.ca, "--tls-cert-file", p.path("apiserver.crt"),
            "--tls-private-key-file", p.path("apiserver.key"),
            "--kubelet-client-certificate", p.path("apiserver-kubelet-client.crt"),
            "--kubelet-client-key", p.path("apiserver-kubelet-client.key"),
            "--kubelet-certificate-authority", p.ca, "--kubelet-preferred-address-types", "InternalIP",
            "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
            "--service-account-key-file", p.path("sa.pub"), "--service-account-signing-key-file", p.path("sa.key"),
            "--service-account-max-token-expiration", f"{TOKEN_SECONDS}s",
            "--authorization-mode", "Node,RBAC", "--allow-privileged=true", "--profiling=false",
            "--event-ttl", "1h",
            # Admission webhooks (the Dynamo operator's) are called at their Service's endpoint: there is no
            # kube-proxy here to route a ClusterIP.
            "--enable-aggregator-routing=true"])
        self.wait_ready()
        common = ["--kubeconfig", str(inner), "--authentication-kubeconfig", str(inner),
                  "--authorization-kubeconfig", str(inner), "--leader-elect=false", "--profiling=false"]
        self._spawn("kube-controller-manager", [
            self.bins["kube-controller-manager"], *common, "--bind-address", "127.0.0.1",
            "--service-account-private-key-file", p.path("sa.key"), "--root-ca-file", p.ca,
            "--use-service-account-credentials=true", "--cluster-name", self.name,
            "--controllers", "*,-nodeipam,-cloud-node-lifecycle,-service-lb-controller,-node-route-controller"])
        self._spawn("kube-scheduler", [self.bins["kube-scheduler"], *common, "--bind-address", "127.0.0.1"])
        stages = self.dir / "kwok-stages.yaml"
        text = KWOK_STAGES.read_text()
        # Go templates in the stages use $names too: fill only ours, literally.
        for key, value in {"READY_MS": int(self.config.ready_seconds * 1000), "JOB_MS": 1000,
                           "DOWNLOAD_MS": int(self.config.download_seconds * 1000)}.items():
            text = text.replace("${" + key + "}", str(value))
        stages.write_text(text)
        self._spawn("kwok", [
            self.bins["kwok"], "--kubeconfig", str(inner), "--config", str(stages), "--enable-crds", "Logs",
            "--manage-nodes-with-annotation-selector", "=".join(KWOK_NODE_ANNOTATION),
            "--cidr", netns.KWOK_POD_CIDR, "--node-ip", self.ns.ns_ip, "--node-port", str(KUBELET_PORT),
            "--server-address", f"0.0.0.0:{KUBELET_PORT}",
            "--tls-cert-file", p.path("kubelet.crt"), "--tls-private-key-file", p.path("kubelet.key"),
            "--node-lease-duration-seconds", "40"])
        self.bootstrap()
        self.standins.start(self.client(), self.ns, self.config, self._prometheus_sd(), self._in_cluster())
        if self.config.prometheus_interval:
            self._start_prometheus()
        self._wait_platform_ready()
        self.started_s = time.monotonic() - t0
        log.info("%s: real control plane ready at %s in %.1f s", self.name, self.server, self.started_s)

    # ------------------------------------------------------------------ Prometheus
    @property
    def prometheus_url(self) -> str:
        return f"http://{self.ns.ns_ip}:{prometheus.PORT}" if self.config.prometheus_interval else ""

    def _in_cluster(self):
        """How a pod reaches the API server from inside the namespace (the ``kubernetes`` Service's address)."""
        from ..standins.planner_pod import InCluster

        assert self.pki
        return InCluster("127.0.0.1", API_PORT, self.pki.ca)

    def _prometheus_sd(self) -> dict | None:
        """How the in-cluster Prometheus reaches the API server: its ServiceAccount's token and the cluster CA, as a
        Prometheus pod reads them from its mounted token."""
        if not self.config.prometheus_interval:
            return None
        assert self.pki
        dyn = dynamic_client(self.client(), self.dir)
        for obj in yaml.safe_load_all((HERE / "platform-monitoring.yaml").read_text()):
            if obj:
                _apply(dyn, obj)
        token = self.dir / "prometheus" / "token"
        token.parent.mkdir(parents=True, exist_ok=True)
        token.write_text(self._token(prometheus.SERVICE_ACCOUNT, prometheus.NAMESPACE))
        os.chmod(token, 0o600)
        return {"api_server": f"https://127.0.0.1:{API_PORT}", "tls_config": {"ca_file": self.pki.ca},
                "authorization": {"credentials_file": str(token)}}

    def _start_prometheus(self) -> None:
        binary = build.prometheus_binaries()["prometheus"]
        if not binary.exists():
            raise RuntimeError(f"{self.name}: no Prometheus in {binary.parent}: run `make control-plane`")
        d = self.dir / "prometheus"
        self._spawn("prometheus", [
            str(binary), "--config.file", str(d / "prometheus.yml"), "--storage.tsdb.path", str(d / "data"),
            "--web.listen-address", f"{self.ns.ns_ip}:{prometheus.PORT}", "--web.enable-lifecycle",
            "--storage.tsdb.retention.time", "1d", "--log.level", "warn"])
        deadline = time.time() + 60
        while True:
            try:
                with urllib.request.urlopen(self.prometheus_url + "/-/ready", timeout=2) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if not self.procs.running("prometheus") or time.time() > deadline:
                tail = (self.dir / "logs" / "prometheus.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"{self.name}: Prometheus did not become ready:\n{tail}")
            time.sleep(0.25)

    def _spawn(self, name: str, argv: list[str]) -> None:
        self.procs.spawn(name, [*self.ns.exec_prefix(), *argv], self.dir / "logs" / f"{name}.log")

    def stop(self) -> None:
        self.standins.stop()
        self.procs.stop()
        netns.delete(self.ns)

    # ------------------------------------------------------------------ readiness
    def _ssl(self) -> ssl.SSLContext:
        assert self.pki
        ctx = ssl.create_default_context(cafile=self.pki.ca)
        ctx.load_cert_chain(self.pki.path("admin.crt"), self.pki.path("admin.key"))
        return ctx

    def readyz(self) -> bool:
        try:
            with urllib.request.urlopen(self.server + "/readyz", context=self._ssl(), timeout=3) as r:
                return r.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def wait_ready(self, timeout: float = 180) -> None:
        deadline = time.time() + timeout
        while not self.readyz():
            dead = self.procs.dead()
            if dead:
                name = next(iter(dead))
                tail = (self.dir / "logs" / f"{name}.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"{self.name}: {name} exited with {dead[name]}:\n{tail}")
            if time.time() > deadline:
                raise TimeoutError(f"{self.name}: kube-apiserver not ready at {self.server} after {timeout:.0f} s")
            time.sleep(0.25)

    # ------------------------------------------------------------------ the platform team's objects
    def client(self):
        from kubernetes import config

        return config.new_client_from_config_dict(self._kubeconfig(self.server))

    def bootstrap(self) -> None:
        dyn = dynamic_client(self.client(), self.dir)
        catalog = load_catalog(self.config.catalog)
        for path in [*self._crd_files(), str(build.kwok_crd("logs"))]:
            # libyaml's parser: the operator's CRDs are megabytes of YAML (seconds each with the pure-Python one)
            crd = dynamo_platform.as_installed(yaml.load(Path(path).read_text(), Loader=yaml.CSafeLoader))
            _apply(dyn, crd)
        for node in make_nodes(self.config.nodes, catalog, self.config.rdma):
            node["metadata"].setdefault("annotations", {})[KWOK_NODE_ANNOTATION[0]] = KWOK_NODE_ANNOTATION[1]
            # kwok's node-initialize stage writes the conditions; the API server dials this address.
            node["status"].pop("conditions", None)
            node["status"]["addresses"] = [{"type": "InternalIP", "address": self.ns.ns_ip},
                                           {"type": "Hostname", "address": node["metadata"]["name"]}]
            node["status"]["nodeInfo"]["containerRuntimeVersion"] = "kwok"
            _create(dyn, node)
            if catalog[node["metadata"]["labels"]["node.kubernetes.io/instance-type"]].get("compute_domain_modes"):
                _create(dyn, compute_domain_slice(node["metadata"]["name"]))
        for sc in parse_storage_classes(self.config.storage_classes):
            _create(dyn, sc)
        for obj in yaml.safe_load_all((HERE / "platform.yaml").read_text()):
            if obj:
                _apply(dyn, obj)
        self._wait_crds_established(dyn)
        dynamo_platform.install(dyn, dynamo_platform.render(self._platform_options(), self.dir / "dynamo-platform"))
        self.team_token = self._token(TEAM_SERVICE_ACCOUNT, TEAM_NAMESPACE)

    def _platform_options(self) -> dynamo_platform.PlatformOptions:
        return dynamo_platform.PlatformOptions(grove=self.config.grove,
                                               monitoring=bool(self.config.monitoring_crds and
                                                               platform_crds.monitoring_crd_files()))

    def _crd_files(self) -> list[str]:
        """The platform's CRDs (the Dynamo ones are the operator's own), and Grove's where the operator uses it."""
        # the real operator's own DGD CRD, as it is: this operator does not report the planner's GPU shape fields
        files = platform_crds.crd_files(self.config.crd_dir, self.config.monitoring_crds, planner_gpu_shape=False)
        return [str(p) for p in (*files, *dynamo_platform.grove_crd_files(self._platform_options()))]

    def _wait_crds_established(self, dyn, timeout: float = 60) -> None:
        api = dyn.resources.get(api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition")
        deadline = time.time() + timeout
        while time.time() < deadline:
            items = api.get().to_dict()["items"]
            if all(any(c["type"] == "Established" and c["status"] == "True"
                       for c in (i.get("status") or {}).get("conditions") or []) for i in items):
                return
            time.sleep(0.2)
        raise TimeoutError(f"{self.name}: CRDs not established after {timeout:.0f} s")

    def _wait_platform_ready(self, timeout: float = 420) -> None:
        """Return once the Dynamo operator is available and its webhooks carry its CA, as on a cluster in use."""
        from kubernetes import client

        apps = client.AppsV1Api(self.client())
        dyn = dynamic_client(self.client(), self.dir)
        deadline = time.time() + timeout
        while time.time() < deadline:
            st = apps.read_namespaced_deployment(dynamo_platform.OPERATOR_DEPLOYMENT, dynamo_platform.NAMESPACE).status
            if (st.available_replicas or 0) >= 1 and dynamo_platform.webhooks_ready(dyn):
                return
            time.sleep(0.5)
        tail = ""
        pods = self.dir / "logs" / "pods" / dynamo_platform.NAMESPACE
        for log_file in sorted(pods.glob("*/manager.log")):
            tail = log_file.read_text(errors="replace")[-3000:]
        raise TimeoutError(f"{self.name}: the Dynamo operator did not become available with its webhooks in "
                           f"{timeout:.0f} s:\n{tail}")

    def _token(self, service_account: str, namespace: str) -> str:
        from kubernetes import client

        core = client.CoreV1Api(self.client())
        req = client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(
            audiences=[], expiration_seconds=TOKEN_SECONDS))
        resp = core.create_namespaced_service_account_token(service_account, namespace, req)
        return resp.status.token

    # ------------------------------------------------------------------ faults
    # kubesim's fault kinds that mean the same on a real API server; the others have a real
    # counterpart instead (see REFUSED_FAULTS).
    FAULTS = tuple(k for k in FAULT_TABLE if k not in REFUSED_ON_REAL)
    REFUSED_FAULTS = REFUSED_ON_REAL

    def set_fault(self, kind: str, args: dict) -> dict:
        faults = self.standins.faults
        if kind in ("clear", "clear-api-down") and not self.procs.running("kube-apiserver"):
            self.procs.respawn("kube-apiserver")
            self.wait_ready(120)
        if kind == "clear":
            faults.clear()
        elif kind.startswith("clear-"):
            faults.pop(kind[len("clear-"):], None)
        elif kind in self.REFUSED_FAULTS:
            raise ValueError(f"fault {kind!r} is not simulated on the real backend: {self.REFUSED_FAULTS[kind]}")
        elif kind not in self.FAULTS:
            raise ValueError(f"unknown fault {kind!r}; known: {', '.join(self.FAULTS)}, clear")
        else:
            faults[kind] = dict(args)
            if kind == "api-down":
                self.procs.halt("kube-apiserver")
        self.standins.wake.set()
        return json.loads(json.dumps(faults))

    def info(self) -> dict:
        return {"index": self.index, "context": self.name, "team_context": f"{self.name}-team",
                "team_namespace": TEAM_NAMESPACE, "base_url": self.server, "port": API_PORT,
                "netns": self.ns.name, "host_ip": self.ns.host_ip, "ns_ip": self.ns.ns_ip,
                "api_up": self.readyz(), "start_seconds": round(self.started_s, 1),
                "prometheus_url": self.prometheus_url,
                "faults": json.loads(json.dumps(self.standins.faults))}


class StandIns:
    """The stand-ins of one cluster, reconciling in one thread as clients of its API server.

    A pass runs when a watched kind changes (at most one per MIN_INTERVAL_S, so a burst of events makes one pass),
    when a fault is set, and every IDLE_S for what only time moves on (a node finishing an image pull): an idle
    cluster is not listed twice a second."""

    MIN_INTERVAL_S = 0.5
    IDLE_S = 2.0
    # what the reconcilers read: a change of any of these may need a pass
    WATCHED = (("v1", "Pod"), ("nvidia.com/v1beta1", "DynamoGraphDeployment"), ("apps/v1", "Deployment"),
               ("v1", "Service"), ("v1", "PersistentVolumeClaim"), ("v1", "PersistentVolume"),
               ("resource.nvidia.com/v1beta1", "ComputeDomain"), ("discovery.k8s.io/v1", "EndpointSlice"),
               ("nvidia.com/v1beta1", "DynamoGraphDeploymentScalingAdapter"))

    def __init__(self, name: str, state_dir: Path):
        self.name = name
        self.state_dir = state_dir
        self.faults: dict = {}
        self._stop = threading.Event()
        self.wake = threading.Event()
        self._thread: threading.Thread | None = None
        self.reconcilers: list = []
        self.runner = None
        self.model_servers = None
        self.kube = None

    def start(self, api_client, ns: netns.Netns, config: RealConfig, prometheus_sd: dict | None = None,
              in_cluster=None) -> None:
        from ..standins.dra_driver import ComputeDomainDriver
        from ..standins.kube import Kube
        from ..standins.kubelet import Kubelet
        from ..standins.model_servers import ModelServers
        from ..standins.provisioner import Provisioner
        from ..standins.runner import PodRunner
        from ..standins.served_profiles import REHEARSAL_HF_HOME, rehearsal_profiles

        kube = self.kube = Kube(api_client, "kubesim-standins", cache_dir=self.state_dir)
        programs = {dynamo_platform.OPERATOR_IMAGE: {dynamo_platform.OPERATOR_COMMAND: str(build.operator_binary())}}
        self.runner = PodRunner(kube, ns, self.state_dir / "pods", download_seconds=config.download_seconds,
                                trace_seconds=config.trace_seconds, faults=self.faults, programs=programs,
                                in_cluster=(in_cluster.host, in_cluster.port) if in_cluster else ("10.96.0.1", 443))
        profiles = rehearsal_profiles()
        self.model_servers = ModelServers(
            kube, ns, self.state_dir / "runtime", self.faults, profiles, model_path=profiles.model_path,
            hf_home=REHEARSAL_HF_HOME, in_cluster=in_cluster, speed_factor=config.speed_factor)
        self.reconcilers = [Provisioner(kube, self.state_dir / "volumes"),
                            ComputeDomainDriver(kube),
                            Kubelet(kube, self.state_dir / "logs" / "pods", self.faults, self.runner,
                                    image_pull_seconds=config.image_pull_seconds, model_servers=self.model_servers),
                            self.model_servers]
        watched = list(self.WATCHED)
        if prometheus_sd is not None:
            self.reconcilers.append(prometheus.PrometheusOperator(
                kube, self.state_dir / "prometheus", prometheus_sd, f"http://{ns.ns_ip}:{prometheus.PORT}",
                config.prometheus_interval))
            watched += [(prometheus.MONITORING_API, "PodMonitor"), (prometheus.MONITORING_API, "PrometheusRule")]
        for api_version, kind in watched:
            threading.Thread(target=kube.watch, args=(api_version, kind, self.wake.set, self._stop),
                             name=f"watch-{kind}-{self.name}", daemon=True).start()
        self._thread = threading.Thread(target=self._loop, name=f"standins-{self.name}", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.wake.wait(self.IDLE_S)
            self.wake.clear()
            if self._stop.is_set():
                break
            self.kube.begin_pass()
            for r in self.reconcilers:
                try:
                    r.reconcile()
                except Exception as exc:  # the API server restarting, a transient conflict: retry next pass
                    log.debug("%s: %s: %s", self.name, type(r).__name__, exc)
                    self.wake.set()
            self._stop.wait(self.MIN_INTERVAL_S)

    def stop(self) -> None:
        self._stop.set()
        self.wake.set()
        if self._thread:
            self._thread.join(timeout=5)
        if self.runner:
            self.runner.stop()
        if self.model_servers:
            self.model_servers.stop()


def _create(dyn, obj: dict) -> None:
    api = dyn.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
    api.create(body=obj, namespace=obj["metadata"].get("namespace"))


def _apply(dyn, obj: dict) -> None:
    api = dyn.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
    api.server_side_apply(body=obj, name=obj["metadata"]["name"], namespace=obj["metadata"].get("namespace"),
                          field_manager="kubesim-platform", force_conflicts=True)


def kubeconfig_text(clusters: list[RealCluster]) -> str:
    """Admin contexts ``kubesim-N`` (as kubesim writes them) and namespace-scoped ``kubesim-N-team``."""
    doc: dict = {"apiVersion": "v1", "kind": "Config", "preferences": {}, "clusters": [], "users": [],
                 "contexts": [], "current-context": clusters[0].name if clusters else ""}
    for c in clusters:
        assert c.pki
        doc["clusters"].append({"name": c.name, "cluster": {
            "server": c.server, "certificate-authority-data": base64.b64encode(c.pki.read("ca.crt")).decode()}})
        doc["users"].append({"name": f"{c.name}-admin", "user": {
            "client-certificate-data": base64.b64encode(c.pki.read("admin.crt")).decode(),
            "client-key-data": base64.b64encode(c.pki.read("admin.key")).decode()}})
        doc["users"].append({"name": f"{c.name}-team", "user": {"token": c.team_token}})
        doc["contexts"].append({"name": c.name, "context": {"cluster": c.name, "user": f"{c.name}-admin",
                                                            "namespace": "default"}})
        doc["contexts"].append({"name": f"{c.name}-team", "context": {
            "cluster": c.name, "user": f"{c.name}-team", "namespace": TEAM_NAMESPACE}})
    return yaml.safe_dump(doc, sort_keys=False)

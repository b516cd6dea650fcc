"""Which process each serving pod runs on the real backend, and how faults change them (no process starts here)."""

import uuid
from pathlib import Path

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan
from ansible_collections.inferops.dynamo.plugins.module_utils.render import objects as render
from ansible_collections.inferops.dynamo.plugins.module_utils.render import planner
from kubesim.standins import model_servers as ms
from kubesim.standins import operator_rules as op
from kubesim.standins import served_profiles as sp
from kubesim.standins.mocker_calibration import Engines

TRACE = sp.REHEARSAL_TRACE


class ListKube:
    """The reads ModelServers makes, over a fixed list of objects."""

    def __init__(self, objects):
        self.objects = objects

    def list(self, api_version, kind, namespace=None, label_selector=""):
        return [o for o in self.objects if o["kind"] == kind]

    def get(self, api_version, kind, name, namespace=None):
        return next((o for o in self.objects if o["kind"] == kind and o["metadata"]["name"] == name), None)


class NoProfiles:
    def get(self, workload, served):
        return None

    def kv_blocks(self, workload, container):
        return 100


def _dgd(**request):
    dgd = render.dynamo_graph_deployment(build_plan(request), "muse")
    dgd["metadata"]["uid"] = str(uuid.uuid4())
    return dgd


def _pods(dgd, ready=True):
    pods, n = [], 0
    for comp in op.components(dgd):
        for i in range(comp.pods_wanted):
            n += 1
            pods.append({"kind": "Pod", "metadata": {
                "name": f"{dgd['metadata']['name']}-{comp.name.lower()}-{i}", "namespace": "muse",
                "uid": str(uuid.uuid4()),
                "labels": {op.DGD_LABEL: dgd["metadata"]["name"], op.TYPE_LABEL: comp.type, op.COMP_LABEL: comp.name},
                "ownerReferences": [{"uid": dgd["metadata"]["uid"], "kind": "DynamoGraphDeployment"}]},
                "spec": comp.template["spec"],
                "status": {"phase": "Running" if ready else "Pending", "podIP": f"10.244.0.{n}" if ready else None}})
    return pods


def _servers(objects, faults=None):
    return ms.ModelServers(ListKube(objects), None, None, {} if faults is None else faults, NoProfiles(), model_path="/snap",
                           hf_home=None)


def test_a_graphs_frontend_pod_and_each_worker_pod_run_their_own_process_on_the_pods_ip():
    dgd = _dgd(sku="gb300", mode="kv-router")
    pods = _pods(dgd)
    servers = _servers([dgd, *pods])
    wanted = servers.wanted()
    roles = sorted(s.role for s in wanted.values())
    assert roles == ["frontend", "worker", "worker"]
    for pod in pods:
        server = wanted[pod["metadata"]["uid"]]
        assert server.ip == pod["status"]["podIP"] and server.workload == dgd["metadata"]["uid"]
    frontend = next(s for s in wanted.values() if s.role == "frontend")
    (fe,) = servers._processes(frontend, None, "m")
    assert fe.argv[fe.argv.index("--http-host") + 1] == frontend.ip and "--router-mode" in fe.argv
    worker = next(s for s in wanted.values() if s.role == "worker")
    (engine,) = servers._processes(worker, "/p.npz", "m")
    # the worker's request plane and system port (health, /metrics) on its pod's IP, where the operator puts them
    assert engine.env["DYN_TCP_RPC_HOST"] == engine.env["DYN_SYSTEM_HOST"] == worker.ip
    assert engine.env["DYN_SYSTEM_PORT"] == "9090" and engine.env["DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS"]


def test_pods_not_yet_running_or_of_another_owner_run_nothing():
    dgd = _dgd(sku="gb300", mode="agg")
    stranger = _pods(_dgd(sku="gb200", mode="agg"))
    assert _servers([dgd, *_pods(dgd, ready=False), *stranger]).wanted() == {}


def test_a_planner_pod_runs_only_where_pods_reach_the_api_server(tmp_path):
    from kubesim.standins.planner_pod import SERVICE_ACCOUNT_DIR, InCluster

    dgd = _dgd(sku="gb300", mode="agg", autoscaling="advisory")
    pods = _pods(dgd)
    (planner_pod,) = [p for p in pods if p["metadata"]["labels"][op.TYPE_LABEL] == "planner"]
    without = _servers([dgd, *pods])
    assert sorted(s.role for s in without.wanted().values()) == ["frontend", "worker"]
    assert not without.serves(planner_pod) and without.serves(pods[0])

    config_map = next(o for o in planner.planner_objects(build_plan({"sku": "gb300", "mode": "agg",
                                                                         "autoscaling": "advisory"}), "muse")
                      if o["kind"] == "ConfigMap")

    class TokenKube(ListKube):
        def service_account_token(self, namespace, name, seconds):
            return f"token-of-{namespace}/{name}"

    ca = tmp_path / "ca.crt"
    ca.write_text("CA")
    servers = ms.ModelServers(TokenKube([dgd, *pods, config_map]), None, tmp_path, {}, NoProfiles(),
                              model_path="/snap", hf_home=None, in_cluster=InCluster("127.0.0.1", 6443, str(ca)))
    assert servers.serves(planner_pod)
    server = next(s for s in servers.wanted().values() if s.role == "planner")
    (proc,) = servers._processes(server, None, "m")
    # its own configuration (the ConfigMap written where the command reads it), as its ServiceAccount, in-cluster
    config = Path(proc.argv[proc.argv.index("--config") + 1])
    assert config.is_file() and config.read_text() == next(iter(config_map["data"].values()))
    account = Path(proc.argv[3])
    assert (account / "token").read_text() == f"token-of-muse/{planner_pod['spec']['serviceAccountName']}"
    assert (account / "namespace").read_text() == "muse" and (account / "ca.crt").read_text() == "CA"
    assert SERVICE_ACCOUNT_DIR in proc.argv[2] and proc.argv[4:7][1:] == ["-m", "dynamo.planner"]
    assert proc.env["KUBERNETES_SERVICE_HOST"] == "127.0.0.1" and proc.env["KUBERNETES_SERVICE_PORT"] == "6443"
    assert proc.env["DYN_DISCOVERY_BACKEND"] == "file"
    assert servers._readiness(server).url.endswith(f":{op.PLANNER_METRICS_PORT}/metrics")


def test_disaggregated_workers_run_as_prefill_and_decode_engines():
    dgd = _dgd(sku="gb300", mode="disagg")
    servers = _servers([dgd, *_pods(dgd)])
    engines = [servers._processes(s, "/p.npz", "m")[0] for s in servers.wanted().values() if s.role != "frontend"]
    modes = sorted(e.argv[e.argv.index("--disaggregation-mode") + 1] for e in engines)
    assert modes == ["decode", "prefill"]


def test_a_standalone_vllm_pod_runs_a_frontend_on_the_vllm_port_and_a_vllm_engine():
    plan = build_plan({"sku": "b200", "mode": "agg", "framework": "vllm", "speculative": "none"})
    deployment = next(o for o in render.standalone_deployment(plan, "muse") if o["kind"] == "Deployment")
    pod = {"kind": "Pod", "metadata": {"name": "vllm-0", "namespace": "muse", "uid": "u1", "labels": {}},
           "spec": deployment["spec"]["template"]["spec"], "status": {"phase": "Running", "podIP": "10.244.0.9"}}
    servers = _servers([deployment, pod])
    (server,) = servers.wanted().values()
    assert server.standalone and server.port == 8000
    frontend, engine = servers._processes(server, "/p.npz", "m")
    assert frontend.argv[frontend.argv.index("--http-port") + 1] == "8000"
    assert engine.argv[engine.argv.index("--engine-type") + 1] == "vllm"
    # Ready once the model is listed, as `vllm serve` answers its health once its engine has loaded
    assert servers._readiness(server) == ("http://10.244.0.9:8000/v1/models", True)


def test_a_slow_frontend_fault_slows_the_engines_and_an_errors_fault_stops_them():
    dgd = _dgd(sku="gb300", mode="agg")
    faults: dict = {}
    servers = _servers([dgd, *_pods(dgd)], faults)
    worker = next(s for s in servers.wanted().values() if s.role == "worker")
    frontend = next(s for s in servers.wanted().values() if s.role == "frontend")
    assert "--speedup-ratio" not in servers._processes(worker, "/p.npz", "m")[0].argv
    faults["frontend-speed"] = {"factor": 0.5}
    slow = servers._processes(worker, "/p.npz", "m")[0].argv
    assert slow[slow.index("--speedup-ratio") + 1] == "0.5"
    faults["frontend-errors"] = {"rate": 1.0, "status": 503}
    assert servers._processes(worker, "/p.npz", "m") == []               # killed: the frontend answers alone
    assert len(servers._processes(frontend, None, "m")) == 1


@pytest.mark.parametrize(("mode", "expected"), [
    ("agg", {"workers": 1, "decode_workers": 0, "router_mode": "round_robin"}),
    ("kv-router", {"workers": 2, "decode_workers": 0, "router_mode": "kv_router"}),
    ("disagg", {"workers": 1, "decode_workers": 1, "router_mode": "round_robin"}),
])
def test_a_graph_is_calibrated_with_the_engines_router_and_worker_counts_it_serves_with(mode, expected):
    dgd = _dgd(sku="gb300", mode=mode)
    profiles = sp.Profiles(TRACE, "/snap", None, tokenizer="t", cache_dir="/nonexistent")
    engines = profiles.engines(dgd)
    assert {k: getattr(engines, k) for k in expected} == expected
    assert "--num-gpu-blocks-override" in engines.args
    if mode == "disagg":
        assert engines.args[engines.args.index("--disaggregation-mode") + 1] == "prefill"
        assert engines.decode_args[engines.decode_args.index("--disaggregation-mode") + 1] == "decode"
    assert isinstance(engines, Engines)


def test_replicas_an_autoscaler_sets_change_neither_the_calibration_nor_a_running_engines_arguments():
    from kubesim.standins import mocker_calibration as mc

    dgd = _dgd(sku="gb300", mode="disagg", autoscaling="on")
    profiles = sp.Profiles(TRACE, "/snap", None, tokenizer="t", cache_dir="/nonexistent")
    before = profiles.engines(dgd)
    for c in dgd["spec"]["components"]:
        if "scalingAdapter" in c:
            c["replicas"] = 2                   # what the operator writes from the planner's adapters
    after = profiles.engines(dgd)
    assert after == before and (after.workers, after.decode_workers) == (1, 1)
    figures = sp.PublishedFigures.from_annotations(dgd["metadata"]["annotations"])
    assert mc.cache_key(figures, TRACE, after, 36) == mc.cache_key(figures, TRACE, before, 36)


def test_a_profile_is_made_once_in_the_background_and_a_failed_one_serves_uncalibrated(tmp_path):
    import threading

    release = threading.Event()
    made = []

    class Slow(sp.Profiles):
        def make(self, workload, served):
            made.append(workload["metadata"]["name"])
            release.wait(5)
            if workload["metadata"]["name"].endswith("gb200"):
                raise RuntimeError("AIPerf failed")
            return tmp_path / "made.npz"

    profiles = Slow(TRACE, "/snap", None, tokenizer="t", cache_dir=tmp_path)
    good, bad = _dgd(sku="gb300", mode="agg"), _dgd(sku="gb200", mode="agg")
    assert profiles.get(good, "m") is None and profiles.get(good, "m") is None   # calibrating: pods stay starting
    assert profiles.get(bad, "m") is None
    release.set()
    for t in list(profiles._running.values()):
        t.join(5)
    assert profiles.get(good, "m") == tmp_path / "made.npz"
    fallback = profiles.get(bad, "m")
    assert fallback.is_file() and "uncalibrated" in str(fallback)               # serves, off the published figures
    assert sorted(made) == sorted([good["metadata"]["name"], bad["metadata"]["name"]])   # once each
    assert "AIPerf failed" in next(iter(profiles.failed.values()))


# ---------------------------------------------------------------------------- where the runtime can serve
def test_a_rehearsal_where_the_runtime_cannot_run_is_refused_saying_why(monkeypatch):
    monkeypatch.setattr(ms, "runtime_unavailable", lambda: None)
    ms.require_runtime()
    monkeypatch.setattr(ms, "runtime_unavailable", lambda: "its network namespaces need root")
    with pytest.raises(RuntimeError, match="serves every target with the real Dynamo runtime, which cannot run here: "
                                           "its network namespaces need root"):
        ms.require_runtime()


def test_the_runtime_needs_root_and_iproute2(monkeypatch):
    monkeypatch.setattr(ms.os, "geteuid", lambda: 1000)
    assert "root" in ms.runtime_unavailable()
    monkeypatch.setattr(ms.os, "geteuid", lambda: 0)
    monkeypatch.setattr(ms.shutil, "which", lambda name: None)
    assert "iproute2" in ms.runtime_unavailable()


def test_the_calibration_level_is_live_unless_a_cheaper_one_is_asked_for(monkeypatch):
    monkeypatch.delenv(sp.CALIBRATION_ENV, raising=False)
    assert sp.calibration_level() == "live"
    monkeypatch.setenv(sp.CALIBRATION_ENV, "replay")
    assert sp.calibration_level() == "replay"
    monkeypatch.setenv(sp.CALIBRATION_ENV, "none")
    with pytest.raises(ValueError, match="KUBESIM_CALIBRATION='none': choose one of live, replay"):
        sp.calibration_level()

"""The real Dynamo runtime (ai-dynamo 1.5.1) serving a DynamoGraphDeployment without GPUs.

Each component of the graph becomes the process Dynamo's own maintainers rehearse with: the frontend
component runs ``dynamo.frontend`` with the arguments the collection rendered for it (so its router
mode is the target's, and the real argument parser judges them); each worker replica runs a
``dynamo.mocker`` engine that simulates the target's engine (SGLang or vLLM scheduler, KV-cache
blocks, prefix caching, prefill/decode hand-off with a KV-transfer time) with timings from the
profile ``mocker_profile`` generated from the target's published figures. Only the GPU work is
simulated.

The processes find each other through Dynamo's file discovery backend (one directory per graph), send
requests over the TCP request plane and KV events over the ZMQ event plane. Every address they use is
127.0.0.1 inside the network namespace they run in: the Rust core advertises the address of the
interface that holds the default route, so a namespace with only its loopback keeps every connection
there (``DYN_TCP_RESPONSE_STREAM_HOST`` names the interface the frontend receives responses on).

The runtime lives in its own virtualenv (``make setup`` installs it from requirements-dynamo.txt);
``INFEROPS_DYNAMO_RUNTIME_PYTHON`` points at another interpreter that has it.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from . import mocker_profile
from . import operator_rules as op
from .pod_env import command_words

log = logging.getLogger("kubesim.standins.dynamo_runtime")
REPO_ROOT = Path(__file__).resolve().parents[2]
RUNTIME_PYTHON_ENV = "INFEROPS_DYNAMO_RUNTIME_PYTHON"
DEFAULT_RUNTIME_PYTHON = REPO_ROOT / ".venv-dynamo" / "bin" / "python"
MODELS_CATALOG = REPO_ROOT / "catalog" / "models.yml"
# Both sides of the KV hand-off of a GB200/GB300 NVL72 rack sit on NVLink (MNNVL); the mocker's default
# (64 GB/s) is a PCIe-class link. Bytes per token follow the catalog's KV assumption at the worker's dtype.
NVLINK_KV_TRANSFER_GBPS = 400.0
_KV_DTYPE_BYTES = {"fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "auto": 2, "bf16": 2, "bfloat16": 2}
_FRONTEND_OWN_FLAGS = ("--http-port", "--http-host", "--discovery-backend", "--request-plane", "--event-plane")
# Discovery through files (one directory per served graph), requests over TCP, KV events over ZMQ: no etcd, no NATS.
PLANES = ("--discovery-backend", "file", "--request-plane", "tcp", "--event-plane", "zmq")
# a pod of the real operator: Kubernetes discovery, as its environment (DYN_DISCOVERY_BACKEND) says
KUBERNETES_PLANES = ("--request-plane", "tcp", "--event-plane", "zmq")


# A frontend watches its file discovery with about five inotify instances, and each control plane's API server and
# kwok hold more. A test run with several clusters serving reached the usual limit of 128 per user (2026-12-07): a
# frontend started then ended its discovery stream at once ("Model discovery stream ended; retaining committed serving
# state"), never saw its workers, and answered every request 404. Hosts that run many watchers raise the limit (kind's
# known issues ask for 512 and more); the rehearsal raises it to this when it may.
INOTIFY_INSTANCES = Path("/proc/sys/fs/inotify/max_user_instances")
MIN_INOTIFY_INSTANCES = 1024


def ensure_inotify_instances(minimum: int = MIN_INOTIFY_INSTANCES, path: Path = INOTIFY_INSTANCES) -> int | None:
    """The per-user inotify instance limit after raising it to ``minimum`` where it is lower (root only); None when
    this host has no such setting."""
    try:
        current = int(path.read_text())
    except (OSError, ValueError):
        return None
    if current >= minimum:
        return current
    try:
        path.write_text(f"{minimum}\n")
    except OSError as exc:
        log.warning("fs.inotify.max_user_instances is %d and cannot be raised to %d (%s): with many frontends "
                    "running, one may never see its workers", current, minimum, exc)
        return current
    log.info("raised fs.inotify.max_user_instances from %d to %d for the runtime's file discovery", current, minimum)
    return minimum


def runtime_python() -> str:
    return os.environ.get(RUNTIME_PYTHON_ENV) or str(DEFAULT_RUNTIME_PYTHON)


def available() -> str | None:
    """None when the runtime can start here, else why not (what to run to install it)."""
    python = runtime_python()
    if not Path(python).exists():
        return f"the Dynamo runtime is not installed ({python} is missing): run `make setup`"
    return None


@dataclass(frozen=True)
class RuntimeProcess:
    """One process of a served graph: its name (component and replica), argv and extra environment."""

    name: str
    component: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None           # where it writes what it leaves behind (the planner's reports)


def _flag(words: list[str], *names: str) -> str | None:
    for i, w in enumerate(words):
        for name in names:
            if w == name and i + 1 < len(words):
                return words[i + 1]
            if w.startswith(name + "="):
                return w.split("=", 1)[1]
    return None


def _without_flags(words: list[str], flags: tuple[str, ...]) -> list[str]:
    """``words`` without the given ``--flag value`` pairs (the runtime's own addressing replaces them)."""
    out, skip = [], False
    for w in words:
        if skip:
            skip = False
            continue
        if w in flags:
            skip = True
            continue
        if any(w.startswith(f + "=") for f in flags):
            continue
        out.append(w)
    return out


def engine_type(container: dict) -> str:
    """The engine a worker container runs (``python3 -m dynamo.sglang`` -> sglang), as the mocker names it."""
    words = command_words(container)
    for module, engine in (("dynamo.sglang", "sglang"), ("dynamo.vllm", "vllm"), ("dynamo.trtllm", "trtllm")):
        if module in words:
            return engine
    return "vllm"   # dynamo.vllm, and `vllm serve` of the standalone targets


def kv_bytes_per_token(container: dict, catalog_path: Path = MODELS_CATALOG) -> int:
    """Bytes one token's KV occupies (the catalog's assumption at the worker's KV dtype)."""
    catalog = yaml.safe_load(catalog_path.read_text())
    models = catalog.get("models") or catalog
    assumption = next((m["kv_cache_assumption"] for m in models.values() if "kv_cache_assumption" in m), None)
    bf16 = int((assumption or {}).get("bytes_per_token_bf16", 163840))
    dtype = _flag(command_words(container), "--kv-cache-dtype") or "auto"
    return bf16 * _KV_DTYPE_BYTES.get(dtype, 2) // 2


def served_model(container: dict) -> str | None:
    """The model name a worker container serves: ``--served-model-name``, else the model it loads."""
    words = command_words(container)
    named = _flag(words, "--served-model-name", "--model-path", "--model")
    if named:
        return named
    if "serve" in words:       # `vllm serve <model>`
        i = words.index("serve")
        if i + 1 < len(words) and not words[i + 1].startswith("-"):
            return words[i + 1]
    return None


def block_size(container: dict, default: int = 64) -> int:
    """The KV block (page) size a worker container runs with."""
    page = _flag(command_words(container), "--page-size", "--block-size")
    return int(page) if page and page.isdigit() else default


def mocker_args(worker_type: str, container: dict, speedup: float = 1.0, kv_blocks: int | None = None) -> list[str]:
    """The mocker arguments that reproduce a worker container: engine, context, blocks, batch, role, the KV
    capacity (``kv_blocks``; None: the mocker's default) and the speed (1.0: the profile's timings; 0.5: every
    step takes twice as long)."""
    words = command_words(container)
    engine = engine_type(container)
    args = ["--engine-type", engine]
    context = _flag(words, "--context-length", "--max-model-len")
    page = _flag(words, "--page-size", "--block-size")
    if engine == "vllm" and context:
        args += ["--max-model-len", context]
    if page:
        args += ["--block-size", page]
        if engine == "sglang":
            args += ["--sglang-page-size", page]
    seqs = _flag(words, "--max-running-requests", "--max-num-seqs")
    if seqs:
        args += ["--max-num-seqs", seqs]
    chunk = _flag(words, "--chunked-prefill-size", "--max-num-batched-tokens")
    if chunk:
        args += ["--max-num-batched-tokens", chunk]
        if engine == "sglang":
            args += ["--sglang-chunked-prefill-size", chunk]
    if worker_type in ("prefill", "decode"):
        args += ["--disaggregation-mode", worker_type,
                 "--kv-transfer-bandwidth", str(NVLINK_KV_TRANSFER_GBPS),
                 "--kv-bytes-per-token", str(kv_bytes_per_token(container))]
    if kv_blocks:
        args += ["--num-gpu-blocks-override", str(kv_blocks)]
    if speedup != 1.0:
        args += ["--speedup-ratio", f"{speedup:g}"]
    return args


def frontend_process(name: str, component: str, container: dict | None, *, http_host: str, http_port: int,
                     python: str | None = None, router_mode: str | None = None,
                     planes: tuple[str, ...] = PLANES) -> RuntimeProcess:
    """``dynamo.frontend`` on ``http_host:http_port`` with the arguments the collection rendered for the frontend
    container (so the real parser judges them); a standalone target's frontend has none and gets ``router_mode``."""
    words = command_words(container or {})
    own = [w for w in _without_flags(words, _FRONTEND_OWN_FLAGS)
           if w not in ("python", "python3", "-m", "dynamo.frontend")]
    if router_mode:
        own += ["--router-mode", router_mode]
    return RuntimeProcess(name, component, [
        python or runtime_python(), "-m", "dynamo.frontend", "--http-host", http_host, "--http-port", str(http_port),
        *planes, *own], {"DYN_TCP_RESPONSE_STREAM_HOST": "lo"})


def mocker_process(name: str, component: str, worker_type: str, container: dict, *, model_path: str, served: str,
                   profile_path: str | Path | None, env: dict[str, str], python: str | None = None,
                   speedup: float = 1.0, kv_blocks: int | None = None,
                   planes: tuple[str, ...] = PLANES) -> RuntimeProcess:
    """A ``dynamo.mocker`` engine standing in for one worker container (without a profile: the mocker's own
    default timings)."""
    profile = ["--planner-profile-data", str(profile_path)] if profile_path else []
    return RuntimeProcess(name, component, [
        python or runtime_python(), "-m", "dynamo.mocker", "--model-path", model_path, "--model-name", served,
        *profile, *planes, *mocker_args(worker_type, container, speedup, kv_blocks)], env)


def graph_processes(dgd: dict, *, model_path: str, profile_path: str | Path, http_host: str, http_port: int,
                    python: str | None = None, system_port_base: int | None = None,
                    trace: mocker_profile.TraceShape | None = None) -> list[RuntimeProcess]:
    """The processes that serve ``dgd`` in one network namespace: its frontend on ``http_host:http_port``, one
    mocker per worker replica. ``model_path`` is the local tokenizer snapshot the served model name resolves to.
    With ``system_port_base``, worker ``i`` serves its metrics (``/metrics``, as the operator's ``DYN_SYSTEM_PORT``
    makes a worker pod do) on ``system_port_base + i``: the processes share one address, pods would not. With
    ``trace``, each worker's KV capacity follows the published figures (``mocker_profile.kv_blocks``)."""
    figures = mocker_profile.PublishedFigures.from_annotations(dgd["metadata"].get("annotations") or {}) \
        if trace is not None else None
    served = None
    procs: list[RuntimeProcess] = []
    workers = 0
    for comp in op.components(dgd):
        container = (comp.template.get("spec") or {}).get("containers", [{}])[0]
        if comp.type == "frontend":
            procs.append(frontend_process(f"{comp.name}-0", comp.name, container, http_host=http_host,
                                          http_port=http_port, python=python))
            continue
        served = served or served_model(container) or model_path
        for replica in range(comp.pods_wanted):
            env = {"DYN_TCP_RPC_HOST": "127.0.0.1"}
            if system_port_base is not None:
                env["DYN_SYSTEM_PORT"] = str(system_port_base + workers)
            workers += 1
            blocks = mocker_profile.kv_blocks(figures, trace, block_size(container)) if figures else None
            procs.append(mocker_process(f"{comp.name}-{replica}", comp.name, comp.type, container,
                                        model_path=model_path, served=served, profile_path=profile_path,
                                        env=env, python=python, kv_blocks=blocks))
    return procs


class ServedGraph:
    """The running processes of one served graph (start, health, stop), in one network namespace."""

    def __init__(self, processes: list[RuntimeProcess], *, discovery_dir: Path, log_dir: Path, hf_home: Path,
                 exec_prefix: list[str] | None = None):
        self.processes = processes
        self.discovery_dir = discovery_dir
        self.log_dir = log_dir
        self.hf_home = hf_home
        self.exec_prefix = exec_prefix or []
        self.running: dict[str, subprocess.Popen] = {}

    def _env(self, proc: RuntimeProcess) -> dict[str, str]:
        # not the rehearsal's own KUBECONFIG: a pod's Kubernetes client reads its in-cluster ServiceAccount
        env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON", "KUBECONFIG"))}
        env.update({"DYN_FILE_KV": str(self.discovery_dir), "HF_HOME": str(self.hf_home), "HF_HUB_OFFLINE": "1",
                    "TRANSFORMERS_OFFLINE": "1", "DYN_LOG": "warn", "NO_COLOR": "1"}, **proc.env)
        return env

    def start(self, names: list[str] | None = None) -> None:
        ensure_inotify_instances()
        self.discovery_dir.mkdir(parents=True, exist_ok=True)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        for proc in self.processes:
            if names is not None and proc.name not in names:
                continue
            if proc.name in self.running and self.running[proc.name].poll() is None:
                continue
            with open(self.log_dir / f"{proc.name}.log", "ab") as fh:
                self.running[proc.name] = subprocess.Popen(
                    [*self.exec_prefix, *proc.argv], env=self._env(proc), stdout=fh, stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL, start_new_session=True, cwd=proc.cwd)

    def stop(self, names: list[str] | None = None, timeout: float = 10.0, kill: bool = False) -> None:
        """Stop processes: SIGTERM, then SIGKILL after ``timeout``; ``kill`` SIGKILLs at once (a crash: no
        graceful shutdown, the requests in flight are cut)."""
        chosen = [n for n in self.running if names is None or n in names]
        for name in chosen:
            p = self.running[name]
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL if kill else signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for name in chosen:
            p = self.running.pop(name)
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()

    def exited(self) -> dict[str, int]:
        return {n: p.returncode for n, p in self.running.items() if p.poll() is not None}

    def log_tail(self, name: str, chars: int = 2000) -> str:
        path = self.log_dir / f"{name}.log"
        return path.read_text(errors="replace")[-chars:] if path.exists() else ""


def wait_serving(url: str, model: str, workers: int, timeout: float = 60.0, graph: ServedGraph | None = None) -> dict:
    """Wait until the frontend at ``url`` lists ``model``, ``/health`` shows ``workers`` generate instances and a
    one-token completion is answered; returns the health document. Raises with the first exited process's log
    otherwise. The completion is part of the wait because a listed model can still refuse a request: a listed
    disaggregated model once answered 404 under the parallel test pass's load (not reproduced alone), which a client
    such as the smoke test would retry."""
    deadline = time.monotonic() + timeout
    last = "no answer"
    while time.monotonic() < deadline:
        if graph is not None and graph.exited():
            name, code = next(iter(graph.exited().items()))
            raise RuntimeError(f"{name} exited with {code}:\n{graph.log_tail(name)}")
        try:
            with urllib.request.urlopen(url + "/v1/models", timeout=2) as r:
                models = [m["id"] for m in json.load(r).get("data") or []]
            with urllib.request.urlopen(url + "/health", timeout=2) as r:
                health = json.load(r)
            generate = [i for i in health.get("instances") or [] if i.get("endpoint") == "generate"]
            last = f"models {models}, {len(generate)} of {workers} workers registered"
            if model in models and len(generate) >= workers:
                _complete_one_token(url, model)
                return health
        except urllib.error.HTTPError as exc:
            last = f"{last}; a one-token completion answered {exc.code}: {exc.read()[:200]!r}"
        except (urllib.error.URLError, OSError, ValueError) as exc:
            last = str(exc)
        time.sleep(0.3)
    raise TimeoutError(f"the Dynamo frontend at {url} did not serve {model} with {workers} workers "
                       f"in {timeout:.0f} s: {last}")


def _complete_one_token(url: str, model: str) -> None:
    body = {"model": model, "prompt": "ready", "max_tokens": 1}
    request = urllib.request.Request(url + "/v1/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as r:
        r.read()

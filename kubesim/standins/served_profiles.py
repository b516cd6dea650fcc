"""The timing profile each served workload's mocker engines run with, calibrated in the background.

A workload (a DynamoGraphDeployment, or a standalone vLLM Deployment) names its published figures in its
annotations and its engines in its worker containers. Its profile is ``mocker_calibration.calibrated_profile``
for those engines: found in the cache at once, else made in a background thread (the replay, then the live
measure through the real frontend and AIPerf) while its pods wait, unready, as pods whose engine is still
loading. Calibrations run one at a time on the machine (a file lock beside the cache): two at once on two cores
would each measure the other's load.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
from pathlib import Path

from ..file_lock import held
from . import dynamo_runtime as rt
from . import mocker_calibration as mc
from . import mocker_live, mocker_profile
from . import operator_rules as op
from .mocker_profile import PublishedFigures, TraceShape
from .pod_env import command_words

log = logging.getLogger("kubesim.standins.served_profiles")
REPO_ROOT = Path(__file__).resolve().parents[2]
# What every rehearsal model server loads: the tokenizer `make setup` writes, and the benchmark's trace.
REHEARSAL_MODEL = "meta-models/Muse-Spark-Open-816B-A42B-NVFP4"
REHEARSAL_HF_HOME = REPO_ROOT / ".cache" / "huggingface"
REHEARSAL_TRACE = REPO_ROOT / "inventories" / "rehearsal-data" / "agentic-rehearsal.jsonl"
# How far a rehearsal calibrates the profiles it serves, when it starts: `live` (the replay, then rounds through the
# real frontend and AIPerf: the figures a gate at the default tolerance needs) or `replay` (the replay alone, four to
# five times cheaper: for clusters whose benchmarks are not gated at the default tolerance, such as a test pass that
# runs no timing test). Each level has its own cached profiles.
CALIBRATION_ENV = "KUBESIM_CALIBRATION"
CALIBRATION_LEVELS = ("live", "replay")


def calibration_level() -> str:
    level = os.environ.get(CALIBRATION_ENV) or "live"
    if level not in CALIBRATION_LEVELS:
        raise ValueError(f"{CALIBRATION_ENV}={level!r}: choose one of {', '.join(CALIBRATION_LEVELS)}")
    return level


def rehearsal_request_count() -> int:
    """How many requests of the trace the rehearsal's benchmark replays (the rehearsal inventory says), so that
    calibration measures the run the benchmark makes."""
    return int(mocker_live.rehearsal_settings()["benchmark_request_count"])


def rehearsal_model_path() -> Path:
    """The rehearsal tokenizer's snapshot, the model path every mocker loads (whatever name it serves)."""
    from ..tokenizer import installed_snapshot

    snapshot = installed_snapshot(REHEARSAL_HF_HOME, REHEARSAL_MODEL)
    if snapshot is None:
        raise RuntimeError(f"the rehearsal tokenizer is missing under {REHEARSAL_HF_HOME}: run `make setup`")
    return snapshot


def rehearsal_profiles(**kwargs) -> Profiles:
    kwargs.setdefault("request_count", rehearsal_request_count())
    kwargs.setdefault("live", calibration_level() == "live")
    return Profiles(REHEARSAL_TRACE, str(rehearsal_model_path()), REHEARSAL_HF_HOME, tokenizer=REHEARSAL_MODEL,
                    **kwargs)


def _router_mode(frontend: dict | None) -> str:
    words = command_words(frontend or {})
    for i, w in enumerate(words):
        if w == "--router-mode" and i + 1 < len(words):
            return "kv_router" if words[i + 1] == "kv" else "round_robin"
        if w == "--router-mode=kv":
            return "kv_router"
    return "round_robin"


def _container(template: dict) -> dict:
    return ((template.get("spec") or {}).get("containers") or [{}])[0]


class Profiles:
    def __init__(self, trace_path: Path, model_path: str, hf_home: Path, *, tokenizer: str,
                 cache_dir: Path = mc.DEFAULT_CACHE, live: bool = True, request_count: int | None = None):
        self.trace_path = Path(trace_path)
        self.trace = TraceShape.from_file(self.trace_path)
        self.model_path = model_path
        self.hf_home = hf_home
        self.tokenizer = tokenizer
        self.cache_dir = Path(cache_dir)
        self.live = live
        # None: the whole trace
        self.request_count = request_count or sum(1 for line in self.trace_path.read_text().splitlines() if line.strip())
        self._lock = threading.Lock()
        self._made: dict[str, Path] = {}
        self._running: dict[str, threading.Thread] = {}
        self.failed: dict[str, str] = {}            # cache key -> why its calibration failed

    # ---------------------------------------------------------------- what a workload runs
    def kv_blocks(self, workload: dict, container: dict) -> int:
        figures = PublishedFigures.from_annotations(workload["metadata"].get("annotations") or {})
        return mocker_profile.kv_blocks(figures, self.trace, rt.block_size(container))

    def engines(self, workload: dict) -> mc.Engines:
        if workload.get("kind") != "DynamoGraphDeployment":
            container = _container((workload.get("spec") or {}).get("template") or workload)
            return mc.Engines(tuple(rt.mocker_args("worker", container, kv_blocks=self.kv_blocks(workload, container))))
        # The published figures are one operating point of the deployment's own shape: an autoscaler that adds
        # replicas changes neither an engine's speed nor the calibration (nor, so, any running engine's arguments).
        # A scaled component calibrates at one replica, where its adapter starts.
        scaled = set(op.scaled_components(workload))
        comps = [dataclasses.replace(c, replicas=1) if c.name in scaled else c for c in op.components(workload)]
        frontend = next((_container(c.template) for c in comps if c.type == "frontend"), None)
        by_type = {c.type: c for c in comps}
        main = by_type.get("prefill") or by_type.get("worker") or next(c for c in comps if c.is_worker)
        ctr = _container(main.template)
        engines = mc.Engines(tuple(rt.mocker_args(main.type, ctr, kv_blocks=self.kv_blocks(workload, ctr))),
                             workers=main.replicas, router_mode=_router_mode(frontend))
        decode = by_type.get("decode") if main.type == "prefill" else None
        if decode is not None:
            dctr = _container(decode.template)
            engines = mc.Engines(engines.args, engines.workers,
                                 tuple(rt.mocker_args("decode", dctr, kv_blocks=self.kv_blocks(workload, dctr))),
                                 decode.replicas, engines.router_mode)
        return engines

    def _live_processes(self, workload: dict, served: str):
        def processes(profile: Path) -> list:
            if workload.get("kind") == "DynamoGraphDeployment":
                return rt.graph_processes(workload, model_path=self.model_path, profile_path=profile,
                                          http_host="127.0.0.1", http_port=mocker_live.PORT, system_port_base=9100,
                                          trace=self.trace)
            container = _container((workload.get("spec") or {}).get("template") or workload)
            return [rt.frontend_process("frontend-0", "frontend", None, http_host="127.0.0.1",
                                        http_port=mocker_live.PORT, router_mode="round-robin"),
                    rt.mocker_process("worker-0", "worker", "worker", container, model_path=self.model_path,
                                      served=served, profile_path=profile, env={"DYN_TCP_RPC_HOST": "127.0.0.1"},
                                      kv_blocks=self.kv_blocks(workload, container))]
        return processes

    @property
    def live_requests(self) -> int | None:
        """The requests each live calibration round serves; None when calibration stops at the replay."""
        return self.request_count if self.live else None

    # ---------------------------------------------------------------- the profile
    def get(self, workload: dict, served: str) -> Path | None:
        """The workload's calibrated profile, or None while it is being made (started here the first time)."""
        figures = PublishedFigures.from_annotations(workload["metadata"].get("annotations") or {})
        engines = self.engines(workload)
        key = mc.cache_key(figures, self.trace_path, engines, self.live_requests)
        with self._lock:
            if key in self._made:
                return self._made[key]
            cached = self.cache_dir / f"{key}.npz"
            if cached.is_file() and cached.with_suffix(".json").is_file():
                self._made[key] = cached
                return cached
            if key in self.failed:
                return self._uncalibrated(key, figures)
            if key not in self._running or not self._running[key].is_alive():
                t = threading.Thread(target=self._make, args=(key, workload, served),
                                     name=f"calibrate-{key[:8]}", daemon=True)
                self._running[key] = t
                t.start()
        return None

    def _uncalibrated(self, key: str, figures: PublishedFigures) -> Path:
        """After a failed calibration the workload serves on the profile of one request alone (slower than published
        under load: its benchmark says so), rather than never becoming Ready; the daemon's log has the failure."""
        path = self.cache_dir / "uncalibrated" / f"{key}.npz"
        if not path.is_file():
            mocker_profile.write(path, figures, self.trace)
        return path

    def make(self, workload: dict, served: str) -> Path:
        """The workload's calibrated profile, made now when the cache does not hold it (one calibration at a time
        on this machine)."""
        figures = PublishedFigures.from_annotations(workload["metadata"].get("annotations") or {})
        engines = self.engines(workload)
        live = mocker_live.live_measure(
            figures, self.trace, self.trace_path, self._live_processes(workload, served), served=served,
            tokenizer=self.tokenizer, workers=engines.workers + engines.decode_workers, hf_home=self.hf_home,
            request_count=self.request_count) if self.live else None
        with held(self.cache_dir / ".calibration.lock"):
            return mc.calibrated_profile(figures, self.trace_path, engines, python=rt.runtime_python(),
                                         cache_dir=self.cache_dir, live=live, live_requests=self.live_requests)

    def _make(self, key: str, workload: dict, served: str) -> None:
        try:
            path = self.make(workload, served)
        except Exception as exc:  # reported on the pods that wait for it; the cluster keeps running
            log.exception("calibrating %s failed", workload["metadata"].get("name"))
            with self._lock:
                self.failed[key] = f"{type(exc).__name__}: {exc}"
            return
        with self._lock:
            self._made[key] = path

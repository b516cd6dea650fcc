"""Measure a target as it is served: the real frontend and mocker engines with a profile, the real AIPerf.

The mocker's replay (``mocker_replay``) leaves out everything between a client and the engine: the frontend's
tokenizer and router, the request plane, the streamed detokenization, the client itself, and this machine's
two cores shared by all of them. Through them the median TTFT of gb300 agg at concurrency 16 is about a third
higher than the replay's (252 and 237 ms against 181 in two runs). The live measure serves the target's
processes in a network namespace made for it (only its loopback: every address stays there) and replays the
benchmark trace with AIPerf as the benchmark Job does, so calibration can correct the replay's scales by what a
benchmark really sees.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from ..control_plane.netns import call_inside
from . import dynamo_runtime as rt
from . import mocker_profile
from .mocker_profile import PublishedFigures, Scales, TraceShape

PORT = 8000
# The rehearsal inventory: the benchmark's AIPerf settings, which calibration measures with too.
REHEARSAL_SETTINGS = Path(__file__).resolve().parents[2] / "inventories" / "local" / "group_vars" / "dynamo_clusters" \
    / "rehearsal.yml"
Processes = Callable[[Path], list]   # profile path -> the RuntimeProcesses serving on 127.0.0.1:PORT


def aiperf_binary() -> str:
    found = shutil.which("aiperf") or str(Path(sys.executable).with_name("aiperf"))
    return found


@functools.cache
def rehearsal_settings() -> dict:
    import yaml

    return yaml.safe_load(REHEARSAL_SETTINGS.read_text(encoding="utf-8"))


def aiperf_args(served: str, tokenizer: str, trace_path: Path, concurrency: int, request_count: int,
                artifact_dir: Path) -> list[str]:
    """The benchmark Job's profiling run (render.aiperf_job) with the rehearsal inventory's AIPerf settings, against
    the frontend on this namespace's loopback."""
    settings = rehearsal_settings()
    ceiling = float(settings.get("benchmark_request_rate_ceiling") or 0)
    return ["profile", "-m", served, "--tokenizer", tokenizer, "--url", f"http://127.0.0.1:{PORT}",
            "--endpoint-type", "chat", "--streaming", "--ui-type", "none", "--input-file", str(trace_path),
            "--custom-dataset-type", "mooncake_trace", "--request-count", str(request_count),
            "--prompt-input-tokens-block-size", "512", "--use-server-token-count", "--extra-inputs", "ignore_eos:true",
            "--concurrency", str(concurrency), "--workers-max", str(settings["benchmark_workers_max"]),
            "--random-seed", "42", "--artifact-dir", str(artifact_dir),
            *(["--request-rate", f"{ceiling:g}", "--arrival-pattern", "constant"] if ceiling else []),
            *settings.get("benchmark_aiperf_extra_args", [])]


def medians(summary: dict) -> dict:
    """The figures calibration compares, from AIPerf's ``profile_export_aiperf.json``."""
    return {"ttft_p50_ms": float(summary["time_to_first_token"]["p50"]),
            "tokens_per_s_per_user_p50": float(summary["output_token_throughput_per_user"]["p50"]),
            "output_tokens_per_s": float(summary["output_token_throughput"]["avg"])}


@contextlib.contextmanager
def served_alone(processes: list, *, served: str, workers: int, hf_home: Path) -> Iterator[tuple[str, Path]]:
    """Serve ``processes`` (on 127.0.0.1:PORT) in a network namespace made for them (only its loopback: every address
    stays there) until the block ends; yields the namespace's name and a scratch directory."""
    ns = f"inferops-live-{uuid.uuid4().hex[:6]}"
    with tempfile.TemporaryDirectory(prefix="mocker-live-") as tmp:
        work = Path(tmp)
        subprocess.run(["ip", "netns", "add", ns], check=True, capture_output=True)
        graph = None
        try:
            subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True, capture_output=True)
            graph = rt.ServedGraph(processes, discovery_dir=work / "discovery", log_dir=work / "logs",
                                   hf_home=hf_home, exec_prefix=["ip", "netns", "exec", ns])
            graph.start()
            call_inside(f"/run/netns/{ns}", rt.wait_serving, f"http://127.0.0.1:{PORT}", served, workers, 120.0, graph)
            yield ns, work
        finally:
            if graph is not None:
                graph.stop()
            subprocess.run(["ip", "netns", "del", ns], check=False, capture_output=True)


def serve_and_replay(processes: list, trace_path: Path, *, served: str, tokenizer: str, workers: int, hf_home: Path,
                     concurrency: int, request_count: int, metrics_ports: tuple[int, ...] = (),
                     timeout_s: float = 600.0) -> tuple[dict, dict[int, str]]:
    """Serve ``processes`` alone (``served_alone``), replay ``trace_path`` with AIPerf at ``concurrency``; return
    AIPerf's summary and the ``/metrics`` text of each of ``metrics_ports`` read right after the run (the components'
    own figures)."""
    with served_alone(processes, served=served, workers=workers, hf_home=hf_home) as (ns, work):
        env = {**os.environ, "HF_HOME": str(hf_home), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        done = subprocess.run(["ip", "netns", "exec", ns, aiperf_binary(),
                               *aiperf_args(served, tokenizer, trace_path, concurrency, request_count,
                                            work / "aiperf")],
                              env=env, capture_output=True, text=True, timeout=timeout_s, check=False)
        summary_path = work / "aiperf" / "profile_export_aiperf.json"
        if done.returncode != 0 or not summary_path.is_file():
            raise RuntimeError(f"AIPerf against the served target failed (exit {done.returncode}): "
                               f"{(done.stdout + done.stderr)[-2000:]}")
        metrics = {port: call_inside(f"/run/netns/{ns}", _read_metrics, port) for port in metrics_ports}
        return json.loads(summary_path.read_text()), metrics


def _read_metrics(port: int) -> str:
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        return r.read().decode()


def live_measure(figures: PublishedFigures, trace: TraceShape, trace_path: Path, processes: Processes, *,
                 served: str, tokenizer: str, workers: int, hf_home: Path, request_count: int,
                 timeout_s: float = 600.0) -> Callable[[Scales], dict]:
    """``measure`` for ``mocker_calibration.calibrate``: serve the target with a profile of the given scales and
    replay ``trace_path`` through it with AIPerf at the published concurrency."""

    def measure(scales: Scales) -> dict:
        from .mocker_calibration import CalibrationError

        with tempfile.TemporaryDirectory(prefix="mocker-profile-") as tmp:
            profile = mocker_profile.write(Path(tmp) / "profile.npz", figures, trace, scales)
            try:
                summary, _ = serve_and_replay(processes(profile), trace_path, served=served, tokenizer=tokenizer,
                                              workers=workers, hf_home=hf_home, concurrency=figures.concurrency,
                                              request_count=request_count, timeout_s=timeout_s)
            except RuntimeError as exc:
                raise CalibrationError(str(exc)) from exc
        return medians(summary)

    return measure

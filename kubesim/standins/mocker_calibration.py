"""Calibrate a target's mocker profile so the live engine lands on the published figures at the published load.

``mocker_profile`` turns the published TTFT and per-user speed into the time of one request alone. At the
published concurrency a request also waits for the other requests' prefills and the running requests pause
while a prefill step runs, so through the live engine the same profile measures a higher TTFT and a lower
per-user speed than published (gb300 agg at concurrency 16: TTFT p50 387 ms against 178, 37 tokens/s per user
against 51). Calibration replays the benchmark trace through mocker engines built from the worker's own
arguments (``mocker_replay``: the mocker's online replay, sped up) and scales the prefill and decode tables until
the replay's medians are within ``TOLERANCE`` of the published ones; the mocker's scheduler still decides every
request's timing. The result is cached by everything it depends on, so a target is calibrated once per machine.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from . import mocker_profile
from .mocker_profile import PublishedFigures, Scales, TraceShape

# Within this relative error of the published medians the benchmark gate (10 % by default) keeps its margin.
TOLERANCE = 0.03
MAX_ROUNDS = 6
# One correction changes a table by at most this factor either way (the first replay can be far off).
MAX_STEP = 4.0
# Bump when the profile's shape or the replay changes, so cached profiles are made again.
VERSION = 1
DEFAULT_CACHE = Path.home() / ".cache" / "inferops-dynamo" / "mocker-profiles"

Measure = Callable[[Scales], dict]


class CalibrationError(RuntimeError):
    """The replay could not run, or did not come within the tolerance; the message says which and what it measured."""


@dataclass(frozen=True)
class Calibration:
    scales: Scales
    measured: dict
    rounds: int


def _bounded(factor: float) -> float:
    return min(MAX_STEP, max(1.0 / MAX_STEP, factor))


def calibrate(figures: PublishedFigures, measure: Measure, *, tolerance: float = TOLERANCE,
              max_rounds: int = MAX_ROUNDS) -> Calibration:
    """The table scales at which ``measure`` (a replay at the published load) gives the published TTFT p50 and
    output tokens/s per user p50 within ``tolerance``. Each round corrects each scale by the ratio of published to
    measured: the TTFT moves with the prefill table and the per-user speed inversely with the decode table."""
    scales = Scales()
    for rounds in range(1, max_rounds + 1):
        measured = measure(scales)
        ttft_ratio = figures.ttft_ms / measured["ttft_p50_ms"]
        speed_ratio = measured["tokens_per_s_per_user_p50"] / figures.tokens_per_s_per_user
        if abs(ttft_ratio - 1) <= tolerance and abs(speed_ratio - 1) <= tolerance:
            return Calibration(scales, measured, rounds)
        scales = Scales(scales.prefill * _bounded(ttft_ratio), scales.decode * _bounded(speed_ratio))
    raise CalibrationError(
        f"the replay did not reach the published figures within {tolerance:.0%} in {max_rounds} rounds: last measured "
        f"TTFT p50 {measured['ttft_p50_ms']:.1f} ms (published {figures.ttft_ms}), "
        f"{measured['tokens_per_s_per_user_p50']:.2f} tokens/s per user (published {figures.tokens_per_s_per_user})")


def replay_measure(figures: PublishedFigures, trace: TraceShape, trace_path: Path, mocker_args: list[str], *,
                   python: str, workers: int = 1, router_mode: str = "round_robin", speedup: float = 10.0) -> Measure:
    """``measure`` for ``calibrate``: the mocker's online replay of ``trace_path`` at the published concurrency,
    run by the runtime's interpreter, with a profile of the given scales."""
    repo_root = Path(__file__).resolve().parents[2]

    def measure(scales: Scales) -> dict:
        with tempfile.TemporaryDirectory(prefix="mocker-calibration-") as work:
            profile = mocker_profile.write(Path(work) / "profile.npz", figures, trace, scales)
            request = Path(work) / "request.json"
            request.write_text(json.dumps({
                "mocker_args": ["--planner-profile-data", str(profile), *mocker_args], "trace": str(trace_path),
                "concurrency": figures.concurrency, "workers": workers, "router_mode": router_mode,
                "trace_block_tokens": mocker_profile.TRACE_BLOCK_TOKENS, "speedup": speedup}))
            done = subprocess.run([python, "-m", "kubesim.standins.mocker_replay", str(request)], cwd=repo_root,
                                  capture_output=True, text=True, timeout=600, check=False)
        if done.returncode != 0:
            raise CalibrationError(f"the mocker's replay failed (exit {done.returncode}): {done.stderr[-2000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])

    return measure


def cache_key(figures: PublishedFigures, trace_path: Path, mocker_args: list[str], workers: int,
              router_mode: str) -> str:
    digest = hashlib.sha256(json.dumps({
        "version": VERSION, "figures": asdict(figures), "trace": hashlib.sha256(trace_path.read_bytes()).hexdigest(),
        "mocker_args": mocker_args, "workers": workers, "router_mode": router_mode}, sort_keys=True).encode())
    return digest.hexdigest()[:24]


def calibrated_profile(figures: PublishedFigures, trace_path: Path, mocker_args: list[str], *, python: str,
                       workers: int = 1, router_mode: str = "round_robin", cache_dir: Path = DEFAULT_CACHE,
                       measure: Measure | None = None) -> Path:
    """The calibrated profile (NPZ) for a worker that runs with ``mocker_args``, from the cache when it is there.
    ``mocker_args`` are the engine's own (block size, batch, KV capacity...), not its addresses or model path."""
    trace_path = Path(trace_path)
    trace = TraceShape.from_file(trace_path)
    key = cache_key(figures, trace_path, mocker_args, workers, router_mode)
    profile, record = Path(cache_dir) / f"{key}.npz", Path(cache_dir) / f"{key}.json"
    if profile.is_file() and record.is_file():
        return profile
    measure = measure or replay_measure(figures, trace, trace_path, mocker_args, python=python, workers=workers,
                                        router_mode=router_mode)
    result = calibrate(figures, measure)
    mocker_profile.write(profile, figures, trace, result.scales)
    record.write_text(json.dumps({"figures": asdict(figures), "scales": asdict(result.scales),
                                  "measured": result.measured, "rounds": result.rounds}, indent=2) + "\n")
    return profile

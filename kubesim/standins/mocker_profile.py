"""The timing profile a ``dynamo.mocker`` worker runs with, generated from a target's published figures.

The mocker (ai-dynamo 1.5.1, ``--planner-profile-data``) reads five arrays from an NPZ file: the prefill
time per step over the new prompt tokens of that step (``prefill_isl`` -> ``prefill_ttft_ms``,
interpolated linearly) and the time of one decode step over the tokens held in the KV cache and the
mean context length of the batch (``decode_active_kv_tokens`` x ``decode_context_length`` ->
``decode_itl``, interpolated bilinearly). Everything else (batching, KV capacity, prefix hits,
queueing, the hand-off between prefill and decode workers) is the mocker's own scheduler.

The figures the tables follow are the ones the collection annotates on every served workload from
the catalog (``inferops.dynamo/expected-*``): TTFT p50, output tokens/s per user p50 and the
concurrency they were published at. The tables are anchored on the benchmark trace:

* a request's TTFT is its prefill step plus one decode step, so the prefill time at the trace's
  median new (uncached) prompt length is the published TTFT minus one inter-token latency;
  prefill time grows linearly with the new tokens beyond a fixed share;
* one decode step takes the published inter-token latency (1000 / tokens per second per user) while
  the KV cache holds at most what the published concurrency holds at the trace's mean context;
  past that it slows down in proportion (half the excess, as a batch that outgrew its sizing does).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

ANNOTATION_PREFIX = "inferops.dynamo/"
# A mooncake-style trace names its prompt blocks by hash id; each id stands for this many tokens.
TRACE_BLOCK_TOKENS = 512
# The share of the prefill time that does not depend on the prompt length (scheduling, launch).
FIXED_PREFILL_SHARE = 0.15
# Past the published load, each step slows by this fraction of the relative excess of KV tokens.
OVERLOAD_SLOPE = 0.5
# KV capacity of a simulated worker, in multiples of what the published load holds: the published operating point
# never runs out of blocks (the mocker's default pool is sized for a small model and retracts requests at this
# trace's 64K contexts), and the decode table's slowdown past the published load is reached long before it does.
KV_CAPACITY_MULTIPLE = 8
# Grid points: enough to keep the interpolation exact on the straight pieces and to reach 1M tokens.
_ISL_POINTS = (1, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576)
_CONTEXT_POINTS = (1, 1024, 8192, 65536, 1048576)
_LOAD_MULTIPLES = (0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 64.0)


class ProfileError(ValueError):
    """A workload or trace the profile cannot be generated from; the message says which field."""


@dataclass(frozen=True)
class PublishedFigures:
    """The figures of one target a healthy deployment is expected to reach (catalog ``expected``)."""

    ttft_ms: float
    tokens_per_s_per_user: float
    concurrency: int
    # the whole run's output tokens/s: the gate checks it too, and calibration balances it against the per-user speed
    output_tokens_per_s: float | None = None

    @property
    def itl_ms(self) -> float:
        return 1000.0 / self.tokens_per_s_per_user

    @classmethod
    def from_annotations(cls, annotations: Mapping[str, str]) -> PublishedFigures:
        keys = {"ttft_ms": "expected-ttft-p50-ms", "tokens_per_s_per_user": "expected-output-tps-per-user-p50",
                "concurrency": "expected-concurrency"}
        values, problems = {}, []
        for field, key in keys.items():
            raw = annotations.get(ANNOTATION_PREFIX + key)
            try:
                values[field] = float(raw)
            except (TypeError, ValueError):
                problems.append(f"{ANNOTATION_PREFIX}{key}={raw!r}")
                continue
            if values[field] <= 0:
                problems.append(f"{ANNOTATION_PREFIX}{key}={raw!r} (must be > 0)")
        if problems:
            raise ProfileError("the workload's published figures are missing or invalid: " + ", ".join(problems))
        try:
            throughput = float(annotations.get(ANNOTATION_PREFIX + "expected-output-tps"))
        except (TypeError, ValueError):     # a workload rendered before it was annotated: the per-user speed alone
            throughput = None
        return cls(values["ttft_ms"], values["tokens_per_s_per_user"], max(1, round(values["concurrency"])),
                   throughput if throughput and throughput > 0 else None)


@dataclass(frozen=True)
class TraceShape:
    """What the prefill and decode tables are anchored on: the benchmark trace's prompt lengths."""

    median_new_tokens: int
    mean_context_tokens: int

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping], block_tokens: int = TRACE_BLOCK_TOKENS) -> TraceShape:
        """New tokens of a request = its input minus the leading blocks an earlier request already
        sent (the prefix a prefix cache holds); context = input plus half the output."""
        seen: set = set()
        new_tokens, contexts = [], []
        for i, row in enumerate(rows):
            try:
                isl, osl = int(row["input_length"]), int(row.get("output_length", 0))
            except (KeyError, TypeError, ValueError) as exc:
                raise ProfileError(f"trace row {i + 1} has no integer input_length: {row!r}") from exc
            cached = 0
            for block in row.get("hash_ids") or []:
                if block not in seen:
                    break
                cached += 1
            seen.update(row.get("hash_ids") or [])
            new_tokens.append(max(1, isl - cached * block_tokens))
            contexts.append(isl + osl / 2)
        if not new_tokens:
            raise ProfileError("the trace has no requests")
        return cls(round(statistics.median(new_tokens)), round(statistics.fmean(contexts)))

    @classmethod
    def from_file(cls, path: str | Path) -> TraceShape:
        text = Path(path).read_text()
        return cls.from_rows(json.loads(line) for line in text.splitlines() if line.strip())


@dataclass(frozen=True)
class Scales:
    """Factors on the prefill and decode tables (1.0: the figures as published). A request at the published load
    also waits for the other requests' prefills and shares its steps with them, which a profile of one request
    alone does not hold; ``mocker_calibration`` finds the factors that make the mocker's scheduler land on the
    published figures."""

    prefill: float = 1.0
    decode: float = 1.0


def prefill_ms(figures: PublishedFigures, trace: TraceShape, new_tokens: float, scale: float = 1.0) -> float:
    """Prefill time of ``new_tokens`` uncached prompt tokens (one request alone)."""
    at_trace = max(1.0, figures.ttft_ms - figures.itl_ms)
    return scale * at_trace * (FIXED_PREFILL_SHARE + (1 - FIXED_PREFILL_SHARE) * new_tokens / trace.median_new_tokens)


def decode_step_ms(figures: PublishedFigures, trace: TraceShape, active_kv_tokens: float, scale: float = 1.0) -> float:
    """Time of one decode step while the KV cache holds ``active_kv_tokens``."""
    published_load = figures.concurrency * trace.mean_context_tokens
    excess = max(0.0, active_kv_tokens / published_load - 1.0)
    return scale * figures.itl_ms * (1.0 + OVERLOAD_SLOPE * excess)


def kv_blocks(figures: PublishedFigures, trace: TraceShape, block_size: int) -> int:
    """KV-cache blocks of ``block_size`` tokens a simulated worker holds (``--num-gpu-blocks-override``)."""
    if block_size <= 0:
        raise ProfileError(f"the KV block size must be a positive number of tokens, not {block_size!r}")
    tokens = KV_CAPACITY_MULTIPLE * figures.concurrency * trace.mean_context_tokens
    return -(-tokens // block_size)


def tables(figures: PublishedFigures, trace: TraceShape, scales: Scales = Scales()) -> dict[str, list]:
    """The five arrays of the mocker's profile, as plain lists (the NPZ writer makes them arrays)."""
    isl = sorted({*_ISL_POINTS, trace.median_new_tokens})
    published_load = figures.concurrency * trace.mean_context_tokens
    kv = sorted({round(m * published_load) for m in _LOAD_MULTIPLES})
    step = [decode_step_ms(figures, trace, k, scales.decode) for k in kv]
    return {
        "prefill_isl": [float(n) for n in isl],
        "prefill_ttft_ms": [prefill_ms(figures, trace, n, scales.prefill) for n in isl],
        "decode_active_kv_tokens": [float(k) for k in kv],
        "decode_context_length": [float(c) for c in _CONTEXT_POINTS],
        # the step time depends on the load only: the same row for every mean context length
        "decode_itl": [[s] * len(_CONTEXT_POINTS) for s in step],
    }


def write(path: str | Path, figures: PublishedFigures, trace: TraceShape, scales: Scales = Scales()) -> Path:
    """Write the profile as the mocker's NPZ; returns the path."""
    import numpy as np

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {k: np.asarray(v, dtype=np.float64) for k, v in tables(figures, trace, scales).items()}
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)
    return path

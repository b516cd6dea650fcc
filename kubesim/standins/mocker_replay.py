"""Run by the Dynamo runtime's interpreter: the mocker's own replay of a benchmark trace, in real time.

``python -m kubesim.standins.mocker_replay <request.json>`` prints one JSON object: the median TTFT and
time per output token and the output token rate of the trace replayed at a concurrency through mocker
engines built from mocker arguments (the ones a served worker runs with), the way ``dynamo.replay`` runs
them (a disaggregated target's prefill engines, served aggregated: see below). The replay is *online*: ai-dynamo 1.5.1's offline (virtual-time) replay lets a running request keep
decoding while others prefill, where the live engine pauses it, so its TTFT under load is optimistic (at
concurrency 4 on the rehearsal trace: 181 ms offline, 335 ms online and through the live frontend). Online
replay at ``speedup`` times the engine's speed keeps the live engine's scheduling and takes a fraction of
the time; the figures it prints are scaled back to the profile's time.

Only the standard library and ``dynamo`` are imported: this runs outside the project's virtualenv.
"""

from __future__ import annotations

import json
import sys


def _without(args: list[str], flags: tuple[str, ...]) -> list[str]:
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in flags:
            skip = True
        else:
            out.append(a)
    return out


def replay(request: dict) -> dict:
    from dynamo.mocker.args import parse_args
    from dynamo.mocker.config import build_mocker_engine_args
    from dynamo.replay.api import run_trace_replay

    speedup = float(request.get("speedup", 20.0))

    def engine(args: list[str]):
        saved, sys.argv = sys.argv, ["dynamo.mocker", *args, "--speedup-ratio", str(speedup)]
        try:
            return build_mocker_engine_args(parse_args())
        finally:
            sys.argv = saved

    workers = int(request.get("workers", 1))
    args = request["mocker_args"]
    if request.get("decode_args"):
        # ai-dynamo 1.5.1 replays disaggregation offline only, and there the median TTFT hardly follows the prefill
        # table (gb200 disagg: 18.4 s, then 7.7 s after six rounds that cut the table 60-fold). The replay stands
        # the prefill engines in for the whole target, served aggregated; the live stage serves it disaggregated.
        args = _without(args, ("--disaggregation-mode", "--kv-transfer-bandwidth", "--kv-bytes-per-token"))
    summary = run_trace_replay(
        request["trace"], replay_mode="online", replay_concurrency=int(request["concurrency"]),
        router_mode=request.get("router_mode", "round_robin"), trace_block_size=int(request["trace_block_tokens"]),
        extra_engine_args=engine(args), num_workers=workers)
    summary = getattr(summary, "summary", summary)    # the offline replay returns a report around the summary
    return {
        "requests": int(summary.get("num_ttft_samples") or 0),
        "ttft_p50_ms": float(summary["median_ttft_ms"]) * speedup,
        # AIPerf's per-user speed is a request's output tokens over its decode time, 1000 / its time per output token
        "tokens_per_s_per_user_p50": 1000.0 / (float(summary["median_tpot_ms"]) * speedup),
        "output_tokens_per_s": float(summary["output_throughput_tok_s"]) / speedup,
    }

if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as fh:
        print(json.dumps(replay(json.load(fh))))

"""Run by the Dynamo runtime's interpreter: the mocker's own replay of a benchmark trace, in real time.

``python -m kubesim.standins.mocker_replay <request.json>`` prints one JSON object: the median TTFT and
time per output token and the output token rate of the trace replayed at a concurrency through mocker
engines built from mocker arguments (the ones a served worker runs with), the way ``dynamo.replay`` runs
them. The replay is *online*: ai-dynamo 1.5.1's offline (virtual-time) replay lets a running request keep
decoding while others prefill, where the live engine pauses it, so its TTFT under load is optimistic (at
concurrency 4 on the rehearsal trace: 181 ms offline, 335 ms online and through the live frontend). Online
replay at ``speedup`` times the engine's speed keeps the live engine's scheduling and takes a fraction of
the time; the figures it prints are scaled back to the profile's time.

Only the standard library and ``dynamo`` are imported: this runs outside the project's virtualenv.
"""

from __future__ import annotations

import json
import sys


def replay(request: dict) -> dict:
    from dynamo.mocker.args import parse_args
    from dynamo.mocker.config import build_mocker_engine_args
    from dynamo.replay.api import run_trace_replay

    speedup = float(request.get("speedup", 20.0))
    saved, sys.argv = sys.argv, ["dynamo.mocker", *request["mocker_args"], "--speedup-ratio", str(speedup)]
    try:
        engine = build_mocker_engine_args(parse_args())
    finally:
        sys.argv = saved
    summary = run_trace_replay(
        request["trace"], extra_engine_args=engine, replay_mode="online",
        replay_concurrency=int(request["concurrency"]), num_workers=int(request.get("workers", 1)),
        router_mode=request.get("router_mode", "round_robin"), trace_block_size=int(request["trace_block_tokens"]))
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

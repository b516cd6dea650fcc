"""Write the scaled-down agentic trace the rehearsal cluster benchmarks with.

Same structure as the recipe's 15% agentic trace (mooncake_trace JSONL: input_length,
output_length, hash_ids; no timestamps, "noschedule"): sessions that grow a shared prefix turn by
turn (~90% of each request's blocks were seen before), 400 output tokens by default, but
~4K-7K instead of ~64K input tokens and a few dozen requests, so a laptop replays it in about a minute.
Deterministic: the same file (and SHA-256) every time.

The defaults write the committed 36-request trace (6 sessions of 6 turns, 400 output tokens each). The options
write the variants measured while looking for a steadier benchmark median (docs/dynamo-runtime.md): more sessions
(``--requests 72 --sessions 12``) keep the contexts in one range while lengthening the run, and
``--output-sigma 0.35`` spreads the output lengths so later waves do not arrive in lockstep.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
from pathlib import Path

BLOCK = 512  # AIPerf's mooncake_trace block size: each hash id stands for 512 tokens


OUTPUT_MEDIAN = 400
OUTPUT_RANGE = (100, 1000)


def make_trace(requests: int = 36, sessions: int = 6, seed: int = 7, output_sigma: float = 0.0) -> list[dict]:
    """Each request = its session's shared prefix of full blocks + one partial block of its own.

    A hash id always stands for the same full block: partial tail blocks get ids never reused,
    and a session's prefix grows by a fresh full block each turn (~90% of blocks are reused).
    Output lengths are log-normal around the median (``output_sigma`` 0: all equal to it)."""
    rng = random.Random(seed)
    counter = iter(range(10**6))
    prefixes = [[next(counter) for _ in range(8)] for _ in range(sessions)]
    lines = []
    for i in range(requests):
        prefix = prefixes[i % sessions]
        tail = rng.randint(64, BLOCK)
        output = round(OUTPUT_MEDIAN * math.exp(rng.gauss(0, output_sigma))) if output_sigma else OUTPUT_MEDIAN
        lines.append({"input_length": len(prefix) * BLOCK + tail,
                      "output_length": min(max(output, OUTPUT_RANGE[0]), OUTPUT_RANGE[1]),
                      "hash_ids": [*prefix, next(counter)]})
        prefix.append(next(counter))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[1]
                                             / "inventories/rehearsal-data/agentic-rehearsal.jsonl"))
    parser.add_argument("--requests", type=int, default=36)
    parser.add_argument("--sessions", type=int, default=6)
    parser.add_argument("--output-sigma", type=float, default=0.0,
                        help=f"spread of the output lengths (log-normal around {OUTPUT_MEDIAN} tokens, "
                             f"within {OUTPUT_RANGE[0]}-{OUTPUT_RANGE[1]})")
    args = parser.parse_args()
    trace = make_trace(args.requests, args.sessions, output_sigma=args.output_sigma)
    text = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in trace)
    Path(args.out).write_text(text)
    print(f"{args.out}: {args.requests} requests, {len(text)} bytes, sha256 {hashlib.sha256(text.encode()).hexdigest()}")


if __name__ == "__main__":
    main()

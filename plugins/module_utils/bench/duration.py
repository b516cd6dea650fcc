# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""How long a benchmark will take, so its Job gets a deadline it can meet.

A killed AIPerf leaves no summary, and a fixed deadline cannot fit every trace: estimate the
duration from the trace's output tokens and the target's expected throughput, add a margin, and
refuse a run that cannot finish within the time budget, saying how many requests would fit.

A request-rate ceiling (what keeps AIPerf from polling at full speed at a fixed concurrency) must not be what
limits the run: it is refused below a few times the request rate the same estimate expects.
"""

from __future__ import annotations

import math

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.errors import PlanError, PlanRefused

# Without published figures: a conservative per-user decode speed.
FALLBACK_TOKENS_PER_S_PER_USER = 20.0
STARTUP_ALLOWANCE_S = 600        # image pull, tokenizer load, dataset preparation, warm-up
MARGIN = 0.5                     # the estimate assumes the expected speed; allow 50% slower
# A ceiling this many times the expected request rate leaves a freed slot waiting a small share of a request.
RATE_CEILING_HEADROOM = 4


def estimate(*, request_count: int, output_tokens_per_request: int, concurrency: int,
             expected: dict | None, time_budget_s: int, warmup_requests: int = 5,
             warmup_output_tokens: int = 1000, request_rate_ceiling: float | None = None) -> dict:
    tokens = request_count * output_tokens_per_request
    if expected and expected.get("output_tokens_per_s"):
        # Throughput scales with concurrency until the published operating point.
        basis_tps = float(expected["output_tokens_per_s"]) * min(1.0, concurrency / float(expected["concurrency"]))
        per_user = float(expected.get("output_tokens_per_s_per_user_p50") or FALLBACK_TOKENS_PER_S_PER_USER)
        basis = "expected throughput of the target"
    else:
        per_user = FALLBACK_TOKENS_PER_S_PER_USER
        basis_tps = per_user * concurrency
        basis = f"no published figures: assumed {per_user:g} tokens/s per user"
    run_s = tokens / basis_tps
    warmup_s = warmup_requests * warmup_output_tokens / per_user
    estimate_s = run_s + warmup_s
    deadline_s = math.ceil(estimate_s * (1 + MARGIN) + STARTUP_ALLOWANCE_S)
    result = {
        "request_count": request_count,
        "output_tokens": tokens,
        "throughput_basis_tokens_per_s": round(basis_tps, 1),
        "basis": basis,
        "estimate_s": math.ceil(estimate_s),
        "deadline_s": deadline_s,
        "time_budget_s": time_budget_s,
        "margin": MARGIN,
        "startup_allowance_s": STARTUP_ALLOWANCE_S,
        "request_rate_per_s": round(basis_tps / output_tokens_per_request, 3),
    }
    refusals = []
    if deadline_s > time_budget_s:
        per_request_s = (run_s / request_count) * (1 + MARGIN)
        room = time_budget_s - STARTUP_ALLOWANCE_S - warmup_s * (1 + MARGIN)
        fits = max(0, int(room // per_request_s))
        refusals.append(PlanError(
            f"the benchmark would take about {estimate_s / 60:.0f} min ({request_count} requests x "
            f"{output_tokens_per_request} output tokens = {tokens:,} tokens at {basis_tps:.0f} tokens/s, "
            f"{basis}); with a {int(MARGIN * 100)}% margin and {STARTUP_ALLOWANCE_S} s start-up its deadline would "
            f"be {deadline_s} s, beyond benchmark_time_budget={time_budget_s} s. About {fits} requests fit: "
            f"-e benchmark_request_count={fits}, or raise benchmark_time_budget.",
            "benchmark-exceeds-time-budget",
            [f"benchmark_request_count<={fits}", f"benchmark_time_budget>={deadline_s}"],
        ))
    rate = result["request_rate_per_s"]
    if request_rate_ceiling and request_rate_ceiling < RATE_CEILING_HEADROOM * rate:
        least = math.ceil(RATE_CEILING_HEADROOM * rate)
        refusals.append(PlanError(
            f"benchmark_request_rate_ceiling={request_rate_ceiling:g} requests/s would limit the run: at concurrency "
            f"{concurrency} it is expected to complete about {rate:g} requests/s ({basis_tps:.0f} tokens/s / "
            f"{output_tokens_per_request} output tokens, {basis}), and a ceiling below {RATE_CEILING_HEADROOM}x that "
            "delays the requests it measures.",
            "benchmark-request-rate-ceiling-too-low",
            [f"benchmark_request_rate_ceiling>={least}", "benchmark_request_rate_ceiling=0 (none)"],
        ))
    if refusals:
        raise PlanRefused(refusals)
    return result

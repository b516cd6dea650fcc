# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Service-level objectives of a benchmark: AIPerf's goodput, which runs meet them, the operating point.

AIPerf does the per-request judging (``--goodput``: a request is good when it meets every objective;
``goodput`` is good requests per second, ``good_request_fraction`` their share of all attempted
requests, failed ones included). This layer turns the user's ``benchmark_slo`` into that option,
decides whether a run meets the objectives (the good share reaches ``attainment``, the DistServe
convention AIPerf's own ``max-goodput-under-slo`` recipe uses, default 0.95) and says which objective
missed by how much, from the per-request rows. Pure Python, no third-party imports::

    normalise_slo(slo)                                   -> {key: threshold} or SLOError (every problem at once)
    goodput_arg(slo)                                     -> the --goodput value ("time_to_first_token:300 ...")
    evaluate(metrics, rows, slo, attainment, ...)        -> per-objective shares, good share, met or not
    recommend(points)                                    -> the highest concurrency meeting the objectives
    describe(evaluation)                                 -> one line for the gate and the reports
"""

from __future__ import annotations

import math

# key -> (AIPerf per-request metric tag, label, unit, direction)
REQUEST_OBJECTIVES = {
    "ttft_ms": ("time_to_first_token", "TTFT", "ms", "lower"),
    "itl_ms": ("inter_token_latency", "Inter-token latency", "ms", "lower"),
    "e2e_ms": ("request_latency", "End-to-end latency", "ms", "lower"),
    "tokens_per_s_per_user": ("output_token_throughput_per_user", "Output tokens/s per user", "tokens/s/user",
                              "higher"),
}
# run-level objectives (not per request): the share of failed requests
RUN_OBJECTIVES = {"error_rate": ("Failed requests", "fraction")}
VALID_KEYS = (*REQUEST_OBJECTIVES, *RUN_OBJECTIVES)
DEFAULT_ATTAINMENT = 0.95


class SLOError(ValueError):
    """Bad objectives; the message lists every problem and the valid keys."""


def _number(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if not isinstance(value, (int, float)) or math.isnan(value) or math.isinf(value):
        return None
    return float(value)


def normalise_slo(slo):
    """``{key: float}`` from the user's objectives (numbers or numeric strings); ``{}`` for none.

    Raises SLOError naming every unknown key, non-number and out-of-range value at once.
    """
    if slo in (None, "", {}):
        return {}
    if not isinstance(slo, dict):
        raise SLOError(f"benchmark_slo must be a mapping such as {{ttft_ms: 300, itl_ms: 25}}, got {slo!r}. "
                       f"Valid keys: {', '.join(VALID_KEYS)}.")
    problems, out = [], {}
    for key, raw in slo.items():
        if key not in VALID_KEYS:
            problems.append(f"unknown objective {key!r}")
            continue
        value = _number(raw)
        if value is None:
            problems.append(f"{key} must be a number, got {raw!r}")
        elif key == "error_rate" and not 0 <= value < 1:
            problems.append(f"error_rate is a fraction of requests in [0, 1), got {value:g}")
        elif key != "error_rate" and value <= 0:
            problems.append(f"{key} must be > 0, got {value:g}")
        else:
            out[key] = value
    if problems:
        raise SLOError("benchmark_slo: " + "; ".join(problems) + ". Valid keys: ttft_ms, itl_ms, e2e_ms (ms, "
                       "at most), tokens_per_s_per_user (at least), error_rate (fraction of failed requests, "
                       "at most).")
    return out


def goodput_arg(slo):
    """AIPerf's ``--goodput`` value for the per-request objectives, or None when there are none."""
    pairs = [f"{REQUEST_OBJECTIVES[k][0]}:{slo[k]:g}" for k in REQUEST_OBJECTIVES if k in (slo or {})]
    return " ".join(pairs) or None


def objective_text(key, threshold):
    """``itl_ms <= 25`` / ``tokens_per_s_per_user >= 40`` / ``error_rate <= 0.01``."""
    direction = REQUEST_OBJECTIVES[key][3] if key in REQUEST_OBJECTIVES else "lower"
    return f"{key} {'>=' if direction == 'higher' else '<='} {threshold:g}"


def _meets(value, threshold, direction):
    return value >= threshold if direction == "higher" else value <= threshold


def _quantile(values, q):
    values = sorted(values)
    if not values:
        return None
    k = (len(values) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def _tail(rows, key, direction, attainment, percentiles):
    """The value ``attainment`` of the requests do at least as well as, and its name (p95, p5...)."""
    pct = attainment * 100 if direction == "lower" else (1 - attainment) * 100
    name = f"p{pct:g}"
    values = [r[key] for r in rows if r.get("error") is None and _number(r.get(key)) is not None]
    if values:
        return _quantile(values, pct / 100.0), name
    stats = (percentiles or {}).get(key) or {}
    available = sorted((abs(float(s[1:]) - pct), s) for s in stats if s.startswith("p") and s[1:].isdigit())
    if available:
        return stats[available[0][1]], available[0][1]
    return None, name


def evaluate(metrics, rows, slo, attainment=DEFAULT_ATTAINMENT, goodput_min=None, percentiles=None):
    """Judge one run against the objectives.

    ``metrics`` are the aiperf_results metrics (AIPerf's ``good_request_fraction``, ``goodput_per_s``,
    ``failed_ratio``), ``rows`` the per-request rows (``aiperf_job_report.COLUMNS``; a failed request
    meets no objective). The run meets the objectives when AIPerf's good share reaches ``attainment``,
    the failed share stays within ``error_rate`` and goodput reaches ``goodput_min`` (requests/s).
    """
    slo = normalise_slo(slo)
    if not slo:
        return None
    metrics, rows = metrics or {}, [r for r in rows or [] if isinstance(r, dict)]
    attempted = len(rows)
    objectives = []
    for key, (tag, label, unit, direction) in REQUEST_OBJECTIVES.items():
        if key not in slo:
            continue
        threshold = slo[key]
        met = sum(1 for r in rows if r.get("error") is None and _number(r.get(key)) is not None
                  and _meets(r[key], threshold, direction))
        share = met / attempted if attempted else None
        tail, tail_stat = _tail(rows, key, direction, attainment, percentiles)
        objectives.append({"key": key, "aiperf_tag": tag, "label": label, "unit": unit, "direction": direction,
                           "threshold": threshold, "requests_met": met if attempted else None, "share_met": share,
                           "tail": tail, "tail_stat": tail_stat,
                           "verdict": "missing" if share is None else ("pass" if share >= attainment else "fail")})
    request_keys = [o["key"] for o in objectives]
    good_fraction, source = _number(metrics.get("good_request_fraction")), "aiperf"
    if good_fraction is None and request_keys and attempted:
        # no AIPerf goodput (an older summary): count requests meeting every objective ourselves
        good = sum(1 for r in rows if r.get("error") is None and all(
            _number(r.get(k)) is not None and _meets(r[k], slo[k], REQUEST_OBJECTIVES[k][3]) for k in request_keys))
        good_fraction, source = good / attempted, "requests"
    run_objectives = []
    if "error_rate" in slo:
        measured = _number(metrics.get("failed_ratio"))
        run_objectives.append({"key": "error_rate", "label": RUN_OBJECTIVES["error_rate"][0], "unit": "fraction",
                               "direction": "lower", "threshold": slo["error_rate"], "measured": measured,
                               "verdict": "missing" if measured is None else
                               ("pass" if measured <= slo["error_rate"] else "fail")})
    goodput = _number(metrics.get("goodput_per_s"))
    goodput_min = _number(goodput_min) if goodput_min not in (None, "", 0, 0.0) else None
    checks = []
    if request_keys:
        checks.append(good_fraction is not None and good_fraction >= attainment)
    checks += [o["verdict"] == "pass" for o in run_objectives]
    if goodput_min is not None:
        checks.append(goodput is not None and goodput >= goodput_min)
    failed = [o["key"] for o in objectives if o["verdict"] != "pass"]
    failed += [o["key"] for o in run_objectives if o["verdict"] != "pass"]
    if goodput_min is not None and not (goodput is not None and goodput >= goodput_min):
        failed.append("goodput_min")
    if request_keys and not failed and not checks[0]:
        failed.append("all objectives together")  # each alone is met often enough, not all at once
    return {"objectives": objectives, "run_objectives": run_objectives, "attainment": attainment,
            "good_fraction": good_fraction, "good_fraction_source": source if good_fraction is not None else None,
            "good_requests": _number(metrics.get("good_request_count")), "requests_attempted": attempted or None,
            "goodput_per_s": goodput, "goodput_min_per_s": goodput_min, "met": all(checks) and bool(checks),
            "failed": failed, "slo": slo, "goodput_arg": goodput_arg(slo)}


def _pct(value):
    return "n/a" if value is None else f"{value * 100:.1f}%"


def _num(value):
    return "n/a" if value is None else f"{value:,.2f}"


def describe(evaluation):
    """One line: the good share against the attainment, goodput, then each objective that missed."""
    if not evaluation:
        return ""
    parts = []
    if evaluation["objectives"]:
        parts.append(f"{_pct(evaluation['good_fraction'])} of requests met every objective "
                     f"(needs {evaluation['attainment'] * 100:g}%), goodput {_num(evaluation['goodput_per_s'])} "
                     "requests/s")
    for o in evaluation["objectives"]:
        if o["verdict"] != "pass":
            tail = "" if o["tail"] is None else f", {o['tail_stat']} {_num(o['tail'])} {o['unit']}"
            parts.append(f"{objective_text(o['key'], o['threshold'])} {o['unit']} met by {_pct(o['share_met'])}{tail}")
    for o in evaluation["run_objectives"]:
        if o["verdict"] != "pass":
            measured = "n/a" if o["measured"] is None else f"{o['measured']:.4f}"
            parts.append(f"{objective_text(o['key'], o['threshold'])}: measured {measured}")
    if "goodput_min" in evaluation["failed"]:
        parts.append(f"goodput {_num(evaluation['goodput_per_s'])} requests/s below the minimum "
                     f"{_num(evaluation['goodput_min_per_s'])}")
    return "; ".join(parts)


def recommend(points):
    """The highest concurrency whose run met the objectives, with the evidence.

    ``points``: ``[{concurrency, run_id, slo: evaluate(...), metrics, cost}]``. Returns None without SLOs.
    ``boundary`` is the lowest concurrency above the recommendation that missed them; ``non_monotonic``
    is set when a lower concurrency missed while a higher one met them (noise, or a real dip).
    """
    judged = sorted((p for p in points or [] if isinstance(p, dict) and p.get("slo")),
                    key=lambda p: int(p["concurrency"]))
    if not judged:
        return None
    met = [p for p in judged if p["slo"]["met"]]
    evidence = [{"concurrency": int(p["concurrency"]), "run_id": p.get("run_id"), "met": p["slo"]["met"],
                 "good_fraction": p["slo"]["good_fraction"], "goodput_per_s": p["slo"]["goodput_per_s"],
                 "output_tokens_per_s": (p.get("metrics") or {}).get("output_tokens_per_s"),
                 "failed": p["slo"]["failed"]} for p in judged]
    if not met:
        return {"concurrency": None, "run_id": None, "evidence": evidence, "boundary": judged[0]["concurrency"],
                "non_monotonic": False,
                "reason": f"no concurrency tried ({', '.join(str(p['concurrency']) for p in judged)}) met the "
                          "objectives"}
    best = met[-1]
    above = [p for p in judged if int(p["concurrency"]) > int(best["concurrency"])]
    below_missed = [p for p in judged if int(p["concurrency"]) < int(best["concurrency"]) and not p["slo"]["met"]]
    boundary = int(above[0]["concurrency"]) if above else None
    reason = (f"concurrency {best['concurrency']} is the highest tried that met the objectives"
              + (f"; {boundary} missed them" if boundary else "; no higher concurrency was tried"))
    return {"concurrency": int(best["concurrency"]), "run_id": best.get("run_id"),
            "goodput_per_s": best["slo"]["goodput_per_s"], "good_fraction": best["slo"]["good_fraction"],
            "output_tokens_per_s": (best.get("metrics") or {}).get("output_tokens_per_s"),
            "cost": best.get("cost"), "boundary": boundary, "non_monotonic": bool(below_missed),
            "evidence": evidence, "reason": reason}

# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""A benchmark run's report as text: the printed tables and report.md (pure Python: no Ansible, no third-party
imports). A sweep's or search's report is sweep_report.py; the charts are charts.py
(matplotlib), the HTML pages html.py.

Inputs are what the ``aiperf_results`` module returns (``metrics``, ``failures``, ``verdicts``,
``percentiles``) plus the ``expected:`` block of a target in catalog/targets.yml (may be None, or carry
``comparable: false``), and the SLO, cost, comparison and provenance blocks of ``summary.json``.

    report_rows(metrics, verdicts, expected)                   -> the five headline rows
    table_lines(rows)                                          -> fixed-width text table
    percentile_rows(percentiles)                               -> mean, p50, p90 and p99 (tails) per metric
    printed_lines(rows, percentiles, slo, cost, comparison)    -> what the play prints for a run
    markdown_report(context, rows, metrics, failures, verdicts, details) -> report.md

Everything is deterministic: same inputs, same bytes.
"""

from __future__ import annotations

import math

DASH = "—"

# (key, label, metric, unit, direction); the first row is the request counts
HEADLINE = (
    ("requests", "Requests passing / failing", "requests_passing", "requests", "higher"),
    ("output_tokens_per_s", "Output tokens/s", "output_tokens_per_s", "tokens/s", "higher"),
    ("output_tokens_per_s_per_gpu", "Output tokens/s per GPU", "output_tokens_per_s_per_gpu", "tokens/s/GPU",
     "higher"),
    ("output_tokens_per_s_per_user_p50", "Output tokens/s per user p50", "output_tokens_per_s_per_user_p50",
     "tokens/s/user", "higher"),
    ("ttft_p50_ms", "TTFT p50 (ms)", "ttft_p50_ms", "ms", "lower"),
)
REQUEST_METRICS = ("requests_passing", "requests_failing", "requests_total", "failed_ratio")

VERDICT_WORDS = {"pass": "pass", "fail": "FAIL", "missing": "missing"}
NOT_GATED = "not gated"

# extra measured metrics in report.md: (metric, label, unit)
EXTRA_METRICS = (
    ("itl_p50_ms", "ITL p50", "ms"),
    ("itl_p99_ms", "ITL p99", "ms"),
    ("ttft_p99_ms", "TTFT p99", "ms"),
    ("request_latency_p50_ms", "Request latency p50", "ms"),
    ("request_latency_p99_ms", "Request latency p99", "ms"),
    ("request_throughput_per_s", "Request throughput", "requests/s"),
    ("benchmark_duration_s", "Benchmark duration", "s"),
    ("input_sequence_length_avg", "ISL average", "tokens"),
    ("output_sequence_length_avg", "OSL average", "tokens"),
)



# --------------------------------------------------------------------------- helpers
def as_number(value):
    """A float for ints/floats (not bools, not NaN), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else value


def fmt(value, digits=None):
    """Human number with 2 decimals (3 significant digits below 1, thousands separated); None -> dash."""
    v = as_number(value)
    if v is None:
        return DASH
    if digits is not None:
        return f"{v:,.{digits}f}"
    if v == 0 or abs(v) >= 1:
        return f"{v:,.2f}"
    return f"{v:.3g}"


def fmt_delta(delta):
    v = as_number(delta)
    return DASH if v is None else f"{v:+.1f} %"


def count_text(value):
    v = as_number(value)
    return DASH if v is None else f"{round(v):,}"


def _delta(measured, expected):
    m, e = as_number(measured), as_number(expected)
    if m is None or not e:
        return None
    return (m - e) / abs(e) * 100.0


def _combine(verdict_words):
    """One word for several verdicts: FAIL beats missing beats pass; none -> not gated."""
    if not verdict_words:
        return NOT_GATED
    for word in ("FAIL", "missing"):
        if word in verdict_words:
            return word
    return "pass"


def expected_dict(expected):
    return expected if isinstance(expected, dict) else {}


def comparable(expected):
    """True when ``expected`` holds published figures at the same operating point."""
    return isinstance(expected, dict) and expected.get("comparable", True) is not False and any(
        as_number(v) is not None for k, v in expected.items() if k not in ("gpus", "concurrency", "comparable"))


def md_escape(text):
    """Make text safe inside a Markdown table cell (pipes, newlines)."""
    return str(text).replace("|", "\\|").replace("\r", " ").replace("\n", " ")


# --------------------------------------------------------------------------- rows
def report_rows(metrics, verdicts, expected):
    """The five headline rows, in order: requests passing/failing, tok/s, tok/s/GPU, tok/s/user p50, TTFT p50.

    Each row: ``key, label, metric, unit, direction, measured, expected`` (display strings, expected is a
    dash without published figures), ``measured_value, expected_value`` (floats or None), ``delta_pct``
    (float or None), ``delta`` (display) and ``verdict`` (pass, FAIL, missing or not gated).
    """
    metrics = metrics or {}
    exp = expected_dict(expected)
    by_metric = {}
    for v in verdicts or []:
        if isinstance(v, dict) and v.get("metric"):
            by_metric.setdefault(v["metric"], []).append(v)
    rows = []
    for key, label, metric, unit, direction in HEADLINE:
        if key == "requests":
            words = [VERDICT_WORDS.get(v.get("verdict"), "missing")
                     for m in REQUEST_METRICS for v in by_metric.get(m, [])]
            passing, failing = as_number(metrics.get("requests_passing")), as_number(metrics.get("requests_failing"))
            exp_pass, exp_fail = as_number(exp.get("requests_passing")), as_number(exp.get("requests_failing"))
            measured = DASH if passing is None and failing is None else f"{count_text(passing)} / {count_text(failing)}"
            shown = DASH if exp_pass is None and exp_fail is None else f"{count_text(exp_pass)} / {count_text(exp_fail)}"
            vlist = by_metric.get("requests_passing", [])
            delta = vlist[0].get("delta_pct") if vlist else None
            total = as_number(metrics.get("requests_total"))
            exp_total = as_number(exp.get("requests_total"))
            if exp_total is None and exp_pass is not None:
                exp_total = exp_pass + (exp_fail or 0.0)
            if as_number(delta) is None and total is not None and total == exp_total:
                delta = _delta(passing, exp_pass)  # only meaningful for the same number of requests
            rows.append({"key": key, "label": label, "metric": metric, "unit": unit, "direction": direction,
                         "measured": measured, "expected": shown, "measured_value": passing,
                         "expected_value": exp_pass, "measured_failing": failing, "expected_failing": exp_fail,
                         "delta_pct": as_number(delta), "delta": fmt_delta(delta), "verdict": _combine(words)})
            continue
        vlist = by_metric.get(metric, [])
        value = as_number(metrics.get(metric))
        want = as_number(exp.get(metric))
        if want is None and vlist:
            want = as_number(vlist[0].get("expected"))
        delta = vlist[0].get("delta_pct") if vlist else None
        if as_number(delta) is None:
            delta = _delta(value, want)
        words = [VERDICT_WORDS.get(v.get("verdict"), "missing") for v in vlist]
        rows.append({"key": key, "label": label, "metric": metric, "unit": unit, "direction": direction,
                     "measured": fmt(value), "expected": fmt(want), "measured_value": value,
                     "expected_value": want, "delta_pct": as_number(delta), "delta": fmt_delta(delta),
                     "verdict": _combine(words)})
    return rows


TABLE_HEADER = ("Metric", "Measured", "Expected", "Delta", "Verdict")


def _row_cells(row):
    return (row["label"], row["measured"], row["expected"], row["delta"], row["verdict"])


def text_table(header, body, right=()):
    """Fixed-width table lines; columns whose index is in ``right`` are right-aligned."""
    widths = [max(len(str(r[i])) for r in [header, *body]) for i in range(len(header))]

    def line(cells):
        parts = [str(c).rjust(w) if i in right else str(c).ljust(w)
                 for i, (c, w) in enumerate(zip(cells, widths, strict=True))]
        return "  ".join(parts).rstrip()

    return [line(header), "  ".join("-" * w for w in widths), *(line(r) for r in body)]


def table_lines(rows):
    """The rows as a fixed-width text table (a list of lines, header and rule first)."""
    return text_table(TABLE_HEADER, [_row_cells(r) for r in rows], right=(1, 2, 3))


def markdown_table(header, body, right=()):
    lines = ["| " + " | ".join(md_escape(h) for h in header) + " |",
             "|" + "|".join("---:" if i in right else "---" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(md_escape(c) for c in r) + " |" for r in body]
    return lines


# --------------------------------------------------------------------------- report.md
def gate_status(context):
    """``(gated, reason)``: whether the run is judged against published figures, and why (not).

    ``context["gated"]`` decides when given; otherwise a run is gated when the target's ``status`` is
    ``validated`` and its ``expected`` figures (when ``context`` carries them) exist and are comparable.
    """
    context = context or {}
    status = context.get("status")
    has_expected = "expected" in context
    exp = context.get("expected")
    if isinstance(exp, dict) and exp.get("comparable") is False:
        why_not = ("the published figures were measured at a different operating point "
                   "(`comparable: false`): reported only")
    elif has_expected and not comparable(exp):
        why_not = "no published figures for this target: reported only"
    elif status and status != "validated":
        why_not = f"target status `{status}`: reported only, not gated"
    elif not status:
        why_not = "target status unknown: reported only, not gated"
    else:
        why_not = None
    gated = context.get("gated")
    gated = why_not is None if gated is None else bool(gated)
    if gated:
        return True, f"target status `{status or 'validated'}`: gated against the published figures"
    return False, why_not or "reported only, not gated"


def verdict_line(v):
    metric = v.get("metric")
    measured, want = fmt(v.get("measured")), fmt(v.get("expected"))
    delta = as_number(v.get("delta_pct"))
    word = VERDICT_WORDS.get(v.get("verdict"), "missing")
    extra = f", {delta:+.1f} %" if delta is not None else ""
    tol = as_number(v.get("tolerance"))
    limit = "limit" if v.get("limit") else "expected"
    tol_text = f", tolerance {tol * 100:.0f} %" if tol and not v.get("limit") else ""
    return f"`{metric}`: measured {measured}, {limit} {want} ({word}{extra}{tol_text})"


def shell_block(command):
    """A fenced shell block that survives backticks inside the command."""
    fence = "```"
    while fence in str(command):
        fence += "`"
    return [f"{fence}sh", str(command).rstrip(), fence]


def title_date(context):
    return str(context.get("date") or "").strip() or DASH


def failing_sentences(metrics, failures, all_failed=False):
    """(what failed, what was cut short or None): the failing-requests paragraph of the Markdown and HTML reports.

    A request cut short (``aiperf.cut_short``) is one AIPerf counted as a success whose stream ended before its
    output: a worker lost mid-request that nothing resumed."""
    metrics, failures = metrics or {}, failures or {}
    total = as_number(metrics.get("requests_total"))
    count = as_number(failures.get("count"))
    if count is None:
        count = as_number(metrics.get("requests_failing"))
    ratio = as_number(failures.get("ratio"))
    if ratio is None:
        ratio = as_number(metrics.get("failed_ratio"))
    cut = as_number(failures.get("cut_short"))
    if count:
        share = f" ({ratio * 100:.1f} %)" if ratio is not None else ""
        failed = (f"{count_text(count)} of {count_text(total)} requests failed{share}."
                  + (" Every request failed." if all_failed else ""))
    elif cut:
        failed = "None failed with an error."
    else:
        failed = f"None: all {count_text(total)} requests succeeded." if total is not None else "None."
    cut_short = None
    if cut:
        cut_short = (f"{count_text(cut)} of {count_text(total)} requests were cut short: AIPerf counted them as "
                     "successes, but their stream ended before their output did (no token usage at its end), as "
                     "when the worker serving them is lost and nothing resumes them (request migration off, or no "
                     "other worker to move them to). The error budget counts them as failed.")
    return failed, cut_short


def markdown_report(context, rows, metrics, failures, verdicts, details=None):
    """report.md: title, gate, headline table, percentiles, SLOs and goodput, cost, comparison, failing
    requests, extra metrics, charts, the stack and the AIPerf version/command.

    ``details`` (all optional): ``percentiles``, ``slo`` (``bench_slo.evaluate``), ``cost``
    (``bench_cost.cost``), ``comparison`` (``bench_compare.compare_runs``) or ``comparison_note``,
    ``provenance``, ``charts`` (``[(title, file)]``, default ``chart.svg``), ``html`` (report.html name),
    ``server`` (``prometheus_query.server_figures``, or ``{"error": ...}``).
    """
    context = context or {}
    details = details or {}
    metrics = metrics or {}
    failures = failures or {}
    cluster = context.get("cluster") or DASH
    target = context.get("target") or DASH
    out = [f"# Benchmark report: {target} on {cluster}", ""]
    facts = [("Cluster", cluster), ("Target", f"`{target}`"), ("Run", f"`{context.get('run_id') or DASH}`"),
             ("Date", title_date(context))]
    if context.get("status"):
        facts.append(("Status", context["status"]))
    if context.get("gpus") is not None:
        facts.append(("GPUs", context["gpus"]))
    if context.get("concurrency") is not None:
        facts.append(("Concurrency", context["concurrency"]))
    if context.get("request_count") is not None:
        facts.append(("Requests sent", context["request_count"]))
    out += [" · ".join(f"**{k}**: {v}" for k, v in facts), ""]

    # gate first: the one line a reader looks for
    gated, reason = gate_status(context)
    bad = [v for v in verdicts or [] if isinstance(v, dict) and v.get("verdict") != "pass"]
    passing, failing = as_number(metrics.get("requests_passing")), as_number(metrics.get("requests_failing"))
    all_failed = bool(failing) and not passing
    if details.get("html"):
        out += [f"The same report with its charts as one self-contained page: `{details['html']}`.", ""]
    out += ["## Gate", "", f"This run is **{'gated' if gated else 'reported only'}**: {reason}.", ""]
    if gated:
        if all_failed:
            out.append("**Gate verdict: FAIL**: every request failed.")
        elif not verdicts:
            out.append("**Gate verdict: FAIL**: no expected figures were compared.")
        elif bad:
            out.append(f"**Gate verdict: FAIL**: {len(bad)} of {len(verdicts)} checks did not pass:")
        else:
            out.append(f"**Gate verdict: PASS**: all {len(verdicts)} checks passed.")
    elif bad:
        out.append(f"Not gating, for information: {len(bad)} of {len(verdicts)} comparisons did not pass:")
    elif verdicts:
        out.append(f"Not gating, for information: all {len(verdicts)} comparisons passed.")
    else:
        out.append("No comparison with published figures.")
    if bad:
        out += [""] + [f"- {verdict_line(v)}" for v in bad]
    exp = expected_dict(context.get("expected"))
    differs = [f"{name} {context[key]} (published: {exp[key]})" for key, name in
               (("concurrency", "concurrency"), ("gpus", "GPUs")) if context.get(key) is not None
               and exp.get(key) is not None and as_number(context[key]) != as_number(exp[key])]
    if differs:
        out += ["", "Note: this run's operating point differs from the published one: " + ", ".join(differs) + "."]
    out.append("")

    out += ["## Results", ""]
    out += markdown_table(TABLE_HEADER, [_row_cells(r) for r in rows], right=(1, 2, 3))
    out.append("")
    prows = percentile_rows(details.get("percentiles"))
    if prows:
        out += ["## Percentiles", "", *markdown_table(PERCENTILE_HEADER, [percentile_cells(r) for r in prows],
                                                      right=(1, 2, 3, 4)), "", PERCENTILE_NOTE, ""]
    out += _slo_markdown(details.get("slo"))
    out += _cost_markdown(details.get("cost"))
    out += _comparison_markdown(details.get("comparison"), details.get("comparison_note"))

    out += ["## Failing requests", ""]
    errors = [e for e in failures.get("errors") or [] if isinstance(e, dict)]
    failed, cut_short = failing_sentences(metrics, failures, all_failed)
    out.append(failed)
    if errors and as_number(failures.get("count") if failures.get("count") is not None else failing):
        out += ["", *markdown_table(("Count", "Code", "Type", "Message"),
                                    [(count_text(e.get("count")), e.get("code") if e.get("code") is not None
                                      else DASH, e.get("type") or DASH, e.get("message") or DASH)
                                     for e in errors], right=(0,))]
    if cut_short:
        out += ["", cut_short]
    out.append("")

    extra = [(label, fmt(metrics.get(m)), unit) for m, label, unit in EXTRA_METRICS
             if as_number(metrics.get(m)) is not None]
    if extra:
        out += ["## Other measured metrics", ""]
        out += markdown_table(("Metric", "Value", "Unit"), extra, right=(1,))
        out.append("")
    out += server_markdown(details.get("server"))

    charts = details.get("charts")
    if charts is None:
        chart = context.get("chart", "chart.svg")
        charts = [("Measured versus expected", chart)] if chart else []
    if charts:
        out += ["## Charts", ""]
        for title, name in charts:
            out += [f"![{title}]({name})", "", f"{title}: `{name}`", ""]
    out += _provenance_markdown(details.get("provenance"))

    version = context.get("aiperf_version") or metrics.get("aiperf_version")
    command = context.get("command")
    if version or command:
        out += ["## AIPerf", ""]
        if version:
            schema = metrics.get("schema_version")
            out.append(f"AIPerf version {version}" + (f" (summary schema {schema})" if schema else "") + ".")
        if command:
            out += ["", *shell_block(command)]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


# --------------------------------------------------------------------------- percentiles
# (name, label): the distributions an operator reads beside the mean
PERCENTILE_LABELS = (
    ("ttft_ms", "TTFT (ms)"),
    ("itl_ms", "Inter-token latency (ms)"),
    ("e2e_ms", "End-to-end latency (ms)"),
    ("tokens_per_s_per_user", "Output tokens/s per user"),
)
PERCENTILE_HEADER = ("Metric", "Mean", "p50", "p90", "p99")


def tail_stat(direction, pct):
    """The statistic for "pNN tail": pNN for a latency, p(100-NN) for a per-user speed (slowest users)."""
    return f"p{pct}" if direction != "higher" else f"p{100 - pct}"


def percentile_rows(percentiles):
    """``[{key, label, mean, p50, p90, p99, unit}]`` (floats or None) from ``aiperf.percentile_table``.

    For tokens/s per user the tail is the slow end: its p90 and p99 columns are AIPerf's p10 and p1,
    the speed that 90% and 99% of requests reach at least."""
    rows = []
    for key, label in PERCENTILE_LABELS:
        stats = (percentiles or {}).get(key)
        if not stats:
            continue
        direction = stats.get("direction", "lower")
        rows.append({"key": key, "label": label, "unit": stats.get("unit"), "direction": direction,
                     "mean": as_number(stats.get("avg")), "p50": as_number(stats.get("p50")),
                     "p90": as_number(stats.get(tail_stat(direction, 90))),
                     "p99": as_number(stats.get(tail_stat(direction, 99))),
                     "count": as_number(stats.get("count"))})
    return rows


def percentile_cells(row):
    return (row["label"], fmt(row["mean"]), fmt(row["p50"]), fmt(row["p90"]), fmt(row["p99"]))


PERCENTILE_NOTE = ("p90 and p99 are the tails: for latencies 90% / 99% of requests are at or below them; for "
                   "tokens/s per user 90% / 99% of requests stream at least that fast (AIPerf's p10 / p1).")


# --------------------------------------------------------------------------- SLOs
def percent_text(value):
    v = as_number(value)
    return DASH if v is None else f"{v * 100:.1f} %"


SLO_HEADER = ("Objective", "Threshold", "Requests meeting it", "Tail", "Verdict")


def slo_rows(evaluation):
    """Display cells per objective: per request (share meeting it, the tail at the attainment) and per run."""
    if not evaluation:
        return []
    rows = []
    for o in evaluation.get("objectives") or []:
        op = ">=" if o["direction"] == "higher" else "<="
        tail = DASH if as_number(o.get("tail")) is None else f"{o['tail_stat']} {fmt(o['tail'])}"
        rows.append((f"{o['label']} (`{o['key']}`)", f"{op} {fmt(o['threshold'])} {o['unit']}",
                     percent_text(o.get("share_met")), tail, VERDICT_WORDS.get(o["verdict"], o["verdict"])))
    for o in evaluation.get("run_objectives") or []:
        rows.append((f"{o['label']} (`{o['key']}`)", f"<= {percent_text(o['threshold'])}", DASH,
                     f"measured {percent_text(o.get('measured'))}", VERDICT_WORDS.get(o["verdict"], o["verdict"])))
    return rows


def slo_headline(evaluation):
    """``Goodput 1.98 requests/s; 100.0 % of requests met every objective (needs 95 %): met``."""
    if not evaluation:
        return ""
    word = "MET" if evaluation.get("met") else "MISSED"
    parts = [f"Goodput {fmt(evaluation.get('goodput_per_s'))} requests/s"]
    if evaluation.get("objectives"):
        parts.append(f"{percent_text(evaluation.get('good_fraction'))} of requests met every objective "
                     f"(needs {evaluation['attainment'] * 100:g} %)")
    if evaluation.get("goodput_min_per_s"):
        parts.append(f"minimum goodput {fmt(evaluation['goodput_min_per_s'])} requests/s")
    return "; ".join(parts) + f": objectives {word}"


def _slo_markdown(evaluation):
    if not evaluation:
        return []
    out = ["## Service-level objectives (goodput)", "", f"**{slo_headline(evaluation)}**.", ""]
    if evaluation.get("goodput_arg"):
        out += [f"AIPerf judged every request with `--goodput '{evaluation['goodput_arg']}'`: a request is good when "
                "it meets every objective; goodput is good requests per second and the share counts failed "
                f"requests as not good ({evaluation.get('good_fraction_source') or 'aiperf'}).", ""]
    out += markdown_table(SLO_HEADER, slo_rows(evaluation), right=(2,))
    return [*out, ""]


# --------------------------------------------------------------------------- cost
def money(value):
    v = as_number(value)
    return DASH if v is None else f"${v:,.2f}"


def cost_lines(cost, label="measured throughput"):
    if not cost:
        return []
    return [f"Cost at the {label}: {money(cost.get('per_million_output_tokens'))} per million output tokens, "
            f"{money(cost.get('per_million_total_tokens'))} per million input + output tokens "
            f"({money(cost.get('gpu_hour_cost'))} per GPU-hour x {cost.get('gpus')} GPUs)."]


def server_markdown(server):
    """What the servers reported over the run's window (``prometheus_query.server_figures``), beside AIPerf's
    client-side figures; the reason when Prometheus could not be read; nothing when it was not asked."""
    if not server:
        return []
    out = ["## Server-side figures (Prometheus)", ""]
    if server.get("error"):
        return [*out, f"Not read: {server['error']}", ""]
    target = server.get("target") or {}
    out += [f"What the frontend and the workers reported about themselves over the run's {server.get('window_s')} s "
            "(warm-up included); the tables above are what AIPerf measured as a client.", ""]
    figures = [
        ("Requests per second", fmt(target.get("requests_per_s"))),
        ("Queued requests, mean / peak", f"{fmt(target.get('queue_avg'))} / {fmt(target.get('queue_max'))}"),
    ]
    if "migrations_recovered" in target:
        figures.append(("Requests moved off a lost worker: resumed / not saved",
                        f"{fmt(target.get('migrations_recovered'), 0)} / {fmt(target.get('migrations_failed'), 0)}"))
    out += markdown_table(("Figure", "Value"), figures, right=(1,))
    pods = server.get("pods") or {}
    if pods:
        out += ["", *markdown_table(("Worker pod", "Peak KV-cache usage", "Prefix-cache hit rate"),
                                    [(f"`{pod}`", percent_text(f.get("kv_usage_max")), percent_text(f.get("prefix_hit_rate")))
                                     for pod, f in pods.items()], right=(1, 2))]
    else:
        out += ["", "No worker pod reported KV-cache or prefix-cache figures in the window."]
    return [*out, ""]


def _cost_markdown(cost):
    if not cost:
        return []
    return ["## Cost per million tokens", "",
            *markdown_table(("Tokens", "Throughput (tokens/s)", "$ per million"),
                            [("Output", fmt(cost.get("output_tokens_per_s")), money(cost.get("per_million_output_tokens"))),
                             ("Input + output", fmt(cost.get("total_tokens_per_s")),
                              money(cost.get("per_million_total_tokens")))], right=(1, 2)),
            "", f"`{cost['formula']}`, with {money(cost.get('gpu_hour_cost'))} per GPU-hour "
            f"(`benchmark_gpu_hour_cost`) and {cost.get('gpus')} GPUs: the price is yours, the catalog publishes "
            "none.", ""]


# --------------------------------------------------------------------------- comparison
COMPARE_HEADER = ("Metric", "Earlier", "This run", "Delta", "Verdict")


def comparison_rows(comparison):
    return [(r["label"], fmt(r["previous"]), fmt(r["current"]), fmt_delta(r["delta_pct"]), r["verdict"])
            for r in (comparison or {}).get("rows") or []]


def _comparison_markdown(comparison, note=None):
    if not comparison and not note:
        return []
    out = ["## Compared with an earlier run", ""]
    if not comparison:
        return [*out, note, ""]
    ref = comparison["reference"]
    out += [f"Against `{ref.get('cluster')}/{ref.get('target')}/{ref.get('run_id')}` (concurrency "
            f"{ref.get('concurrency')}, {ref.get('request_count')} requests), tolerance "
            f"{comparison['tolerance'] * 100:g} % (the gate's): **{comparison['verdict']}**.", ""]
    out += markdown_table(COMPARE_HEADER, comparison_rows(comparison), right=(1, 2, 3))
    return [*out, ""]


# --------------------------------------------------------------------------- provenance
def provenance_rows(prov):
    if not prov:
        return []
    trace = prov.get("trace") or {}
    aiperf = prov.get("aiperf") or {}
    match = {True: " (matches the staged trace's expected checksum)", False: " (DIFFERS from the expected "
             f"{trace.get('expected_sha256')})", None: ""}[trace.get("sha256_matches")]
    rows = [("Collection", f"{(prov.get('collection') or {}).get('name')} {(prov.get('collection') or {}).get('version') or DASH}"),
            ("AIPerf", f"{aiperf.get('version') or DASH} (image `{aiperf.get('image') or DASH}`)"),
            ("Images", ", ".join(f"`{i}`" for i in prov.get("images") or []) or DASH),
            ("Command lines (sha256)", f"`{prov.get('command_lines_sha256') or DASH}`"),
            ("Plan (sha256)", f"`{prov.get('plan_sha256') or DASH}`"),
            ("Plan inputs", ", ".join(f"{k}={v}" for k, v in sorted((prov.get("plan_inputs") or {}).items())) or DASH),
            ("Checkpoint", f"`{prov.get('checkpoint') or DASH}` served as `{prov.get('served_model_name') or DASH}`"),
            ("SKU, nodes, GPUs", f"{prov.get('sku') or DASH}, {prov.get('nodes') or DASH}, {prov.get('gpus') or DASH}"),
            ("Trace", f"{trace.get('name') or DASH}"
                      + (f" from {trace['source']}" if trace.get("source") else "")
                      + f": sha256 `{trace.get('sha256') or DASH}`{match}, "
                      f"{trace.get('lines') or DASH} lines; replayed {trace.get('replayed_lines') or DASH} "
                      f"(sha256 `{trace.get('replayed_sha256') or DASH}`)"),
            ("Started / finished (UTC)", f"{prov.get('started') or DASH} / {prov.get('finished') or DASH}")]
    return rows


def _provenance_markdown(prov):
    if not prov:
        return []
    return ["## Stack (reproducibility)", "", *markdown_table(("What", "Value"), provenance_rows(prov)), ""]


# --------------------------------------------------------------------------- printed
def printed_lines(rows, percentiles=None, slo=None, cost=None, comparison=None, comparison_note=None):
    """What the play prints for one run: the headline table, the percentiles, goodput, cost, comparison."""
    out = table_lines(rows)
    prows = percentile_rows(percentiles)
    if prows:
        out += ["", *text_table(PERCENTILE_HEADER, [percentile_cells(r) for r in prows], right=(1, 2, 3, 4))]
    if slo:
        out += ["", slo_headline(slo)]
        for o in slo.get("objectives") or []:
            tail = "" if as_number(o.get("tail")) is None else f", {o['tail_stat']} {fmt(o['tail'])} {o['unit']}"
            out.append(f"  {o['key']} {'>=' if o['direction'] == 'higher' else '<='} {fmt(o['threshold'])} "
                       f"{o['unit']}: met by {percent_text(o.get('share_met'))} of requests{tail}: "
                       f"{VERDICT_WORDS.get(o['verdict'], o['verdict'])}")
        for o in slo.get("run_objectives") or []:
            out.append(f"  {o['key']} <= {percent_text(o['threshold'])}: measured {percent_text(o.get('measured'))}: "
                       f"{VERDICT_WORDS.get(o['verdict'], o['verdict'])}")
    if cost:
        out += ["", *cost_lines(cost)]
    if comparison:
        out += ["", f"Compared with {comparison['reference'].get('run_id')} (tolerance "
                    f"{comparison['tolerance'] * 100:g} %): {comparison['verdict']}"]
        out += text_table(("  Metric", "Earlier", "This run", "Delta", "Verdict"),
                          [(f"  {cells[0]}", *cells[1:]) for cells in comparison_rows(comparison)], right=(1, 2, 3))
    elif comparison_note:
        out += ["", comparison_note]
    return out


# --------------------------------------------------------------------------- sweep

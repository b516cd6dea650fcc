# Copyright: contributors to inferops.dynamo
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark reports: table, Markdown and hand-written SVG charts (pure Python: no Ansible, no third-party imports).

Inputs are what the ``aiperf_results`` module returns (``metrics``, ``failures``, ``verdicts``) plus the
``expected:`` block of a target in catalog/targets.yml (may be None, or carry ``comparable: false``).

    report_rows(metrics, verdicts, expected)                   -> the five headline rows
    table_lines(rows)                                          -> fixed-width text table
    markdown_report(context, rows, metrics, failures, verdicts) -> report.md
    bar_chart_svg(rows, title)                                 -> chart.svg (measured vs expected)
    sweep_svg(points, title, expected=None)                    -> sweep.svg (tok/s/GPU vs tok/s/user)
    sweep_markdown(context, points, expected=None)             -> sweep.md

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

COLOURS = {
    "pass": "#2e7d32",      # green
    "FAIL": "#c62828",      # red
    "other": "#4f6d8f",     # slate blue: not gated / missing
    "expected": "#b0b0b0",  # grey
    "text": "#212121",
    "muted": "#616161",
    "grid": "#e0e0e0",
    "curve": "#1f5fa8",
    "target": "#e65100",    # orange
}
FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"


# --------------------------------------------------------------------------- helpers
def _num(value):
    """A float for ints/floats (not bools, not NaN), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else value


def fmt(value, digits=None):
    """Human number with 2 decimals (3 significant digits below 1, thousands separated); None -> dash."""
    v = _num(value)
    if v is None:
        return DASH
    if digits is not None:
        return f"{v:,.{digits}f}"
    if v == 0 or abs(v) >= 1:
        return f"{v:,.2f}"
    return f"{v:.3g}"


def fmt_tick(value):
    """Axis tick: no decimals for whole numbers."""
    return f"{int(value):,}" if value == int(value) else f"{value:g}"


def fmt_delta(delta):
    v = _num(delta)
    return DASH if v is None else f"{v:+.1f} %"


def _count(value):
    v = _num(value)
    return DASH if v is None else f"{round(v):,}"


def _delta(measured, expected):
    m, e = _num(measured), _num(expected)
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


def _expected_dict(expected):
    return expected if isinstance(expected, dict) else {}


def comparable(expected):
    """True when ``expected`` holds published figures at the same operating point."""
    return isinstance(expected, dict) and expected.get("comparable", True) is not False and any(
        _num(v) is not None for k, v in expected.items() if k not in ("gpus", "concurrency", "comparable"))


def xml_escape(text):
    """Escape text for XML element content and attribute values."""
    return (str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&apos;"))


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
    exp = _expected_dict(expected)
    by_metric = {}
    for v in verdicts or []:
        if isinstance(v, dict) and v.get("metric"):
            by_metric.setdefault(v["metric"], []).append(v)
    rows = []
    for key, label, metric, unit, direction in HEADLINE:
        if key == "requests":
            words = [VERDICT_WORDS.get(v.get("verdict"), "missing")
                     for m in REQUEST_METRICS for v in by_metric.get(m, [])]
            passing, failing = _num(metrics.get("requests_passing")), _num(metrics.get("requests_failing"))
            exp_pass, exp_fail = _num(exp.get("requests_passing")), _num(exp.get("requests_failing"))
            measured = DASH if passing is None and failing is None else f"{_count(passing)} / {_count(failing)}"
            shown = DASH if exp_pass is None and exp_fail is None else f"{_count(exp_pass)} / {_count(exp_fail)}"
            vlist = by_metric.get("requests_passing", [])
            delta = vlist[0].get("delta_pct") if vlist else None
            total = _num(metrics.get("requests_total"))
            exp_total = _num(exp.get("requests_total"))
            if exp_total is None and exp_pass is not None:
                exp_total = exp_pass + (exp_fail or 0.0)
            if _num(delta) is None and total is not None and total == exp_total:
                delta = _delta(passing, exp_pass)  # only meaningful for the same number of requests
            rows.append({"key": key, "label": label, "metric": metric, "unit": unit, "direction": direction,
                         "measured": measured, "expected": shown, "measured_value": passing,
                         "expected_value": exp_pass, "measured_failing": failing, "expected_failing": exp_fail,
                         "delta_pct": _num(delta), "delta": fmt_delta(delta), "verdict": _combine(words)})
            continue
        vlist = by_metric.get(metric, [])
        value = _num(metrics.get(metric))
        want = _num(exp.get(metric))
        if want is None and vlist:
            want = _num(vlist[0].get("expected"))
        delta = vlist[0].get("delta_pct") if vlist else None
        if _num(delta) is None:
            delta = _delta(value, want)
        words = [VERDICT_WORDS.get(v.get("verdict"), "missing") for v in vlist]
        rows.append({"key": key, "label": label, "metric": metric, "unit": unit, "direction": direction,
                     "measured": fmt(value), "expected": fmt(want), "measured_value": value,
                     "expected_value": want, "delta_pct": _num(delta), "delta": fmt_delta(delta),
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


def _verdict_line(v):
    metric = v.get("metric")
    measured, want = fmt(v.get("measured")), fmt(v.get("expected"))
    delta = _num(v.get("delta_pct"))
    word = VERDICT_WORDS.get(v.get("verdict"), "missing")
    extra = f", {delta:+.1f} %" if delta is not None else ""
    tol = _num(v.get("tolerance"))
    limit = "limit" if v.get("limit") else "expected"
    tol_text = f", tolerance {tol * 100:.0f} %" if tol and not v.get("limit") else ""
    return f"`{metric}`: measured {measured}, {limit} {want} ({word}{extra}{tol_text})"


def _code_block(command):
    """A fenced shell block that survives backticks inside the command."""
    fence = "```"
    while fence in str(command):
        fence += "`"
    return [f"{fence}sh", str(command).rstrip(), fence]


def _title_date(context):
    return str(context.get("date") or "").strip() or DASH


def markdown_report(context, rows, metrics, failures, verdicts):
    """report.md: title, headline table, failing requests, gate, extra metrics, chart, AIPerf version/command."""
    context = context or {}
    metrics = metrics or {}
    failures = failures or {}
    cluster = context.get("cluster") or DASH
    target = context.get("target") or DASH
    out = [f"# Benchmark report: {target} on {cluster}", ""]
    facts = [("Cluster", cluster), ("Target", f"`{target}`"), ("Run", f"`{context.get('run_id') or DASH}`"),
             ("Date", _title_date(context))]
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
    passing, failing = _num(metrics.get("requests_passing")), _num(metrics.get("requests_failing"))
    all_failed = bool(failing) and not passing
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
        out += [""] + [f"- {_verdict_line(v)}" for v in bad]
    exp = _expected_dict(context.get("expected"))
    differs = [f"{name} {context[key]} (published: {exp[key]})" for key, name in
               (("concurrency", "concurrency"), ("gpus", "GPUs")) if context.get(key) is not None
               and exp.get(key) is not None and _num(context[key]) != _num(exp[key])]
    if differs:
        out += ["", "Note: this run's operating point differs from the published one: " + ", ".join(differs) + "."]
    out.append("")

    out += ["## Results", ""]
    out += markdown_table(TABLE_HEADER, [_row_cells(r) for r in rows], right=(1, 2, 3))
    out.append("")

    out += ["## Failing requests", ""]
    total = _num(metrics.get("requests_total"))
    count = _num(failures.get("count"))
    if count is None:
        count = failing
    ratio = _num(failures.get("ratio"))
    if ratio is None:
        ratio = _num(metrics.get("failed_ratio"))
    errors = [e for e in failures.get("errors") or [] if isinstance(e, dict)]
    if not count:
        out.append(f"None: all {_count(total)} requests succeeded." if total is not None else "None.")
    else:
        share = f" ({ratio * 100:.1f} %)" if ratio is not None else ""
        out.append(f"{_count(count)} of {_count(total)} requests failed{share}."
                   + (" Every request failed." if all_failed else ""))
        if errors:
            out += ["", *markdown_table(("Count", "Code", "Type", "Message"),
                                        [(_count(e.get("count")), e.get("code") if e.get("code") is not None
                                          else DASH, e.get("type") or DASH, e.get("message") or DASH)
                                         for e in errors], right=(0,))]
    out.append("")

    extra = [(label, fmt(metrics.get(m)), unit) for m, label, unit in EXTRA_METRICS
             if _num(metrics.get(m)) is not None]
    if extra:
        out += ["## Other measured metrics", ""]
        out += markdown_table(("Metric", "Value", "Unit"), extra, right=(1,))
        out.append("")

    chart = context.get("chart", "chart.svg")
    if chart:
        out += ["## Chart", "", f"![Measured versus expected]({chart})", "", f"File: `{chart}`", ""]

    version = context.get("aiperf_version") or metrics.get("aiperf_version")
    command = context.get("command")
    if version or command:
        out += ["## AIPerf", ""]
        if version:
            schema = metrics.get("schema_version")
            out.append(f"AIPerf version {version}" + (f" (summary schema {schema})" if schema else "") + ".")
        if command:
            out += ["", *_code_block(command)]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


# --------------------------------------------------------------------------- SVG helpers
def _t(x, y, text, size=14, anchor="start", weight="normal", fill=None, extra=""):
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" font-weight="{weight}" '
            f'fill="{fill or COLOURS["text"]}"{extra}>{xml_escape(text)}</text>')


def _svg(width, height, title, body):
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="{FONT}" role="img">')
    return "\n".join([head, f"<title>{xml_escape(title)}</title>",
                      f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
                      *body, "</svg>"]) + "\n"


def _bar_colour(verdict):
    return COLOURS.get(verdict, COLOURS["other"])


# --------------------------------------------------------------------------- chart.svg
def bar_chart_svg(rows, title):
    """Measured vs expected, one pair of horizontal bars per performance metric (the four non-request rows).

    Measured bars are green (pass), red (FAIL) or slate blue (not gated / missing); expected bars grey.
    Each metric has its own scale (units differ); values are printed beside the bars.
    """
    perf = [r for r in rows if r.get("key") != "requests"]
    width, left, bar_w = 920, 150, 560
    group_h, bar_h, top = 104, 24, 96
    height = top + group_h * max(len(perf), 1) + 20
    # A long title (target, cluster, run id) shrinks rather than running off the canvas.
    body = [_t(20, 34, title, size=max(12, min(20, int(20 * 72 / max(len(title), 1)))), weight="bold")]
    # legend
    lx, ly = 20, 62
    for colour, text in ((COLOURS["pass"], "measured: pass"), (COLOURS["FAIL"], "measured: FAIL"),
                         (COLOURS["other"], "measured: not gated"), (COLOURS["expected"], "expected (published)")):
        body.append(f'<rect x="{lx}" y="{ly - 12}" width="16" height="16" rx="2" fill="{colour}"/>')
        body.append(_t(lx + 22, ly + 1, text, size=13, fill=COLOURS["muted"]))
        lx += 44 + 8 * len(text)
    if not perf:
        body.append(_t(20, top + 30, "no performance metrics", size=14, fill=COLOURS["muted"]))
    for i, row in enumerate(perf):
        y0 = top + i * group_h
        if i:
            body.append(f'<line x1="20" y1="{y0 - 10}" x2="{width - 20}" y2="{y0 - 10}" '
                        f'stroke="{COLOURS["grid"]}" stroke-width="1"/>')
        better = "lower is better" if row.get("direction") == "lower" else "higher is better"
        body.append(_t(20, y0 + 10, f"{row['label']}: {better}", size=15, weight="bold"))
        verdict = row.get("verdict", NOT_GATED)
        delta = row.get("delta_pct")
        vtext = verdict if delta is None else f"{verdict}  {delta:+.1f} %"
        body.append(_t(width - 20, y0 + 10, vtext, size=15, anchor="end", weight="bold",
                       fill=_bar_colour(verdict) if verdict in ("pass", "FAIL") else COLOURS["muted"]))
        measured, expected = _num(row.get("measured_value")), _num(row.get("expected_value"))
        scale_max = max([v for v in (measured, expected) if v is not None and v > 0] or [1.0]) * 1.02
        for j, (name, value, colour, shown) in enumerate((
                ("measured", measured, _bar_colour(verdict), row.get("measured")),
                ("expected", expected, COLOURS["expected"], row.get("expected")))):
            y = y0 + 22 + j * (bar_h + 8)
            body.append(_t(left - 10, y + bar_h / 2 + 5, name, size=14, anchor="end", fill=COLOURS["muted"]))
            if value is None:
                body.append(f'<rect x="{left}" y="{y}" width="{bar_w}" height="{bar_h}" fill="none" '
                            f'stroke="{COLOURS["grid"]}" stroke-dasharray="4 3"/>')
                body.append(_t(left + 10, y + bar_h / 2 + 5,
                               "not measured" if name == "measured" else "no published figure",
                               size=13, fill=COLOURS["muted"]))
                continue
            w = max(bar_w * max(value, 0.0) / scale_max, 2.0)
            body.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar_h}" rx="2" fill="{colour}">'
                        f"<title>{xml_escape(name)} {xml_escape(shown)} {xml_escape(row.get('unit', ''))}"
                        "</title></rect>")
            body.append(_t(left + w + 8, y + bar_h / 2 + 5, f"{shown} {row.get('unit', '')}", size=14,
                           weight="bold" if name == "measured" else "normal"))
    return _svg(width, height, title, body)


# --------------------------------------------------------------------------- sweep
def _nice_ticks(lo, hi, count=5):
    """Round tick values covering [lo, hi]."""
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    ticks, v = [], start
    while v < hi + step * 0.999:
        ticks.append(round(v, 10))
        v += step
    return ticks


def _point_xy(point, y_metric):
    m = (point or {}).get("metrics") or {}
    return _num(m.get("output_tokens_per_s_per_user_p50")), _num(m.get(y_metric))


def sweep_y_metric(points):
    """Per-GPU throughput when known for any point, else total output tokens/s."""
    if any(_num(((p or {}).get("metrics") or {}).get("output_tokens_per_s_per_gpu")) is not None for p in points):
        return "output_tokens_per_s_per_gpu"
    return "output_tokens_per_s"


def _sorted_points(points):
    return sorted((p for p in points or [] if isinstance(p, dict)),
                  key=lambda p: (_num(p.get("concurrency")) is None, _num(p.get("concurrency")) or 0))


def sweep_svg(points, title, expected=None):
    """Throughput vs interactivity of a concurrency sweep.

    x = output tokens/s per user p50 (interactivity), y = output tokens/s per GPU (total when no GPU count),
    one labelled point per concurrency joined in concurrency order; the expected operating point
    (``expected`` from the catalog) is drawn as an orange diamond when it has both coordinates.
    """
    points = _sorted_points(points)
    y_metric = sweep_y_metric(points)
    exp = _expected_dict(expected)
    exp_x = _num(exp.get("output_tokens_per_s_per_user_p50"))
    exp_y = _num(exp.get(y_metric))
    plotted = [(p, *_point_xy(p, y_metric)) for p in points]
    plotted = [(p, x, y) for p, x, y in plotted if x is not None and y is not None]
    skipped = [p for p in points if all(p is not q for q, _, _ in plotted)]

    width, height = 900, 560
    ml, mr, mt, mb = 96, 40, 92, 78
    pw, ph = width - ml - mr, height - mt - mb
    xs = [x for _, x, _ in plotted] + ([exp_x] if exp_x is not None and exp_y is not None else [])
    ys = [y for _, _, y in plotted] + ([exp_y] if exp_x is not None and exp_y is not None else [])
    body = [_t(20, 34, title, size=20, weight="bold")]
    ylabel = ("Output tokens/s per GPU" if y_metric == "output_tokens_per_s_per_gpu"
              else "Output tokens/s (total)")
    body.append(_t(20, 58, f"{ylabel} versus output tokens/s per user p50, one point per concurrency; "
                   "up and to the right is better", size=13, fill=COLOURS["muted"]))
    if not xs:
        body.append(_t(width / 2, height / 2, "no sweep point has both metrics", size=16, anchor="middle",
                       fill=COLOURS["muted"]))
        return _svg(width, height, title, body)
    xt = _nice_ticks(0.0, max(xs) * 1.08)
    yt = _nice_ticks(0.0, max(ys) * 1.08)
    x_max, y_max = xt[-1], yt[-1]

    def px(x):
        return ml + pw * x / x_max

    def py(y):
        return mt + ph - ph * y / y_max

    for v in xt:
        body.append(f'<line x1="{px(v):.1f}" y1="{mt}" x2="{px(v):.1f}" y2="{mt + ph}" '
                    f'stroke="{COLOURS["grid"]}" stroke-width="1"/>')
        body.append(_t(px(v), mt + ph + 20, fmt_tick(v), size=13, anchor="middle", fill=COLOURS["muted"]))
    for v in yt:
        body.append(f'<line x1="{ml}" y1="{py(v):.1f}" x2="{ml + pw}" y2="{py(v):.1f}" '
                    f'stroke="{COLOURS["grid"]}" stroke-width="1"/>')
        body.append(_t(ml - 8, py(v) + 5, fmt_tick(v), size=13, anchor="end", fill=COLOURS["muted"]))
    body.append(f'<rect x="{ml}" y="{mt}" width="{pw}" height="{ph}" fill="none" stroke="{COLOURS["muted"]}"/>')
    body.append(_t(ml + pw / 2, height - 28, "Output tokens/s per user p50 (interactivity, higher is better)",
                   size=14, anchor="middle"))
    cy = mt + ph / 2
    body.append(_t(24, cy, f"{ylabel} (higher is better)", size=14, anchor="middle",
                   extra=f' transform="rotate(-90 24 {cy:.1f})"'))
    if len(plotted) > 1:
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for _, x, y in plotted)
        body.append(f'<polyline points="{path}" fill="none" stroke="{COLOURS["curve"]}" stroke-width="2.5"/>')
    if exp_x is not None and exp_y is not None:
        ex, ey = px(exp_x), py(exp_y)
        body.append(f'<polygon points="{ex:.1f},{ey - 9:.1f} {ex + 9:.1f},{ey:.1f} {ex:.1f},{ey + 9:.1f} '
                    f'{ex - 9:.1f},{ey:.1f}" fill="{COLOURS["target"]}" stroke="#ffffff" stroke-width="1.5"/>')
        conc = exp.get("concurrency")
        label = "expected" + (f" (c={conc})" if conc is not None else "")
        body.append(_t(ex + 12, ey + 18, label, size=13, weight="bold", fill=COLOURS["target"]))
    for p, x, y in plotted:
        cx, cyy = px(x), py(y)
        body.append(f'<circle cx="{cx:.1f}" cy="{cyy:.1f}" r="5.5" fill="{COLOURS["curve"]}" '
                    f'stroke="#ffffff" stroke-width="1.5"><title>concurrency {xml_escape(p.get("concurrency"))}: '
                    f"{fmt(y)} {ylabel.lower()}, {fmt(x)} tokens/s/user</title></circle>")
        anchor = "end" if cx > ml + pw - 60 else "start"
        body.append(_t(cx + (-9 if anchor == "end" else 9), cyy - 9, f"c={p.get('concurrency')}", size=13,
                       anchor=anchor, weight="bold"))
    # legend, top right: the ideal corner, empty on a real curve
    has_exp = exp_x is not None and exp_y is not None
    lx, ly = ml + pw - 290, mt + 22
    body.append(f'<rect x="{lx - 10}" y="{ly - 16}" width="290" height="{50 if has_exp else 28}" rx="3" '
                f'fill="#ffffff" fill-opacity="0.9" stroke="{COLOURS["grid"]}"/>')
    body.append(f'<circle cx="{lx + 7}" cy="{ly - 5}" r="5.5" fill="{COLOURS["curve"]}"/>')
    body.append(_t(lx + 18, ly, "measured (c = concurrency)", size=13))
    if has_exp:
        body.append(f'<polygon points="{lx + 7},{ly + 9} {lx + 14},{ly + 16} {lx + 7},{ly + 23} {lx},{ly + 16}" '
                    f'fill="{COLOURS["target"]}"/>')
        body.append(_t(lx + 18, ly + 21, "expected operating point (published)", size=13))
    if skipped:
        names = ", ".join(f"c={p.get('concurrency')}" for p in skipped)
        body.append(_t(ml, height - 8, f"not plotted (metrics missing): {names}", size=12, fill=COLOURS["muted"]))
    return _svg(width, height, title, body)


SWEEP_HEADER = ("Concurrency", "tok/s", "tok/s/GPU", "tok/s/user p50", "TTFT p50 (ms)", "Failed")


def sweep_rows(points):
    """Display cells per sweep point (concurrency order), matching SWEEP_HEADER."""
    rows = []
    for p in _sorted_points(points):
        m = p.get("metrics") or {}
        failing, total, ratio = _num(m.get("requests_failing")), _num(m.get("requests_total")), _num(
            m.get("failed_ratio"))
        failed = DASH if failing is None else f"{_count(failing)} / {_count(total)}"
        if failing and ratio is not None:
            failed += f" ({ratio * 100:.1f} %)"
        rows.append((str(p.get("concurrency", DASH)), fmt(m.get("output_tokens_per_s")),
                     fmt(m.get("output_tokens_per_s_per_gpu")), fmt(m.get("output_tokens_per_s_per_user_p50")),
                     fmt(m.get("ttft_p50_ms")), failed))
    return rows


def sweep_markdown(context, points, expected=None):
    """sweep.md: title, one table row per concurrency, the expected operating point, the chart."""
    context = context or {}
    cluster = context.get("cluster") or DASH
    target = context.get("target") or DASH
    out = [f"# Concurrency sweep: {target} on {cluster}", ""]
    facts = [("Cluster", cluster), ("Target", f"`{target}`"), ("Run", f"`{context.get('run_id') or DASH}`"),
             ("Date", _title_date(context))]
    if context.get("gpus") is not None:
        facts.append(("GPUs", context["gpus"]))
    out += [" · ".join(f"**{k}**: {v}" for k, v in facts), ""]
    body = sweep_rows(points)
    exp = _expected_dict(expected)
    if comparable(exp) or (exp and any(_num(v) is not None for v in exp.values())):
        body.append((f"expected (c={exp.get('concurrency', DASH)})", fmt(exp.get("output_tokens_per_s")),
                     fmt(exp.get("output_tokens_per_s_per_gpu")), fmt(exp.get("output_tokens_per_s_per_user_p50")),
                     fmt(exp.get("ttft_p50_ms")),
                     f"{_count(exp.get('requests_failing'))} / {_count(exp.get('requests_total'))}"
                     if _num(exp.get("requests_failing")) is not None else DASH))
    out += markdown_table(SWEEP_HEADER, body, right=(1, 2, 3, 4))
    out.append("")
    if exp and exp.get("comparable") is False:
        out += ["The published figures were measured at a different operating point (`comparable: false`).", ""]
    chart = context.get("chart", "sweep.svg")
    if chart:
        out += [f"![Throughput versus interactivity]({chart})", "", f"File: `{chart}`", ""]
    if context.get("aiperf_version"):
        out += [f"AIPerf version {context['aiperf_version']}.", ""]
    if context.get("command"):
        out += [*_code_block(context["command"]), ""]
    return "\n".join(out).rstrip() + "\n"

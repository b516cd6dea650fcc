# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""A sweep's or search's report as text: one row per concurrency, the recommended operating point, and
sweep.md (pure Python). The row helpers and formatting are the run report's (report.py).

    sweep_rows(points)                                 -> one row per probed concurrency
    recommendation_lines(recommendation, search)       -> the operating point, in words
    sweep_markdown(context, points, expected, details) -> sweep.md
"""

from __future__ import annotations

from ansible_collections.inferops.dynamo.plugins.module_utils.bench.report import (
    DASH,
    as_number,
    comparable,
    cost_lines,
    count_text,
    expected_dict,
    fmt,
    markdown_table,
    money,
    percent_text,
    shell_block,
    title_date,
)


def sweep_y_metric(points):
    """Per-GPU throughput when known for any point, else total output tokens/s."""
    if any(as_number(((p or {}).get("metrics") or {}).get("output_tokens_per_s_per_gpu")) is not None for p in points):
        return "output_tokens_per_s_per_gpu"
    return "output_tokens_per_s"


def _sorted_points(points):
    return sorted((p for p in points or [] if isinstance(p, dict)),
                  key=lambda p: (as_number(p.get("concurrency")) is None, as_number(p.get("concurrency")) or 0))


SWEEP_HEADER = ("Concurrency", "tok/s", "tok/s/GPU", "tok/s/user p50", "TTFT p50 (ms)", "Failed")
SWEEP_SLO_HEADER = ("Good share", "Goodput (req/s)", "Objectives")
SWEEP_COST_HEADER = ("$/M output",)


def sweep_header(points):
    """SWEEP_HEADER, plus the SLO columns when any point was judged and the cost column when priced."""
    header = SWEEP_HEADER
    if any(p.get("slo") for p in points or [] if isinstance(p, dict)):
        header += SWEEP_SLO_HEADER
    if any(p.get("cost") for p in points or [] if isinstance(p, dict)):
        header += SWEEP_COST_HEADER
    return header


def sweep_rows(points):
    """Display cells per sweep point (concurrency order), matching ``sweep_header(points)``."""
    header = sweep_header(points)
    rows = []
    for p in _sorted_points(points):
        m = p.get("metrics") or {}
        failing, total, ratio = as_number(m.get("requests_failing")), as_number(m.get("requests_total")), as_number(
            m.get("failed_ratio"))
        failed = DASH if failing is None else f"{count_text(failing)} / {count_text(total)}"
        if failing and ratio is not None:
            failed += f" ({ratio * 100:.1f} %)"
        row = (str(p.get("concurrency", DASH)), fmt(m.get("output_tokens_per_s")),
               fmt(m.get("output_tokens_per_s_per_gpu")), fmt(m.get("output_tokens_per_s_per_user_p50")),
               fmt(m.get("ttft_p50_ms")), failed)
        if SWEEP_SLO_HEADER[0] in header:
            slo = p.get("slo") or {}
            row += (percent_text(slo.get("good_fraction")), fmt(slo.get("goodput_per_s")),
                    DASH if not slo else ("met" if slo.get("met") else "missed"))
        if SWEEP_COST_HEADER[0] in header:
            row += (money((p.get("cost") or {}).get("per_million_output_tokens")),)
        rows.append(row)
    return rows


def recommendation_lines(recommendation, search=None):
    """The operating point: the highest concurrency meeting the objectives, its goodput, cost, evidence."""
    if not recommendation:
        return []
    rec = recommendation
    if rec.get("concurrency") is None:
        out = [f"**No recommendation**: {rec['reason']}."]
    else:
        out = [f"**Recommended concurrency: {rec['concurrency']}** (run `{rec.get('run_id')}`): goodput "
               f"{fmt(rec.get('goodput_per_s'))} requests/s, {percent_text(rec.get('good_fraction'))} of requests meeting "
               f"every objective, {fmt(rec.get('output_tokens_per_s'))} output tokens/s. {rec['reason'][0].upper()}"
               f"{rec['reason'][1:]}."]
        out += [f"{line}" for line in cost_lines(rec.get("cost"), "recommended point")]
    if rec.get("non_monotonic"):
        out.append("Note: a lower concurrency missed the objectives while a higher one met them; rerun the "
                   "lower points before trusting the boundary.")
    if search:
        span = (", ".join(str(c) for c in search["candidates"]) if search.get("candidates")
                else "{}..{}".format(*search.get("range") or (DASH, DASH)))
        probes = ", ".join(f"{p['concurrency']} ({'met' if p['met'] else 'missed'})" for p in search.get("probes") or [])
        out += ["", f"Search ({search.get('method')}): {search.get('runs')} of at most {search.get('max_runs')} "
                    f"runs over {span}, stopped: {search.get('reason')}. Probes in order: {probes or DASH}. "
                    f"Bracket: highest met {search.get('feasible_max') or DASH}, lowest missed "
                    f"{search.get('infeasible_min') or DASH}."]
    return out


def sweep_markdown(context, points, expected=None, details=None):
    """sweep.md: title, one table row per concurrency, the expected operating point, the recommendation
    (with ``details``: ``recommendation``, ``search``, ``slo``, ``charts``, ``html``), the charts."""
    context = context or {}
    details = details or {}
    cluster = context.get("cluster") or DASH
    target = context.get("target") or DASH
    kind = "Concurrency search" if details.get("search") else "Concurrency sweep"
    out = [f"# {kind}: {target} on {cluster}", ""]
    facts = [("Cluster", cluster), ("Target", f"`{target}`"), ("Run", f"`{context.get('run_id') or DASH}`"),
             ("Date", title_date(context))]
    if context.get("gpus") is not None:
        facts.append(("GPUs", context["gpus"]))
    out += [" · ".join(f"**{k}**: {v}" for k, v in facts), ""]
    if details.get("html"):
        out += [f"The same report with its charts as one self-contained page: `{details['html']}`.", ""]
    slo = details.get("slo")
    if slo:
        objectives = ", ".join(f"`{k} {'>=' if k == 'tokens_per_s_per_user' else '<='} {v:g}`"
                               for k, v in slo.items())
        out += [f"Objectives: {objectives}; a run meets them when at least "
                f"{details.get('attainment', 0.95) * 100:g} % of its requests meet every one (AIPerf goodput).", ""]
    out += recommendation_lines(details.get("recommendation"), details.get("search"))
    if details.get("recommendation"):
        out.append("")
    header = sweep_header(points)
    body = sweep_rows(points)
    exp = expected_dict(expected)
    if comparable(exp) or (exp and any(as_number(v) is not None for v in exp.values())):
        row = (f"expected (c={exp.get('concurrency', DASH)})", fmt(exp.get("output_tokens_per_s")),
               fmt(exp.get("output_tokens_per_s_per_gpu")), fmt(exp.get("output_tokens_per_s_per_user_p50")),
               fmt(exp.get("ttft_p50_ms")),
               f"{count_text(exp.get('requests_failing'))} / {count_text(exp.get('requests_total'))}"
               if as_number(exp.get("requests_failing")) is not None else DASH)
        body.append(row + (DASH,) * (len(header) - len(row)))
    out += markdown_table(header, body, right=(1, 2, 3, 4))
    out.append("")
    if exp and exp.get("comparable") is False:
        out += ["The published figures were measured at a different operating point (`comparable: false`).", ""]
    charts = details.get("charts")
    if charts is None:
        chart = context.get("chart", "sweep.svg")
        charts = [("Throughput versus interactivity", chart)] if chart else []
    for title, name in charts:
        out += [f"![{title}]({name})", "", f"{title}: `{name}`", ""]
    if context.get("aiperf_version"):
        out += [f"AIPerf version {context['aiperf_version']}.", ""]
    if context.get("command"):
        out += [*shell_block(context["command"]), ""]
    return "\n".join(out).rstrip() + "\n"

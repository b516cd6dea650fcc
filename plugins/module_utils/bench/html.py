# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Self-contained HTML pages of the benchmark results: a run, a sweep or search, the index of all runs.

One file each, nothing fetched: the styles are inline and the charts are base64 PNG ``data:`` images, so a
page opens the same from a laptop, an artifact store or an e-mail. The tables come from the same row
builders as report.md (``bench_report``); Jinja2 (autoescaping) renders them (controller side)::

    run_html(summary, charts)      -> report.html
    sweep_html(sweep, charts)      -> sweep.html
    index_html(scanned)            -> results/index.html
"""

from __future__ import annotations

import base64

from jinja2 import Environment

from ansible_collections.inferops.dynamo.plugins.module_utils.bench import compare as bench_compare
from ansible_collections.inferops.dynamo.plugins.module_utils.bench import index as bench_index
from ansible_collections.inferops.dynamo.plugins.module_utils.bench import report as br
from ansible_collections.inferops.dynamo.plugins.module_utils.bench import slo as bench_slo
from ansible_collections.inferops.dynamo.plugins.module_utils.bench import sweep_report

STYLE = """
body{font-family:"DejaVu Sans",Helvetica,Arial,sans-serif;margin:24px auto;max-width:1180px;color:#212121;
line-height:1.4;padding:0 16px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #e0e0e0}
.facts{color:#616161;margin-bottom:12px}.facts b{color:#212121}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:12px 0}
.card{border:1px solid #e0e0e0;border-radius:6px;padding:10px 14px;min-width:150px}
.card .label{font-size:12px;color:#616161}.card .value{font-size:22px;font-weight:bold}
.verdict{display:inline-block;padding:2px 8px;border-radius:4px;font-weight:bold;color:#fff;background:#4f6d8f}
.verdict.pass,.verdict.PASS,.verdict.met,.verdict.same,.verdict.improvement{background:#2e7d32}
.verdict.FAIL,.verdict.fail,.verdict.missed,.verdict.regression{background:#c62828}
table{border-collapse:collapse;margin:8px 0;font-size:14px}
th,td{border:1px solid #e0e0e0;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f5f5f5}td.num{text-align:right;font-variant-numeric:tabular-nums}
figure{margin:12px 0}figure img{max-width:100%;border:1px solid #eeeeee}
figcaption{color:#616161;font-size:13px}code,pre{font-family:"DejaVu Sans Mono",monospace;font-size:12px}
pre{background:#f5f5f5;padding:8px;overflow-x:auto;white-space:pre-wrap}.note{color:#616161;font-size:13px}
"""

_MACROS = """
{%- macro table(header, rows, right=()) -%}
<table><thead><tr>{% for h in header %}<th>{{ h }}</th>{% endfor %}</tr></thead><tbody>
{%- for row in rows %}<tr>{% for c in row %}<td{% if loop.index0 in right %} class="num"{% endif %}>{{ c }}</td>
{%- endfor %}</tr>{% endfor %}</tbody></table>
{%- endmacro -%}
{%- macro verdict(word) -%}<span class="verdict {{ word }}">{{ word }}</span>{%- endmacro -%}
{%- macro figures(charts) -%}
{%- for c in charts %}<figure><img alt="{{ c.title }}" src="data:image/png;base64,{{ c.png }}">
<figcaption>{{ c.title }} (also <code>{{ c.file }}</code>)</figcaption></figure>{% endfor -%}
{%- endmacro -%}
"""

RUN = _MACROS + """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{ title }}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>{{ style }}</style></head><body>
<h1>{{ title }}</h1>
<div class="facts">{% for k, v in facts %}<b>{{ k }}</b>: {{ v }}{% if not loop.last %} &middot; {% endif %}{% endfor %}</div>
<div class="cards">{% for c in cards %}<div class="card" data-metric="{{ c.key }}"><div class="label">{{ c.label }}</div>
<div class="value">{{ c.value }}</div></div>{% endfor %}</div>
<h2>Verdicts</h2><table><tbody>
<tr><th>Published figures</th><td>{{ verdict(gate_word) }} {{ gate_reason }}</td></tr>
{%- if slo %}<tr><th>Objectives (goodput)</th><td>{{ verdict('met' if slo.met else 'missed') }} {{ slo_headline }}</td></tr>{% endif %}
{%- if comparison %}<tr><th>Against an earlier run</th><td>{{ verdict(comparison.verdict) }} {{ comparison_line }}</td></tr>
{%- elif comparison_note %}<tr><th>Against an earlier run</th><td>{{ comparison_note }}</td></tr>{% endif %}
</tbody></table>
{%- if failed_checks %}<ul>{% for line in failed_checks %}<li>{{ line }}</li>{% endfor %}</ul>{% endif %}
<h2>Results</h2>{{ table(result_header, result_rows, (1, 2, 3)) }}
{%- if percentile_rows %}<h2>Percentiles</h2>{{ table(percentile_header, percentile_rows, (1, 2, 3, 4)) }}
<p class="note">{{ percentile_note }}</p>{% endif %}
{%- if slo %}<h2>Service-level objectives (goodput)</h2><p>{{ slo_headline }}.</p>
{%- if slo.goodput_arg %}<p class="note">AIPerf judged every request with <code>--goodput '{{ slo.goodput_arg }}'</code>;
failed requests count as not good.</p>{% endif %}{{ table(slo_header, slo_rows, (2,)) }}{% endif %}
{%- if cost %}<h2>Cost per million tokens</h2>{{ table(('Tokens', 'Throughput (tokens/s)', '$ per million'), cost_rows, (1, 2)) }}
<p class="note"><code>{{ cost.formula }}</code>, with {{ cost_price }} per GPU-hour and {{ cost.gpus }} GPUs
(<code>benchmark_gpu_hour_cost</code>: your price; the catalog publishes none).</p>{% endif %}
{%- if comparison %}<h2>Compared with an earlier run</h2><p>{{ comparison_line }}</p>
{{ table(compare_header, compare_rows, (1, 2, 3)) }}{% endif %}
<h2>Charts</h2>{{ figures(charts) }}
<h2>Failing requests</h2><p>{{ failing_line }}</p>{% if error_rows %}{{ table(('Count', 'Code', 'Type', 'Message'), error_rows, (0,)) }}{% endif %}
{%- if provenance_rows %}<h2>Stack (reproducibility)</h2>{{ table(('What', 'Value'), provenance_rows) }}{% endif %}
{%- if command %}<h2>AIPerf</h2><p>{{ aiperf_line }}</p><pre>{{ command }}</pre>{% endif %}
<p class="note">Written by inferops.dynamo; summary.json has every figure (layout: docs/benchmark-results.md).</p>
</body></html>
"""

SWEEP = _MACROS + """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{ title }}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>{{ style }}</style></head><body>
<h1>{{ title }}</h1>
<div class="facts">{% for k, v in facts %}<b>{{ k }}</b>: {{ v }}{% if not loop.last %} &middot; {% endif %}{% endfor %}</div>
{%- if objectives %}<p>{{ objectives }}</p>{% endif %}
{%- if recommendation %}<div class="cards"><div class="card" data-metric="recommended_concurrency">
<div class="label">Recommended concurrency</div><div class="value">{{ recommendation.concurrency or 'none' }}</div></div>
<div class="card" data-metric="goodput_per_s"><div class="label">Goodput there (requests/s)</div>
<div class="value">{{ rec_goodput }}</div></div>{% if rec_cost %}<div class="card" data-metric="cost">
<div class="label">$ per million output tokens there</div><div class="value">{{ rec_cost }}</div></div>{% endif %}</div>
{% for line in recommendation_lines %}<p>{{ line }}</p>{% endfor %}{% endif %}
<h2>Points</h2>{{ table(header, rows, (1, 2, 3, 4)) }}
<h2>Charts</h2>{{ figures(charts) }}
<p class="note">Each point's own report: {% for p in point_links %}<a href="{{ p.href }}">{{ p.name }}</a>{% if not loop.last %}, {% endif %}{% endfor %}.</p>
</body></html>
"""

INDEX = _MACROS + """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Benchmark runs</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>{{ style }}</style></head><body>
<h1>Benchmark runs</h1>
<p class="facts">{{ runs|length }} run(s) and {{ sweeps|length }} sweep(s) under this directory, newest first.</p>
<table><thead><tr>{% for h in header %}<th>{{ h }}</th>{% endfor %}</tr></thead><tbody>
{%- for r in runs %}<tr>{% for k in keys %}<td{% if loop.index0 >= 4 and loop.index0 <= 11 %} class="num"{% endif %}>
{%- if k == 'run_id' %}<a href="{{ r.report_html }}">{{ r[k] }}</a>{% elif k in ('gate', 'slo', 'comparison') and r[k] != '\u2014' %}{{ verdict(r[k]) }}{% else %}{{ r[k] }}{% endif %}</td>
{%- endfor %}</tr>{% endfor %}</tbody></table>
{%- if sweeps %}<h2>Sweeps and searches</h2><table><thead><tr>{% for h in sweep_header %}<th>{{ h }}</th>{% endfor %}</tr></thead><tbody>
{%- for r in sweeps %}<tr>{% for k in sweep_keys %}<td>{% if k == 'run_id' %}<a href="{{ r.report_html }}">{{ r[k] }}</a>{% else %}{{ r[k] }}{% endif %}</td>
{%- endfor %}</tr>{% endfor %}</tbody></table>{% endif %}
</body></html>
"""

_ENV = Environment(autoescape=True, trim_blocks=False, lstrip_blocks=False, keep_trailing_newline=True)


def _png(data):
    return base64.b64encode(data).decode("ascii")


def _charts(charts):
    """``[(title, file, png bytes)]`` -> template entries."""
    return [{"title": title, "file": name, "png": _png(png)} for title, name, png in charts or [] if png]


def _gate_word(summary):
    gate = summary.get("gate") or {}
    if not gate.get("gated"):
        return "reported"
    return "pass" if gate.get("passed") else "FAIL"


def run_html(summary, charts):
    """report.html for one run's ``summary.json`` dict; ``charts`` as ``[(title, file, png bytes)]``."""
    ctx, metrics = summary.get("context") or {}, summary.get("metrics") or {}
    slo, cost, comparison = summary.get("slo"), summary.get("cost"), summary.get("comparison")
    rows = summary.get("rows") or []
    title = f"Benchmark report: {ctx.get('target') or br.DASH} on {ctx.get('cluster') or br.DASH}"
    facts = [("Run", ctx.get("run_id") or br.DASH), ("Date", ctx.get("date") or br.DASH),
             ("Status", ctx.get("status") or br.DASH), ("GPUs", ctx.get("gpus", br.DASH)),
             ("Concurrency", ctx.get("concurrency", br.DASH)), ("Requests sent", ctx.get("request_count", br.DASH))]
    cards = [{"key": r["key"], "label": r["label"], "value": r["measured"]} for r in rows]
    if metrics.get("goodput_per_s") is not None:
        cards.append({"key": "goodput_per_s", "label": "Goodput (requests/s)", "value": br.fmt(metrics["goodput_per_s"])})
    if cost and cost.get("per_million_output_tokens") is not None:
        cards.append({"key": "cost_per_million_output_tokens", "label": "$ per million output tokens",
                      "value": f"${cost['per_million_output_tokens']:,.2f}"})
    failures = summary.get("failures") or {}
    errors = [e for e in failures.get("errors") or [] if isinstance(e, dict)]
    failing_line = " ".join(t for t in br.failing_sentences(metrics, failures) if t)
    failed_checks = [br.verdict_line(v).replace("`", "") for v in summary.get("verdicts") or []
                     if isinstance(v, dict) and v.get("verdict") != "pass"]
    if slo and not slo.get("met"):
        failed_checks.append("Objectives missed: " + bench_slo.describe(slo))
    version = (summary.get("provenance") or {}).get("aiperf", {}).get("version") or metrics.get("aiperf_version")
    return _ENV.from_string(RUN).render(
        style=STYLE, title=title, facts=facts, cards=cards, gate_word=_gate_word(summary),
        gate_reason=(summary.get("gate") or {}).get("reason", ""), slo=slo,
        slo_headline=br.slo_headline(slo), comparison=comparison,
        comparison_line=bench_compare.describe(comparison), comparison_note=summary.get("comparison_note"),
        failed_checks=failed_checks, result_header=br.TABLE_HEADER,
        result_rows=[(r["label"], r["measured"], r["expected"], r["delta"], r["verdict"]) for r in rows],
        percentile_header=br.PERCENTILE_HEADER,
        percentile_rows=[br.percentile_cells(r) for r in br.percentile_rows(summary.get("percentiles"))],
        percentile_note=br.PERCENTILE_NOTE, slo_header=br.SLO_HEADER,
        slo_rows=[tuple(c.replace("`", "") for c in row) for row in br.slo_rows(slo)], cost=cost,
        cost_price=br.money((cost or {}).get("gpu_hour_cost")),
        cost_rows=[("Output", br.fmt((cost or {}).get("output_tokens_per_s")),
                    br.money((cost or {}).get("per_million_output_tokens"))),
                   ("Input + output", br.fmt((cost or {}).get("total_tokens_per_s")),
                    br.money((cost or {}).get("per_million_total_tokens")))],
        compare_header=br.COMPARE_HEADER, compare_rows=br.comparison_rows(comparison), charts=_charts(charts),
        failing_line=failing_line,
        error_rows=[(br.fmt(e.get("count"), 0), e.get("code") if e.get("code") is not None else br.DASH,
                     e.get("type") or br.DASH, e.get("message") or br.DASH) for e in errors],
        provenance_rows=[(k, v.replace("`", "")) for k, v in br.provenance_rows(summary.get("provenance"))],
        command=ctx.get("command") or ((summary.get("provenance") or {}).get("aiperf") or {}).get("command"),
        aiperf_line=f"AIPerf version {version or br.DASH}.")


def sweep_html(sweep, charts):
    """sweep.html for a ``sweep.json`` dict."""
    ctx, points = sweep.get("context") or {}, sweep.get("points") or []
    rec = sweep.get("recommendation")
    kind = "Concurrency search" if sweep.get("search") else "Concurrency sweep"
    slo = sweep.get("slo") or {}
    objectives = ", ".join(f"{k} {'>=' if k == 'tokens_per_s_per_user' else '<='} {v:g}" for k, v in slo.items())
    if objectives:
        objectives = (f"Objectives: {objectives}; a run meets them when at least "
                      f"{sweep.get('attainment', 0.95) * 100:g}% of its requests meet every one (AIPerf goodput).")
    rec_cost = ((rec or {}).get("cost") or {}).get("per_million_output_tokens")
    return _ENV.from_string(SWEEP).render(
        style=STYLE, title=f"{kind}: {ctx.get('target') or br.DASH} on {ctx.get('cluster') or br.DASH}",
        facts=[("Run", ctx.get("run_id") or br.DASH), ("Date", ctx.get("date") or br.DASH),
               ("GPUs", ctx.get("gpus", br.DASH))],
        objectives=objectives, recommendation=rec, rec_goodput=br.fmt((rec or {}).get("goodput_per_s")),
        rec_cost=None if rec_cost is None else f"${rec_cost:,.2f}",
        recommendation_lines=[line.replace("**", "").replace("`", "")
                              for line in sweep_report.recommendation_lines(rec, sweep.get("search")) if line],
        header=sweep_report.sweep_header(points), rows=sweep_report.sweep_rows(points), charts=_charts(charts),
        point_links=[{"href": f"../{p['run_id']}/report.html", "name": f"c={p.get('concurrency')} ({p['run_id']})"}
                     for p in points if p.get("run_id")])


def index_html(scanned):
    """results/index.html: every run (newest first) with its headline figures and verdicts, then sweeps."""
    return _ENV.from_string(INDEX).render(
        style=STYLE, runs=[bench_index.run_row(r) for r in scanned["runs"]],
        sweeps=[bench_index.sweep_row(s) for s in scanned["sweeps"]], header=bench_index.INDEX_HEADER,
        keys=bench_index.INDEX_KEYS, sweep_header=bench_index.SWEEP_HEADER, sweep_keys=bench_index.SWEEP_KEYS)

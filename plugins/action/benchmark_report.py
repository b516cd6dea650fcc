# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Action plugin: write a benchmark run's (or a sweep's, or the index's) report files on the controller."""

from __future__ import annotations

import datetime
import json
import os

from ansible.plugins.action import ActionBase

from ansible_collections.inferops.dynamo.plugins.module_utils import report_files
from ansible_collections.inferops.dynamo.plugins.module_utils.bench import aiperf, job_report, sweep_report
from ansible_collections.inferops.dynamo.plugins.module_utils.bench import charts as bench_charts
from ansible_collections.inferops.dynamo.plugins.module_utils.bench import compare as bench_compare
from ansible_collections.inferops.dynamo.plugins.module_utils.bench import cost as bench_cost
from ansible_collections.inferops.dynamo.plugins.module_utils.bench import html as bench_html
from ansible_collections.inferops.dynamo.plugins.module_utils.bench import index as bench_index
from ansible_collections.inferops.dynamo.plugins.module_utils.bench import provenance as bench_provenance
from ansible_collections.inferops.dynamo.plugins.module_utils.bench import report as br
from ansible_collections.inferops.dynamo.plugins.module_utils.bench import slo as bench_slo

ARGUMENT_SPEC = {
    "dest": {"type": "path", "required": True},
    "mode": {"type": "str", "default": "run", "choices": ["run", "sweep", "index"]},
    "context": {"type": "dict", "default": {}},
    "metrics": {"type": "dict"},
    "failures": {"type": "dict"},
    "verdicts": {"type": "list", "elements": "dict", "default": []},
    "expected": {"type": "dict"},
    "summary_raw": {"type": "dict"},
    "points": {"type": "list", "elements": "dict", "default": []},
    "percentiles": {"type": "dict"},
    "requests": {"type": "list", "elements": "dict", "default": []},
    "run_info": {"type": "dict"},
    "server": {"type": "dict"},
    "slo": {"type": "dict", "default": {}},
    "slo_attainment": {"type": "float", "default": bench_slo.DEFAULT_ATTAINMENT},
    "goodput_min": {"type": "float"},
    "gpu_hour_cost": {"type": "raw"},
    "compare": {"type": "str", "default": ""},
    "tolerance": {"type": "float", "default": 0.10},
    "results_root": {"type": "path"},
    "plan": {"type": "dict"},
    "plan_inputs": {"type": "dict"},
    "aiperf_image": {"type": "str"},
    "expected_trace_sha256": {"type": "str"},
    "trace_source": {"type": "str"},
    "search": {"type": "dict"},
}

SUMMARY_SCHEMA = "inferops.dynamo/benchmark-summary"
SUMMARY_SCHEMA_VERSION = 2
RUN_FILES = ("profile_export_aiperf.json", "summary.json", "report.md", "report.html", "chart.svg", "cdf.svg",
             "requests.csv")
SWEEP_FILES = ("sweep.json", "sweep.md", "sweep.html", "sweep.svg", "sweep-cdf.svg")
COLLECTION_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _plain(value):
    """Ansible's tagged values as plain JSON types (so the files and the result stay serialisable)."""
    return json.loads(json.dumps(value, default=str))


def _json_text(value):
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str) + "\n"


def _run_date(context, summary_raw, points=()):
    """The run's date: context.date, else the AIPerf start time, else today (UTC)."""
    if context.get("date"):
        return str(context["date"])
    raws = [summary_raw] + [p.get("summary_raw") for p in points if isinstance(p, dict)]
    for raw in raws:
        start = (raw or {}).get("start_time") if isinstance(raw, dict) else None
        if isinstance(start, str) and len(start) >= 10:
            return start[:10]
    return datetime.datetime.now(datetime.UTC).date().isoformat()


def _title(ctx, what):
    title = f"{ctx.get('target') or 'benchmark'} on {ctx.get('cluster') or 'cluster'}: {what}"
    return title + (f" (run {ctx['run_id']})" if ctx.get("run_id") else "")


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        result["changed"] = False
        dest = args["dest"]
        if not os.path.isabs(dest):
            dest = self._loader.path_dwim(dest)
        args = {k: _plain(v) if isinstance(v, (dict, list)) else v for k, v in args.items()}
        context = dict(args["context"] or {})
        context["date"] = _run_date(context, args["summary_raw"], args["points"])
        for key in ("cluster", "target", "run_id"):
            context.setdefault(key, None)
        root = args["results_root"] or os.path.dirname(os.path.dirname(os.path.dirname(dest)))
        try:
            slo = bench_slo.normalise_slo(args["slo"])
            price = bench_cost.check_price(args["gpu_hour_cost"])
        except (bench_slo.SLOError, bench_cost.CostError) as exc:
            result.update(failed=True, msg=f"benchmark_report: {exc}")
            return result

        if args["mode"] == "run":
            if args["metrics"] is None:
                result.update(failed=True, msg="benchmark_report: mode=run needs metrics (the aiperf_results "
                                               "module's metrics, failures and verdicts)")
                return result
            files, extra = self._run_files(context, args, slo, price, root)
            names = {"report": "report.md", "chart": "chart.svg", "html": "report.html"}
        elif args["mode"] == "sweep":
            if not args["points"]:
                result.update(failed=True, msg="benchmark_report: mode=sweep needs points, a list of "
                                               "{concurrency, metrics}")
                return result
            files, extra = self._sweep_files(context, args, slo, dest)
            names = {"report": "sweep.md", "chart": "sweep.svg", "html": "sweep.html"}
        else:
            scanned = bench_index.scan(dest)
            files = [("index.md", bench_index.index_markdown(scanned)), ("index.html", bench_html.index_html(scanned))]
            extra = {"runs": len(scanned["runs"]), "sweeps": len(scanned["sweeps"])}
            names = {"report": "index.md", "chart": None, "html": "index.html"}

        if not self._task.check_mode:
            os.makedirs(dest, exist_ok=True)
        written, changed = [], []
        for name, data in files:
            path = os.path.join(dest, name)
            written.append(path)
            if report_files.write_if_changed(path, data, self._task.check_mode):
                changed.append(path)
        result.update(changed=bool(changed), files=written, changed_files=changed, dest=dest,
                      **{k: os.path.join(dest, v) if v else None for k, v in names.items()}, **extra)
        return result

    # ------------------------------------------------------------------ one run
    @staticmethod
    def _run_files(context, args, slo, price, root):
        metrics, failures, verdicts = args["metrics"], args["failures"] or {}, args["verdicts"] or []
        expected, summary_raw, rows_in = args["expected"], args["summary_raw"], args["requests"] or []
        ctx = dict(context)
        if not ctx.get("aiperf_version"):
            ctx["aiperf_version"] = metrics.get("aiperf_version") or (summary_raw or {}).get("aiperf_version")
        gated, reason = br.gate_status({**ctx, "expected": expected})
        ctx["gated"] = gated
        rows = br.report_rows(metrics, verdicts, expected)
        passing, failing = metrics.get("requests_passing"), metrics.get("requests_failing")
        all_failed = bool(failing) and not passing
        failed = [v.get("metric") for v in verdicts if v.get("verdict") != "pass"]
        gate = {"gated": gated, "reason": reason, "passed": bool(verdicts) and not failed and not all_failed,
                "failed_metrics": failed, "all_failed": all_failed}
        percentiles = args["percentiles"] or {}
        evaluation = bench_slo.evaluate(metrics, rows_in, slo, args["slo_attainment"], args["goodput_min"],
                                        percentiles) if slo else None
        cost = bench_cost.cost(price, ctx.get("gpus"), metrics)
        comparison, note = None, None
        if args["compare"]:
            earlier, note = bench_index.pick_previous(bench_index.scan(root)["runs"], ctx, args["compare"])
            if earlier:
                comparison = bench_compare.compare_runs({"metrics": metrics}, earlier["summary"], args["tolerance"],
                                                        {"cluster": earlier["cluster"], "target": earlier["target"],
                                                         "run_id": earlier["run_id"]})
        provenance = bench_provenance.provenance(
            args["plan"], args["plan_inputs"], args["aiperf_image"], args["run_info"], summary_raw,
            bench_provenance.collection_version(COLLECTION_ROOT), args["expected_trace_sha256"], args["trace_source"])
        summary = {"schema": SUMMARY_SCHEMA, "schema_version": SUMMARY_SCHEMA_VERSION, "context": ctx,
                   "expected": expected, "metrics": metrics, "failures": failures, "verdicts": verdicts, "gate": gate,
                   "rows": rows, "percentiles": percentiles, "slo": evaluation, "cost": cost,
                   "comparison": comparison, "comparison_note": note, "provenance": provenance,
                   "server": args["server"],
                   "requests": {"count": len(rows_in), "file": "requests.csv" if rows_in else None}}
        bars = bench_charts.bar_chart(rows, _title(ctx, "measured vs published"))
        cdf = bench_charts.cdf_chart([(f"c={ctx.get('concurrency')}", rows_in)], slo,
                                     _title(ctx, "TTFT and inter-token latency distributions"),
                                     {f"c={ctx.get('concurrency')}": percentiles})
        charts = [("Measured versus published", "chart.svg"), ("TTFT and ITL distributions (CDF)", "cdf.svg")]
        report = br.markdown_report({**ctx, "expected": expected}, rows, metrics, failures, verdicts,
                                    {"percentiles": percentiles, "slo": evaluation, "cost": cost,
                                     "comparison": comparison, "comparison_note": note, "provenance": provenance,
                                     "charts": charts, "html": "report.html", "server": args["server"]})
        html = bench_html.run_html(summary, [(charts[0][0], "chart.svg", bars["png"]),
                                             (charts[1][0], "cdf.svg", cdf["png"])])
        files = []
        if summary_raw is not None:
            files.append(("profile_export_aiperf.json", _json_text(summary_raw)))
        files += [("summary.json", _json_text(summary)), ("report.md", report), ("report.html", html),
                  ("chart.svg", bars["svg"]), ("cdf.svg", cdf["svg"])]
        if rows_in:
            files.append(("requests.csv", job_report.rows_csv(rows_in)))
        table = br.printed_lines(rows, percentiles, evaluation, cost, comparison, note)
        return files, {"table": table, "rows": rows, "gate": gate, "slo": evaluation, "cost": cost,
                       "comparison": comparison, "comparison_note": note}

    # ------------------------------------------------------------------ a sweep or a search
    @staticmethod
    def _sweep_files(context, args, slo, dest):
        ctx, expected, points = dict(context), args["expected"], args["points"]
        points = [{k: v for k, v in p.items() if k != "summary_raw"} for p in points]
        recommendation = bench_slo.recommend(points) if slo else None
        y_metric = sweep_report.sweep_y_metric(points)
        kind = "concurrency search" if args["search"] else "concurrency sweep"
        curve = bench_charts.sweep_chart(points, _title(ctx, kind), expected, slo, recommendation, y_metric)
        series = []
        for p in sorted(points, key=lambda p: int(p.get("concurrency", 0))):
            path = os.path.join(os.path.dirname(dest), str(p.get("run_id")), "requests.csv")
            try:
                with open(path, encoding="utf-8") as fh:
                    series.append((f"c={p.get('concurrency')}", aiperf.parse_request_rows(fh.read())))
            except OSError:
                series.append((f"c={p.get('concurrency')}", []))
        cdf = bench_charts.cdf_chart(series, slo, _title(ctx, "TTFT and ITL per concurrency"))
        charts = [("Throughput versus interactivity", "sweep.svg"), ("TTFT and ITL per concurrency (CDF)",
                                                                     "sweep-cdf.svg")]
        details = {"recommendation": recommendation, "search": args["search"], "slo": slo,
                   "attainment": args["slo_attainment"], "charts": charts, "html": "sweep.html"}
        data = {"schema": "inferops.dynamo/benchmark-sweep", "schema_version": SUMMARY_SCHEMA_VERSION,
                "context": ctx, "expected": expected, "y_metric": y_metric, "slo": slo,
                "attainment": args["slo_attainment"], "recommendation": recommendation, "search": args["search"],
                "points": points}
        md = sweep_report.sweep_markdown({**ctx, "chart": "sweep.svg"}, points, expected=expected, details=details)
        html = bench_html.sweep_html(data, [(charts[0][0], "sweep.svg", curve["png"]),
                                            (charts[1][0], "sweep-cdf.svg", cdf["png"])])
        table = br.text_table(sweep_report.sweep_header(points), sweep_report.sweep_rows(points), right=(1, 2, 3, 4))
        table += [line.replace("**", "").replace("`", "")
                  for line in sweep_report.recommendation_lines(recommendation, args["search"])]
        return ([("sweep.json", _json_text(data)), ("sweep.md", md), ("sweep.html", html),
                 ("sweep.svg", curve["svg"]), ("sweep-cdf.svg", cdf["svg"])],
                {"table": table, "recommendation": recommendation})

"""Action plugin: write a benchmark run's (or a concurrency sweep's) report files on the controller."""

from __future__ import annotations

import datetime
import json
import os
import tempfile

from ansible.plugins.action import ActionBase

from ansible_collections.inferops.dynamo.plugins.module_utils import bench_report as br

ARGUMENT_SPEC = {
    "dest": {"type": "path", "required": True},
    "mode": {"type": "str", "default": "run", "choices": ["run", "sweep"]},
    "context": {"type": "dict", "default": {}},
    "metrics": {"type": "dict"},
    "failures": {"type": "dict"},
    "verdicts": {"type": "list", "elements": "dict", "default": []},
    "expected": {"type": "dict"},
    "summary_raw": {"type": "dict"},
    "points": {"type": "list", "elements": "dict", "default": []},
}

RUN_FILES = ("profile_export_aiperf.json", "summary.json", "report.md", "chart.svg")
SWEEP_FILES = ("sweep.json", "sweep.md", "sweep.svg")


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


def _write(path, text, check_mode):
    """Write ``text`` to ``path`` atomically unless identical; return True when it changed (or would)."""
    data = text.encode("utf-8")
    try:
        with open(path, "rb") as fh:
            if fh.read() == data:
                return False
    except FileNotFoundError:
        pass
    if check_mode:
        return True
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-", suffix="-" + os.path.basename(path))
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return True


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
        context = _plain(args["context"] or {})
        expected = _plain(args["expected"]) if args["expected"] is not None else None
        summary_raw = _plain(args["summary_raw"]) if args["summary_raw"] is not None else None
        points = _plain(args["points"] or [])
        context["date"] = _run_date(context, summary_raw, points)
        context.setdefault("cluster", None)
        context.setdefault("target", None)
        context.setdefault("run_id", None)

        if args["mode"] == "run":
            if args["metrics"] is None:
                result.update(failed=True, msg="benchmark_report: mode=run needs metrics (the aiperf_results "
                                               "module's metrics, failures and verdicts)")
                return result
            files, extra = self._run_files(context, expected, summary_raw, _plain(args["metrics"]),
                                           _plain(args["failures"] or {}), _plain(args["verdicts"] or []))
        else:
            if not points:
                result.update(failed=True, msg="benchmark_report: mode=sweep needs points, a list of "
                                               "{concurrency, metrics}")
                return result
            files, extra = self._sweep_files(context, expected, points)

        if not self._task.check_mode:
            os.makedirs(dest, exist_ok=True)
        written, changed = [], []
        for name, text in files:
            path = os.path.join(dest, name)
            written.append(path)
            if _write(path, text, self._task.check_mode):
                changed.append(path)
        report_name, chart_name = ("report.md", "chart.svg") if args["mode"] == "run" else ("sweep.md", "sweep.svg")
        result.update(changed=bool(changed), files=written, changed_files=changed, dest=dest,
                      report=os.path.join(dest, report_name), chart=os.path.join(dest, chart_name), **extra)
        return result

    @staticmethod
    def _run_files(context, expected, summary_raw, metrics, failures, verdicts):
        ctx = dict(context)
        if not ctx.get("aiperf_version"):
            ctx["aiperf_version"] = metrics.get("aiperf_version") or (summary_raw or {}).get("aiperf_version")
        gated, reason = br.gate_status({**ctx, "expected": expected})
        ctx["gated"] = gated
        rows = br.report_rows(metrics, verdicts, expected)
        table = br.table_lines(rows)
        passing, failing = metrics.get("requests_passing"), metrics.get("requests_failing")
        all_failed = bool(failing) and not passing
        failed = [v.get("metric") for v in verdicts if v.get("verdict") != "pass"]
        gate = {"gated": gated, "reason": reason,
                "passed": bool(verdicts) and not failed and not all_failed,
                "failed_metrics": failed, "all_failed": all_failed}
        report = br.markdown_report({**ctx, "expected": expected, "chart": "chart.svg"}, rows, metrics,
                                    failures, verdicts)
        title = f"{ctx.get('target') or 'benchmark'} on {ctx.get('cluster') or 'cluster'}: measured vs expected"
        if ctx.get("run_id"):
            title += f" (run {ctx['run_id']})"
        chart = br.bar_chart_svg(rows, title)
        summary = {"context": ctx, "expected": expected, "metrics": metrics, "failures": failures,
                   "verdicts": verdicts, "gate": gate, "rows": rows}
        files = []
        if summary_raw is not None:
            files.append(("profile_export_aiperf.json", _json_text(summary_raw)))
        files += [("summary.json", _json_text(summary)), ("report.md", report), ("chart.svg", chart)]
        return files, {"table": table, "rows": rows, "gate": gate}

    @staticmethod
    def _sweep_files(context, expected, points):
        ctx = dict(context)
        table = br.text_table(br.SWEEP_HEADER, br.sweep_rows(points), right=(1, 2, 3, 4))
        title = f"{ctx.get('target') or 'benchmark'} on {ctx.get('cluster') or 'cluster'}: concurrency sweep"
        if ctx.get("run_id"):
            title += f" (run {ctx['run_id']})"
        svg = br.sweep_svg(points, title, expected=expected)
        md = br.sweep_markdown({**ctx, "chart": "sweep.svg"}, points, expected=expected)
        data = {"context": ctx, "expected": expected, "y_metric": br.sweep_y_metric(points),
                "points": [{k: v for k, v in p.items() if k != "summary_raw"} for p in points]}
        return [("sweep.json", _json_text(data)), ("sweep.md", md), ("sweep.svg", svg)], {"table": table}

# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Every benchmark run under ``results/``: find them, pick an earlier one, list them newest first.

Runs live in ``results/<cluster>/<target>/<run-id>/summary.json`` and sweeps (or searches) in
``results/<cluster>/<target>/sweep-<first-run-id>/sweep.json``. Run ids start with the UTC start time
(``20261201T081500Z-c16``), so they sort in time order. Pure Python (reads files only)::

    scan(root)                       -> {"runs": [...], "sweeps": [...]}, newest first
    pick_previous(runs, current, ref) -> (the run to compare with, or None, and why)
    index_rows(runs) / sweep_rows(sweeps) / index_markdown(scanned)
"""

from __future__ import annotations

import json
import os

SUMMARY = "summary.json"
SWEEP = "sweep.json"


def _load(path):
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def run_key(run_id):
    """Sort key of a run id: its UTC timestamp prefix, then the rest."""
    return str(run_id or "")


def scan(root):
    """Runs and sweeps under ``root``, newest first; unreadable or foreign directories are skipped."""
    runs, sweeps = [], []
    if not root or not os.path.isdir(root):
        return {"runs": runs, "sweeps": sweeps}
    for cluster in sorted(os.listdir(root)):
        cdir = os.path.join(root, cluster)
        if not os.path.isdir(cdir):
            continue
        for target in sorted(os.listdir(cdir)):
            tdir = os.path.join(cdir, target)
            if not os.path.isdir(tdir):
                continue
            for name in sorted(os.listdir(tdir)):
                rdir = os.path.join(tdir, name)
                if os.path.isfile(os.path.join(rdir, SUMMARY)):
                    summary = _load(os.path.join(rdir, SUMMARY))
                    if summary and isinstance(summary.get("metrics"), dict):
                        ctx = summary.get("context") or {}
                        runs.append({"cluster": ctx.get("cluster") or cluster, "target": ctx.get("target") or target,
                                     "run_id": ctx.get("run_id") or name, "path": rdir,
                                     "rel": os.path.relpath(rdir, root), "summary": summary})
                elif os.path.isfile(os.path.join(rdir, SWEEP)):
                    sweep = _load(os.path.join(rdir, SWEEP))
                    if sweep:
                        sweeps.append({"cluster": cluster, "target": target, "run_id": name, "path": rdir,
                                       "rel": os.path.relpath(rdir, root), "sweep": sweep})
    runs.sort(key=lambda r: (run_key(r["run_id"]), r["cluster"], r["target"]), reverse=True)
    sweeps.sort(key=lambda r: (run_key(r["run_id"].removeprefix("sweep-")), r["cluster"], r["target"]),
                reverse=True)
    return {"runs": runs, "sweeps": sweeps}


def _concurrency(run):
    return ((run.get("summary") or {}).get("context") or {}).get("concurrency")


def pick_previous(runs, current, ref):
    """``(run, note)``: the run to compare ``current`` (``{cluster, target, run_id, concurrency}``) with.

    ``ref`` is ``previous`` (the newest earlier run of the same cluster, target and concurrency), a run
    id (any cluster or target; the same cluster and target first), or ``<cluster>/<target>/<run-id>``.
    """
    ref = str(ref or "").strip()
    others = [r for r in runs if not (r["cluster"] == current.get("cluster") and r["target"] == current.get("target")
                                      and r["run_id"] == current.get("run_id"))]
    if ref == "previous":
        same = [r for r in others if r["cluster"] == current.get("cluster") and r["target"] == current.get("target")
                and run_key(r["run_id"]) < run_key(current.get("run_id"))]
        matching = [r for r in same if str(_concurrency(r)) == str(current.get("concurrency"))]
        if matching:
            return max(matching, key=lambda r: run_key(r["run_id"])), None
        if same:
            return None, (f"no earlier run of {current.get('target')} on {current.get('cluster')} at concurrency "
                          f"{current.get('concurrency')} (earlier runs: "
                          f"{', '.join(sorted({str(_concurrency(r)) for r in same}))}); nothing to compare with")
        return None, f"no earlier run of {current.get('target')} on {current.get('cluster')}: nothing to compare with"
    parts = ref.split("/")
    if len(parts) == 3:
        hits = [r for r in others if (r["cluster"], r["target"], r["run_id"]) == tuple(parts)]
    else:
        hits = [r for r in others if r["run_id"] == ref]
        hits.sort(key=lambda r: (r["cluster"] != current.get("cluster"), r["target"] != current.get("target")))
    if hits:
        return hits[0], None
    return None, f"run {ref} not found under the results directory (give a run id or <cluster>/<target>/<run-id>)"


def _fmt(value, digits=2):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "—"
    return f"{value:,.{digits}f}"


def _pct(value):
    return "—" if not isinstance(value, (int, float)) or isinstance(value, bool) else f"{value * 100:.1f} %"


def run_row(run):
    """Display cells of one run for the index (strings), plus the link to its report."""
    s = run["summary"]
    m, ctx, gate = s.get("metrics") or {}, s.get("context") or {}, s.get("gate") or {}
    slo, cost, comp = s.get("slo") or {}, s.get("cost") or {}, s.get("comparison") or {}
    gate_word = ("PASS" if gate.get("passed") else "FAIL") if gate.get("gated") else "reported"
    slo_word = "—" if not slo else ("met" if slo.get("met") else "missed")
    html = os.path.join(run["rel"], "report.html")
    started = str((s.get("provenance") or {}).get("started") or "")
    date = f"{started[:10]} {started[11:16]} UTC" if len(started) >= 16 else (ctx.get("date") or "—")
    return {"date": date, "cluster": run["cluster"], "target": run["target"],
            "run_id": run["run_id"], "concurrency": str(ctx.get("concurrency", "—")),
            "output_tokens_per_s": _fmt(m.get("output_tokens_per_s")),
            "output_tokens_per_s_per_gpu": _fmt(m.get("output_tokens_per_s_per_gpu")),
            "tokens_per_s_per_user_p50": _fmt(m.get("output_tokens_per_s_per_user_p50")),
            "ttft_p50_ms": _fmt(m.get("ttft_p50_ms")), "goodput_per_s": _fmt(m.get("goodput_per_s")),
            "good_share": _pct(slo.get("good_fraction")) if slo else "—",
            "cost_per_million_output": ("$" + _fmt(cost.get("per_million_output_tokens"))
                                        if isinstance(cost.get("per_million_output_tokens"), (int, float)) else "—"),
            "gate": gate_word, "slo": slo_word, "comparison": comp.get("verdict") or "—",
            "report_html": html, "report_md": os.path.join(run["rel"], "report.md")}


INDEX_HEADER = ("Date", "Cluster", "Target", "Run", "Conc.", "tok/s", "tok/s/GPU", "tok/s/user p50",
                "TTFT p50 ms", "Goodput req/s", "Good share", "$/M out", "Gate", "SLO", "vs previous")
INDEX_KEYS = ("date", "cluster", "target", "run_id", "concurrency", "output_tokens_per_s",
              "output_tokens_per_s_per_gpu", "tokens_per_s_per_user_p50", "ttft_p50_ms", "goodput_per_s",
              "good_share", "cost_per_million_output", "gate", "slo", "comparison")


def sweep_row(entry):
    sweep = entry["sweep"]
    rec = sweep.get("recommendation") or {}
    search = sweep.get("search") or {}
    points = sweep.get("points") or []
    return {"cluster": entry["cluster"], "target": entry["target"], "run_id": entry["run_id"],
            "kind": "search" if search else "sweep",
            "concurrencies": ", ".join(str(p.get("concurrency")) for p in points),
            "recommended": "—" if not sweep.get("recommendation") else str(rec.get("concurrency") or "none"),
            "goodput_per_s": _fmt(rec.get("goodput_per_s")),
            "report_html": os.path.join(entry["rel"], "sweep.html"), "report_md": os.path.join(entry["rel"], "sweep.md")}


SWEEP_HEADER = ("Cluster", "Target", "Sweep", "Kind", "Concurrencies", "Recommended", "Goodput req/s there")
SWEEP_KEYS = ("cluster", "target", "run_id", "kind", "concurrencies", "recommended", "goodput_per_s")


def index_markdown(scanned):
    """results/index.md: every run, newest first, then every sweep or search."""
    runs = [run_row(r) for r in scanned["runs"]]
    sweeps = [sweep_row(s) for s in scanned["sweeps"]]
    out = ["# Benchmark runs", "", f"{len(runs)} run(s) and {len(sweeps)} sweep(s) under this directory, "
           "newest first. Each run's report: `report.md` / `report.html` in its directory.", ""]

    def cell(text):
        return str(text).replace("|", "\\|")

    out += ["| " + " | ".join(INDEX_HEADER) + " |", "|" + "|".join("---" for _ in INDEX_HEADER) + "|"]
    for row in runs:
        cells = [cell(row[k]) for k in INDEX_KEYS]
        cells[3] = f"[{cell(row['run_id'])}]({row['report_md']})"
        out.append("| " + " | ".join(cells) + " |")
    if sweeps:
        out += ["", "## Sweeps and searches", "", "| " + " | ".join(SWEEP_HEADER) + " |",
                "|" + "|".join("---" for _ in SWEEP_HEADER) + "|"]
        for row in sweeps:
            cells = [cell(row[k]) for k in SWEEP_KEYS]
            cells[2] = f"[{cell(row['run_id'])}]({row['report_md']})"
            out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"

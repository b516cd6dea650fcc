# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Benchmark charts drawn with matplotlib (controller side, Agg; no pyplot state, no display).

    bar_chart(rows, title)                          -> measured versus published, one panel per metric
    cdf_chart(series, slo, title)                   -> TTFT and ITL distributions (empirical CDFs)
    sweep_chart(points, title, expected, slo, rec)  -> throughput versus interactivity, the SLO boundary,
                                                       the published point and the recommendation

Each returns ``{"svg": text, "png": bytes}``: the SVG files sit beside report.md, the PNGs are inlined
(base64) in report.html. Output is deterministic for the same inputs (fixed SVG id salt, no dates).
"""

from __future__ import annotations

import io
import math

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure

matplotlib.rcParams.update({"svg.hashsalt": "inferops.dynamo", "svg.fonttype": "none", "font.family": "DejaVu Sans", "font.size": 10,
                            "axes.spines.top": False, "axes.spines.right": False})

COLOURS = {"pass": "#2e7d32", "FAIL": "#c62828", "other": "#4f6d8f", "expected": "#9e9e9e",
           "curve": "#1f5fa8", "target": "#e65100", "miss": "#c62828", "met": "#2e7d32", "slo": "#6a1b9a"}
SERIES = ("#1f5fa8", "#e65100", "#2e7d32", "#6a1b9a", "#00838f", "#ad1457", "#5d4037", "#546e7a")
PNG_DPI = 100


def _num(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else value


def _render(fig):
    svg, png = io.BytesIO(), io.BytesIO()
    fig.savefig(svg, format="svg", metadata={"Date": None, "Creator": None})
    fig.savefig(png, format="png", dpi=PNG_DPI, metadata={"Software": None})
    return {"svg": svg.getvalue().decode("utf-8"), "png": png.getvalue()}


def _message(ax, text):
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="#616161")
    ax.set_xticks([])
    ax.set_yticks([])


# --------------------------------------------------------------------------- measured vs expected
def bar_chart(rows, title):
    """One panel per performance row (tok/s, tok/s/GPU, tok/s/user p50, TTFT p50): measured (coloured by
    verdict) beside the published figure (grey), values printed on the bars."""
    perf = [r for r in rows or [] if r.get("key") != "requests"]
    fig = Figure(figsize=(11, 3.4), layout="constrained")
    fig.suptitle(title, fontsize=12, fontweight="bold")
    axes = fig.subplots(1, max(len(perf), 1), squeeze=False)[0]
    if not perf:
        _message(axes[0], "no performance metrics")
        return _render(fig)
    for ax, row in zip(axes, perf, strict=False):
        measured, expected = _num(row.get("measured_value")), _num(row.get("expected_value"))
        verdict = row.get("verdict", "not gated")
        colour = COLOURS.get(verdict, COLOURS["other"])
        values = [measured or 0.0, expected or 0.0]
        bars = ax.bar(["measured", "published"], values, color=[colour, COLOURS["expected"]], width=0.6)
        for bar, value, shown in zip(bars, (measured, expected), (row.get("measured"), row.get("expected")),
                                     strict=True):
            ax.annotate("n/a" if value is None else shown, (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                        ha="center", va="bottom", fontsize=9, xytext=(0, 2), textcoords="offset points")
        better = "lower is better" if row.get("direction") == "lower" else "higher is better"
        delta = row.get("delta_pct")
        ax.set_title(f"{row['label']}\n{verdict}" + (f" ({delta:+.1f}%)" if delta is not None else "")
                     + f", {better}", fontsize=9)
        ax.set_ylim(0, max([*values, 1.0]) * 1.18)
        ax.set_ylabel(row.get("unit", ""))
    return _render(fig)


# --------------------------------------------------------------------------- CDFs
def _ecdf(values):
    xs = sorted(v for v in values if v is not None)
    n = len(xs)
    return xs, [(i + 1) / n for i in range(n)]


CDF_PANELS = (("ttft_ms", "Time to first token (ms)"), ("itl_ms", "Inter-token latency (ms)"))


def cdf_chart(series, slo=None, title="", percentiles=None):
    """Empirical CDFs of TTFT and ITL, one line per series (``[(label, rows)]``), the objectives as
    vertical lines. A series without per-request rows falls back to its summary percentiles
    (``percentiles``: ``{label: percentile_table}``)."""
    slo = slo or {}
    fig = Figure(figsize=(11, 3.8), layout="constrained")
    if title:
        fig.suptitle(title, fontsize=12, fontweight="bold")
    axes = fig.subplots(1, 2)
    for ax, (key, label) in zip(axes, CDF_PANELS, strict=True):
        drawn = False
        for i, (name, rows) in enumerate(series or []):
            colour = SERIES[i % len(SERIES)]
            values = [_num(r.get(key)) for r in rows or [] if r.get("error") is None]
            values = [v for v in values if v is not None]
            if values:
                xs, ys = _ecdf(values)
                ax.step(xs, ys, where="post", color=colour, linewidth=1.8, label=f"{name} ({len(xs)} requests)")
                drawn = True
                continue
            stats = ((percentiles or {}).get(name) or {}).get(key) or {}
            pts = sorted((float(s[1:]) / 100, v) for s, v in stats.items()
                         if s.startswith("p") and s[1:].isdigit() and _num(v) is not None)
            if pts:
                ax.plot([v for _, v in pts], [q for q, _ in pts], marker="o", color=colour,
                        label=f"{name} (summary percentiles)")
                drawn = True
        if key in slo:
            ax.axvline(slo[key], color=COLOURS["slo"], linestyle="--", linewidth=1.5,
                       label=f"objective {key} <= {slo[key]:g}")
        for q in (0.5, 0.9, 0.99):
            ax.axhline(q, color="#e0e0e0", linewidth=0.8, zorder=0)
            ax.annotate(f"p{int(q * 100)}", (1.0, q), xycoords=("axes fraction", "data"), fontsize=8,
                        color="#757575", ha="left", va="center", xytext=(3, 0), textcoords="offset points")
        ax.set_xlabel(label)
        ax.set_ylabel("share of requests at or below")
        ax.set_ylim(0, 1.02)
        if drawn:
            ax.legend(fontsize=8, loc="lower right")
        else:
            _message(ax, "no per-request values (non-streaming run?)")
    return _render(fig)


# --------------------------------------------------------------------------- sweep
def interactivity_floor(slo):
    """The tokens/s-per-user level the objectives imply: ``tokens_per_s_per_user``, or 1000 / ``itl_ms``."""
    slo = slo or {}
    floors = [slo["tokens_per_s_per_user"]] if "tokens_per_s_per_user" in slo else []
    if slo.get("itl_ms"):
        floors.append(1000.0 / slo["itl_ms"])
    return max(floors) if floors else None


def sweep_chart(points, title, expected=None, slo=None, recommendation=None, y_metric="output_tokens_per_s_per_gpu"):
    """Throughput (``y_metric``) versus output tokens/s per user p50, one point per concurrency in order.

    Points meeting the objectives are green, missing ones red; the interactivity floor the objectives
    imply is a dashed line with the side below it shaded; the recommended point is starred; the
    published operating point is an orange diamond."""
    expected = expected if isinstance(expected, dict) else {}
    fig = Figure(figsize=(9, 5.6), layout="constrained")
    ax = fig.subplots()
    ax.set_title(title, fontsize=12, fontweight="bold")
    pts = []
    for p in sorted((p for p in points or [] if isinstance(p, dict)), key=lambda p: int(p.get("concurrency", 0))):
        m = p.get("metrics") or {}
        x, y = _num(m.get("output_tokens_per_s_per_user_p50")), _num(m.get(y_metric))
        if x is not None and y is not None:
            pts.append((p, x, y))
    ylabel = "Output tokens/s per GPU" if y_metric == "output_tokens_per_s_per_gpu" else "Output tokens/s (total)"
    ax.set_xlabel("Output tokens/s per user p50 (interactivity, higher is better)")
    ax.set_ylabel(f"{ylabel} (higher is better)")
    if not pts:
        _message(ax, "no sweep point has both metrics")
        return _render(fig)
    ax.plot([x for _, x, _ in pts], [y for _, _, y in pts], color=COLOURS["curve"], linewidth=2, zorder=2)
    judged = any(p.get("slo") for p, _, _ in pts)
    for p, x, y in pts:
        met = (p.get("slo") or {}).get("met")
        colour = COLOURS["curve"] if not judged else (COLOURS["met"] if met else COLOURS["miss"])
        ax.scatter([x], [y], s=60, color=colour, zorder=3, edgecolors="white", linewidths=1.2)
        ax.annotate(f"c={p.get('concurrency')}", (x, y), xytext=(6, 6), textcoords="offset points", fontsize=9,
                    fontweight="bold")
    xs = [x for _, x, _ in pts]
    ys = [y for _, _, y in pts]
    ex, ey = _num(expected.get("output_tokens_per_s_per_user_p50")), _num(expected.get(y_metric))
    if ex is not None and ey is not None:
        ax.scatter([ex], [ey], marker="D", s=80, color=COLOURS["target"], zorder=4, edgecolors="white",
                   label=f"published (c={expected.get('concurrency', '?')})")
        xs.append(ex)
        ys.append(ey)
    floor = interactivity_floor(slo)
    x_hi = max(xs + ([floor] if floor else [])) * 1.12
    if floor:
        ax.axvline(floor, color=COLOURS["slo"], linestyle="--", linewidth=1.5,
                   label=f"SLO boundary: {floor:,.1f} tokens/s per user")
        ax.axvspan(0, floor, color=COLOURS["miss"], alpha=0.06, zorder=0)
    rec = (recommendation or {}).get("concurrency")
    boundary = (recommendation or {}).get("boundary")
    at = {int(p.get("concurrency", -1)): (x, y) for p, x, y in pts}
    if rec is not None and int(rec) in at:
        x, y = at[int(rec)]
        ax.scatter([x], [y], marker="*", s=320, color="#fbc02d", edgecolors="#5d4037", zorder=5,
                   label=f"recommended (c={rec})")
        if boundary is not None and int(boundary) in at:
            # where the curve crosses from meeting the objectives to missing them
            bx, by = at[int(boundary)]
            ax.plot([(x + bx) / 2], [(y + by) / 2], marker="X", markersize=11, color=COLOURS["slo"], zorder=4,
                    linestyle="none", label=f"SLO boundary between c={rec} and c={boundary}")
    if judged:
        ax.scatter([], [], color=COLOURS["met"], label="meets the objectives")
        ax.scatter([], [], color=COLOURS["miss"], label="misses them")
    ax.set_xlim(0, x_hi)
    ax.set_ylim(0, max(ys) * 1.15)
    ax.grid(color="#eeeeee")
    # a throughput-versus-interactivity curve runs from top left to bottom right: the lower left is free
    ax.legend(fontsize=8, loc="lower left")
    return _render(fig)

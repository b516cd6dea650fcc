# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The per-cluster summary of a rollout, as a text table, Markdown and data. Pure functions."""

from __future__ import annotations

COLUMNS = ("cluster", "batch", "target", "status", "revision", "stage", "benchmark", "reason")
HEADERS = {"cluster": "Cluster", "batch": "Batch", "target": "Target", "status": "Status", "revision": "Revision",
           "stage": "Stage", "benchmark": "Benchmark", "reason": "Reason"}
# installed / updated / unchanged (the cluster serves the new target), rolled back (its update failed and
# the last good revision serves again), failed (stopped before or without a restore), untouched (never reached).
FAILED = ("failed", "rolled back")


def summarise(hosts: list[str], results: dict, batches: dict | None = None) -> list[dict]:
    """One row per cluster of the inventory, in inventory order; clusters never reached are
    'untouched' (the rollout halted before their batch)."""
    rows = []
    halted_by = [h for h in hosts if (results.get(h) or {}).get("status") in FAILED]
    for host in hosts:
        result = results.get(host) or {}
        row = {
            "cluster": host,
            "batch": (batches or {}).get(host, result.get("batch", "")),
            "target": result.get("target", ""),
            "status": result.get("status", "untouched"),
            "revision": result.get("revision", ""),
            "stage": result.get("stage", ""),
            "benchmark": result.get("benchmark", ""),
            "reason": result.get("reason", ""),
        }
        if row["status"] == "untouched" and halted_by:
            row["reason"] = f"rollout halted: {', '.join(halted_by)} failed"
        rows.append(row)
    return rows


def _cell(value, limit=90) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def table_lines(rows: list[dict]) -> list[str]:
    cells = [[_cell(r[c]) for c in COLUMNS] for r in rows]
    widths = [max([len(HEADERS[c])] + [len(row[i]) for row in cells]) for i, c in enumerate(COLUMNS)]
    lines = ["  ".join(HEADERS[c].ljust(widths[i]) for i, c in enumerate(COLUMNS)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(row[i].ljust(widths[i]) for i in range(len(COLUMNS))).rstrip() for row in cells]
    return lines


def markdown(rows: list[dict], title: str) -> str:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    lines = [f"# {title}", "", ", ".join(f"{n} {s}" for s, n in sorted(counts.items())), "",
             "| " + " | ".join(HEADERS[c] for c in COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(_cell(r[c], 300).replace("|", "\\|") for c in COLUMNS) + " |" for r in rows]
    return "\n".join(lines) + "\n"

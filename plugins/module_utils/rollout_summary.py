"""The per-cluster summary of a rollout, as a text table, Markdown and data. Pure functions."""

from __future__ import annotations

COLUMNS = ("cluster", "batch", "target", "status", "stage", "benchmark", "reason")
HEADERS = {"cluster": "Cluster", "batch": "Batch", "target": "Target", "status": "Status", "stage": "Stage",
           "benchmark": "Benchmark", "reason": "Reason"}


def summarise(hosts: list[str], results: dict, batches: dict | None = None) -> list[dict]:
    """One row per cluster of the inventory, in inventory order; clusters never reached are
    'not started' (the rollout halted before their batch)."""
    rows = []
    halted_by = [h for h in hosts if (results.get(h) or {}).get("status") == "failed"]
    for host in hosts:
        result = results.get(host) or {}
        row = {
            "cluster": host,
            "batch": (batches or {}).get(host, result.get("batch", "")),
            "target": result.get("target", ""),
            "status": result.get("status", "not started"),
            "stage": result.get("stage", ""),
            "benchmark": result.get("benchmark", ""),
            "reason": result.get("reason", ""),
        }
        if row["status"] == "not started" and halted_by:
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

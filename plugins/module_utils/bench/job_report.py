# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What the benchmark Job prints after AIPerf, so it travels through the pod log (standard library only).

The same file runs in two places, so the two can never disagree:

* inside the AIPerf Job, embedded in its script by ``render.aiperf_job`` (``python3 - <<'PY' ... PY``):
  ``main()`` prints the run's facts (the staged trace's SHA-256 and line count, the replayed slice's,
  UTC start/end, the AIPerf version) and one compact CSV row per profiled request;
* on the controller, where ``aiperf.load_results`` turns an artifact directory's
  ``profile_export.jsonl`` into the same rows with :func:`request_rows`.

The full ``profile_export.jsonl`` keeps every inter-chunk latency (about 7 KB per request): the compact
rows (about 50 bytes) are what the CDF charts and the per-objective SLO shares need.
"""

from __future__ import annotations

import csv
import datetime
import hashlib
import io
import json
import os
import sys

RUN_MARKERS = ("=== INFEROPS RUN BEGIN ===", "=== INFEROPS RUN END ===")
REQUEST_MARKERS = ("=== AIPERF REQUESTS BEGIN ===", "=== AIPERF REQUESTS END ===")
COLUMNS = ("ttft_ms", "itl_ms", "e2e_ms", "tokens_per_s_per_user", "osl", "good", "error")
# column -> AIPerf per-request metric tag
TAGS = {"ttft_ms": "time_to_first_token", "itl_ms": "inter_token_latency", "e2e_ms": "request_latency",
        "tokens_per_s_per_user": "output_token_throughput_per_user", "osl": "output_sequence_length",
        "good": "good_request_count"}


def _value(metrics, tag):
    entry = metrics.get(tag) if isinstance(metrics, dict) else None
    value = entry.get("value") if isinstance(entry, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def request_rows(records):
    """One row per profiled request (warm-up excluded): the columns of ``COLUMNS``.

    ``good`` is AIPerf's own per-request verdict against ``--goodput`` (1 or 0; empty without SLOs and for
    a failed request, which never counts as good); ``error`` is the HTTP code, else the error type, of a
    failed request.
    """
    rows = []
    for rec in records:
        if not isinstance(rec, dict):
            continue
        if (rec.get("metadata") or {}).get("benchmark_phase", "profiling") == "warmup":
            continue
        metrics = rec.get("metrics") or {}
        row = {col: _value(metrics, tag) for col, tag in TAGS.items()}
        error = rec.get("error")
        row["error"] = None
        if error:
            detail = error if isinstance(error, dict) else {"type": str(error)}
            row["error"] = str(detail.get("code") or detail.get("type") or "error")
        rows.append(row)
    return rows


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))
    return str(value)


def rows_csv(rows):
    """The rows as CSV text with a header line."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow([_cell(row.get(c)) for c in COLUMNS])
    return out.getvalue()


def _sha256(path):
    digest, lines = hashlib.sha256(), 0
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
            lines += chunk.count(b"\n")
    return digest.hexdigest(), lines


def _aiperf_version():
    try:
        from importlib import metadata
        return metadata.version("aiperf")
    except Exception:
        return None


def run_info(env):
    """The run's facts, from the Job's environment (``TRACE_FILE``, ``RUN_DIR``, ``STARTED``, ``AIPERF_RC``)."""
    info = {"trace_file": env.get("TRACE_FILE"), "started": env.get("STARTED"),
            "finished": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "aiperf_exit_code": int(env["AIPERF_RC"]) if env.get("AIPERF_RC", "").lstrip("-").isdigit() else None,
            "aiperf_version": _aiperf_version()}
    for key, path in (("trace", env.get("TRACE_FILE")), ("replayed", os.path.join(env.get("RUN_DIR", ""), "trace.jsonl"))):
        if path and os.path.isfile(path):
            info[f"{key}_sha256"], info[f"{key}_lines"] = _sha256(path)
    return info


def _records(path):
    records = []
    if not os.path.isfile(path):
        return records
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                records.append(json.loads(line))
            except ValueError:
                continue
    return records


def main(env=None, out=None):
    env = os.environ if env is None else env
    out = out or sys.stdout
    out.write(f"{RUN_MARKERS[0]}\n{json.dumps(run_info(env), sort_keys=True)}\n{RUN_MARKERS[1]}\n")
    rows = request_rows(_records(os.path.join(env.get("RUN_DIR", ""), "profile", "profile_export.jsonl")))
    if rows:
        out.write(f"{REQUEST_MARKERS[0]}\n{rows_csv(rows)}{REQUEST_MARKERS[1]}\n")
    out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

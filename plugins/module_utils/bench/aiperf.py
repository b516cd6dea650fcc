# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Parse NVIDIA AIPerf results (pure Python: no Ansible, no third-party imports).

Pipeline, each step a small function with its own unit test::

    locate(path)                 -> where the summary / CSV / records are (dir, file or log)
    extract_sections(text)       -> marked blocks of a pod log (summary JSON, CSV, JSONL records)
    load_json_summary(text)      -> the profile_export_aiperf.json dict
    summary_metrics(summary)     -> {tag: block} for every layout (0.1.x ``records``, top level 0.2+)
    parse_csv_summary(text)      -> {tag: block} from profile_export_aiperf.csv (fallback)
    parse_records_jsonl(text)    -> list of per-request records (profile_export.jsonl)
    parse_request_rows(text)     -> compact per-request rows the benchmark Job prints (CSV)
    parse_run_info(text)         -> what the benchmark Job measured about its own run (trace checksum, times)
    records_metrics(records)     -> {tag: block} computed from the records (last resort)
    group_errors(items)          -> [{code, type, message, count}]
    normalise(blocks, gpus)      -> stable metric names and units
    percentile_table(blocks)     -> mean and percentiles of TTFT, ITL, end-to-end latency, tokens/s per user
    load_results(path, content)  -> everything above glued together

Judging the results against the expected figures is aiperf_judge.py.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re

from ansible_collections.inferops.dynamo.plugins.module_utils.bench import job_report

SUMMARY_FILE = "profile_export_aiperf.json"
CSV_FILE = "profile_export_aiperf.csv"
RECORDS_FILE = "profile_export.jsonl"
KNOWN_FILES = (SUMMARY_FILE, CSV_FILE, RECORDS_FILE)

MARKERS = {
    "summary": ("=== AIPERF SUMMARY BEGIN ===", "=== AIPERF SUMMARY END ==="),
    "csv": ("=== AIPERF CSV BEGIN ===", "=== AIPERF CSV END ==="),
    "records": ("=== AIPERF RECORDS BEGIN ===", "=== AIPERF RECORDS END ==="),
    # printed by the Job after AIPerf (aiperf_job_report): compact per-request rows and the run's facts
    "requests": job_report.REQUEST_MARKERS,
    "run": job_report.RUN_MARKERS,
}

# 0.1.x tag names -> current tag names
TAG_ALIASES = {"ttft": "time_to_first_token", "ttst": "time_to_second_token"}

# stable name -> (aiperf tag, statistic, target unit, direction)
METRICS = {
    "output_tokens_per_s": ("output_token_throughput", "avg", "tokens/sec", "higher"),
    "output_tokens_per_s_per_user_p50": ("output_token_throughput_per_user", "p50", "tokens/sec/user", "higher"),
    "output_tokens_per_s_per_user_avg": ("output_token_throughput_per_user", "avg", "tokens/sec/user", "higher"),
    "request_throughput_per_s": ("request_throughput", "avg", "requests/sec", "higher"),
    "input_tokens_per_s": ("input_token_throughput", "avg", "tokens/sec", "higher"),
    "ttft_avg_ms": ("time_to_first_token", "avg", "ms", "lower"),
    "ttft_p50_ms": ("time_to_first_token", "p50", "ms", "lower"),
    "ttft_p90_ms": ("time_to_first_token", "p90", "ms", "lower"),
    "ttft_p99_ms": ("time_to_first_token", "p99", "ms", "lower"),
    "itl_avg_ms": ("inter_token_latency", "avg", "ms", "lower"),
    "itl_p50_ms": ("inter_token_latency", "p50", "ms", "lower"),
    "itl_p90_ms": ("inter_token_latency", "p90", "ms", "lower"),
    "itl_p99_ms": ("inter_token_latency", "p99", "ms", "lower"),
    # the slowest users: 90% / 99% of requests stream at least this fast
    "output_tokens_per_s_per_user_p10": ("output_token_throughput_per_user", "p10", "tokens/sec/user", "higher"),
    "output_tokens_per_s_per_user_p1": ("output_token_throughput_per_user", "p1", "tokens/sec/user", "higher"),
    "request_latency_avg_ms": ("request_latency", "avg", "ms", "lower"),
    "request_latency_p50_ms": ("request_latency", "p50", "ms", "lower"),
    "request_latency_p90_ms": ("request_latency", "p90", "ms", "lower"),
    "request_latency_p99_ms": ("request_latency", "p99", "ms", "lower"),
    "benchmark_duration_s": ("benchmark_duration", "avg", "sec", "lower"),
    "input_sequence_length_avg": ("input_sequence_length", "avg", "tokens", "both"),
    "output_sequence_length_avg": ("output_sequence_length", "avg", "tokens", "both"),
    "total_output_tokens": ("total_output_tokens", "avg", "tokens", "higher"),
    "total_tokens_per_s": ("total_token_throughput", "avg", "tokens/sec", "higher"),
    # AIPerf's goodput (--goodput): requests meeting every objective, per second and as a share
    "goodput_per_s": ("goodput", "avg", "requests/sec", "higher"),
    "good_request_count": ("good_request_count", "avg", "requests", "higher"),
    "good_request_fraction": ("good_request_fraction", "avg", "ratio", "higher"),
}

# Distribution tables: name -> (aiperf tag, target unit, direction)
PERCENTILE_METRICS = {
    "ttft_ms": ("time_to_first_token", "ms", "lower"),
    "itl_ms": ("inter_token_latency", "ms", "lower"),
    "e2e_ms": ("request_latency", "ms", "lower"),
    "tokens_per_s_per_user": ("output_token_throughput_per_user", "tokens/sec/user", "higher"),
}
PERCENTILE_STATS = ("avg", "min", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "max", "std",
                    "count")
# computed in normalise(), not read from one tag
DERIVED_DIRECTIONS = {
    "requests_total": "both",
    "requests_passing": "higher",
    "requests_failing": "lower",
    "failed_ratio": "lower",
    "output_tokens_per_s_per_gpu": "higher",
}
DIRECTIONS = {**{k: v[3] for k, v in METRICS.items()}, **DERIVED_DIRECTIONS}

_TIME_SCALE = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1000.0, "sec": 1000.0}

# CSV display header (without the " (unit)" suffix) -> tag, for the tags normalise() reads
CSV_DISPLAY_TAGS = {
    "time to first token": "time_to_first_token",
    "time to second token": "time_to_second_token",
    "inter token latency": "inter_token_latency",
    "request latency": "request_latency",
    "input sequence length": "input_sequence_length",
    "output sequence length": "output_sequence_length",
    "output token throughput per user": "output_token_throughput_per_user",
    "output token throughput": "output_token_throughput",
    "request throughput": "request_throughput",
    "request count": "request_count",
    "error request count": "error_request_count",
    "completed requests (success + error)": "completed_request_count",
    "request error rate": "request_error_rate",
    "benchmark duration": "benchmark_duration",
    "total output tokens": "total_output_tokens",
    "input token throughput": "input_token_throughput",
}


class AIPerfResultsError(Exception):
    """An actionable problem with the AIPerf results (missing, unreadable, bad arguments)."""


# --------------------------------------------------------------------------- locate
def _run_dirs(root):
    """Directories that may hold one run's exports: root, its children and grandchildren, then phases/profiling."""
    dirs = [root]
    for depth1 in sorted(os.listdir(root)):
        p1 = os.path.join(root, depth1)
        if os.path.isdir(p1) and depth1 not in ("logs", "phases"):
            dirs.append(p1)
            for depth2 in sorted(os.listdir(p1)):
                p2 = os.path.join(p1, depth2)
                if os.path.isdir(p2) and depth2 not in ("logs", "phases"):
                    dirs.append(p2)
    return dirs


def locate(path):
    """Find the AIPerf exports at ``path`` (artifact dir, summary/CSV/JSONL file or log file).

    Returns ``{"path", "kind": "dir"|"file"|"log", "summary", "csv", "records", "run_dir"}``; the
    file entries are paths or None.  Raises AIPerfResultsError when nothing usable is there.
    """
    found = {"path": path, "kind": None, "summary": None, "csv": None, "records": None, "run_dir": None}
    if not os.path.exists(path):
        raise AIPerfResultsError(f"AIPerf results path {path} does not exist")
    if os.path.isfile(path):
        name = os.path.basename(path)
        kind = ("summary" if name.endswith(".json") else "csv" if name.endswith(".csv")
                else "records" if name.endswith(".jsonl") else None)
        if kind is None:
            found["kind"] = "log"
        else:
            found.update(kind="file", run_dir=os.path.dirname(path))
            found[kind] = path
        return found
    found["kind"] = "dir"
    candidates = []
    for run_dir in _run_dirs(path):
        files = {k: os.path.join(run_dir, f) for k, f in zip(("summary", "csv", "records"), KNOWN_FILES, strict=True)}
        phase = os.path.join(run_dir, "phases", "profiling")
        for key, name in (("summary", SUMMARY_FILE), ("csv", CSV_FILE)):
            if not os.path.isfile(files[key]) and os.path.isfile(os.path.join(phase, name)):
                files[key] = os.path.join(phase, name)
        files = {k: v for k, v in files.items() if os.path.isfile(v)}
        if files:
            newest = max(os.path.getmtime(v) for v in files.values())
            candidates.append((run_dir == path, "summary" in files, newest, run_dir, files))
    if not candidates:
        raise AIPerfResultsError(
            f"no AIPerf summary found in {path}: looked for {', '.join(KNOWN_FILES)} in {path}, "
            f"{os.path.join(path, 'phases', 'profiling')} and the per-run subdirectories AIPerf names "
            "<model>-<service>-<endpoint>-<stimulus>; if the run failed early, read its logs/aiperf.log")
    # the directory itself first, then a run with a summary, then the newest run
    candidates.sort(key=lambda c: (c[0], c[1], c[2]), reverse=True)
    _, _, _, run_dir, files = candidates[0]
    found["run_dir"] = run_dir
    found.update(files)
    return found


# --------------------------------------------------------------------------- log sections
def extract_sections(text):
    """Return ``{"summary", "csv", "records"}`` -> text between the markers (last block wins) or None."""
    lines = text.splitlines()
    out = {}
    for key, (begin, end) in MARKERS.items():
        block, inside, current = None, False, []
        for line in lines:
            if begin in line:
                inside, current = True, []
            elif end in line and inside:
                inside, block = False, "\n".join(current)
            elif inside:
                current.append(line.rstrip("\r"))
        out[key] = block
    return out


# --------------------------------------------------------------------------- JSON summary
def load_json_summary(text, origin="summary"):
    """Parse profile_export_aiperf.json text; raise AIPerfResultsError naming ``origin`` when invalid."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise AIPerfResultsError(f"the AIPerf summary in {origin} is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise AIPerfResultsError(f"the AIPerf summary in {origin} is a {type(data).__name__}, expected an object")
    return data


def summary_metrics(summary):
    """``{tag: block}`` for both layouts: 0.1.x ``records`` (tags ttft/ttst aliased) and top-level (0.2+)."""
    records = summary.get("records")
    if isinstance(records, dict):
        items = records.items()
    elif isinstance(records, list):
        items = ((r.get("tag"), r) for r in records if isinstance(r, dict))
    else:
        items = ((k, v) for k, v in summary.items() if isinstance(v, dict) and "unit" in v)
    blocks = {}
    for tag, block in items:
        if isinstance(tag, str) and isinstance(block, dict):
            blocks[TAG_ALIASES.get(tag, tag)] = {k: v for k, v in block.items() if v is not None}
    return blocks


# --------------------------------------------------------------------------- CSV summary
def _number(cell):
    cell = (cell or "").strip().replace(",", "")
    if not cell:
        return None
    try:
        return float(cell)
    except ValueError:
        return None


def _csv_tag(display):
    """``Time to First Token (ms)`` -> (``time_to_first_token``, ``ms``)."""
    display = display.strip()
    if display.lower() == "completed requests (success + error)":
        return "completed_request_count", "requests"
    m = re.match(r"^(.*?)\s*\(([^()]*)\)$", display)
    name, unit = (m.group(1), m.group(2)) if m else (display, None)
    key = name.lower()
    tag = CSV_DISPLAY_TAGS.get(key) or re.sub(r"[^a-z0-9]+", "_", key).strip("_")
    return tag, unit or ("requests" if tag.endswith("_count") else None)


def parse_csv_summary(text):
    """``{tag: block}`` from profile_export_aiperf.csv (stats table + Metric,Value table; GPU table ignored)."""
    blocks, header = {}, None
    for row in csv.reader(io.StringIO(text)):
        if not row or not any(c.strip() for c in row):
            continue
        first = row[0].strip()
        if first in ("Metric", "Endpoint"):
            header = [c.strip() for c in row] if first == "Metric" else None
            continue
        if header is None:
            continue
        tag, unit = _csv_tag(first)
        block = {"unit": unit} if unit else {}
        if header[1:2] == ["Value"]:
            value = _number(row[1] if len(row) > 1 else "")
            if value is not None:
                block["avg"] = value
        else:
            for col, cell in zip(header[1:], row[1:], strict=False):
                value = _number(cell)
                if value is not None:
                    block[col] = value
        blocks[tag] = block
    if not blocks:
        raise AIPerfResultsError("the AIPerf CSV has no metric rows (expected a 'Metric,avg,...' or "
                                 "'Metric,Value' header)")
    return blocks


# --------------------------------------------------------------------------- JSONL records
def parse_records_jsonl(text):
    """List of per-request records from profile_export.jsonl; unreadable lines are skipped."""
    records = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict):
            records.append(rec)
    return records


def _cell(value):
    value = (value or "").strip()
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        return value


def parse_request_rows(text):
    """Per-request rows from the Job's compact CSV (``aiperf_job_report.COLUMNS``), numbers as floats.

    ``good`` is AIPerf's own per-request verdict against ``--goodput`` (1.0 / 0.0, None without SLOs);
    ``error`` is the HTTP code or error type of a failed request, None for a successful one.
    """
    rows = []
    reader = csv.reader(io.StringIO(text or ""))
    header = None
    for cells in reader:
        if not cells or not any(c.strip() for c in cells):
            continue
        if header is None:
            header = [c.strip() for c in cells]
            continue
        row = {name: _cell(cells[i] if i < len(cells) else "") for i, name in enumerate(header)}
        if row.get("error") is not None:
            row["error"] = str(row["error"]).removesuffix(".0")
        rows.append(row)
    return rows


def cut_short(rows):
    """How many requests AIPerf counted as successes although their stream ended before their output did: no
    error and no output length, where the run's other requests report one. With ``--use-server-token-count`` a
    complete stream ends with its token usage; a stream cut by a lost worker that nothing resumed (request
    migration off, or no other worker) ends without it, and AIPerf records no error."""
    rows = [r for r in rows or [] if isinstance(r, dict)]
    if not any(r.get("osl") is not None for r in rows):
        return 0
    return sum(1 for r in rows if r.get("error") is None and r.get("osl") is None)


def parse_run_info(text):
    """The JSON the Job prints about its own run (trace checksum, replayed lines, UTC times), or None."""
    if not text:
        return None
    try:
        info = json.loads(text)
    except ValueError:
        return None
    return info if isinstance(info, dict) else None


def profiling_records(records):
    """Records of the measured phase (warmup excluded)."""
    return [r for r in records if (r.get("metadata") or {}).get("benchmark_phase", "profiling") != "warmup"]


def percentile(values, pct):
    """Linear-interpolated percentile (numpy's default method)."""
    values = sorted(values)
    if not values:
        return None
    k = (len(values) - 1) * pct / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def records_metrics(records):
    """``{tag: block}`` computed from per-request records (used when there is no summary at all)."""
    recs = profiling_records(records)
    ok = [r for r in recs if not r.get("error")]
    failed = len(recs) - len(ok)
    blocks = {"request_count": {"unit": "requests", "avg": float(len(ok))},
              "completed_request_count": {"unit": "requests", "avg": float(len(recs))}}
    if failed:
        blocks["error_request_count"] = {"unit": "requests", "avg": float(failed)}
    values, units = {}, {}
    for rec in ok:
        for tag, m in (rec.get("metrics") or {}).items():
            if isinstance(m, dict) and isinstance(m.get("value"), (int, float)):
                values.setdefault(tag, []).append(float(m["value"]))
                units[tag] = m.get("unit")
    for tag, vals in values.items():
        block = {"unit": units[tag], "avg": sum(vals) / len(vals), "count": len(vals), "sum": sum(vals)}
        for p in (50, 90, 99):
            block[f"p{p}"] = percentile(vals, p)
        blocks[tag] = block
    starts = [r["metadata"]["request_start_ns"] for r in recs if "request_start_ns" in (r.get("metadata") or {})]
    ends = [r["metadata"]["request_end_ns"] for r in recs if "request_end_ns" in (r.get("metadata") or {})]
    if starts and ends and max(ends) > min(starts):
        duration = (max(ends) - min(starts)) / 1e9
        blocks["benchmark_duration"] = {"unit": "sec", "avg": duration}
        blocks["request_throughput"] = {"unit": "requests/sec", "avg": len(ok) / duration}
        if "output_sequence_length" in values:
            blocks["output_token_throughput"] = {"unit": "tokens/sec",
                                                 "avg": sum(values["output_sequence_length"]) / duration}
    return blocks


# --------------------------------------------------------------------------- errors
def _error_message(message):
    """The inner OpenAI-style ``error.message`` of an HTTP body, else the text itself."""
    if isinstance(message, str) and message.lstrip().startswith("{"):
        try:
            body = json.loads(message)
        except ValueError:
            return message
        err = body.get("error") if isinstance(body, dict) else None
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return err["message"]
        if isinstance(err, str):
            return err
        if isinstance(body, dict) and isinstance(body.get("message"), str):
            return body["message"]
    return message if isinstance(message, str) else json.dumps(message)


def group_errors(items):
    """Group errors into ``[{code, type, message, count}]``, most frequent first.

    ``items`` may mix summary ``error_summary`` entries (``{"error_details": {...}, "count": n}``),
    per-request records (``{"error": {...}}``; records without an error are ignored) and bare
    ``{"code", "type", "message"}`` dicts.
    """
    groups = {}
    for item in items or []:
        if not isinstance(item, dict):
            continue
        if "error_details" in item:
            details, count = item.get("error_details") or {}, int(item.get("count") or 1)
        elif "metadata" in item or "metrics" in item or "error" in item:
            details, count = item.get("error"), 1
            if not details:
                continue
        else:
            details, count = item, int(item.get("count") or 1)
        if not isinstance(details, dict):
            details = {"message": str(details)}
        key = (details.get("code"), details.get("type"), _error_message(details.get("message", "")))
        groups[key] = groups.get(key, 0) + count
    out = [{"code": c, "type": t, "message": m, "count": n} for (c, t, m), n in groups.items()]
    out.sort(key=lambda e: (-e["count"], str(e["code"]), str(e["type"]), e["message"]))
    return out


# --------------------------------------------------------------------------- normalise
def _scaled(value, unit, target):
    """Convert ``value`` from ``unit`` to ``target`` for time units; other units pass through."""
    if value is None:
        return None
    if target == "ms" and unit in _TIME_SCALE:
        return value * _TIME_SCALE[unit]
    if target == "sec" and unit in _TIME_SCALE:
        return value * _TIME_SCALE[unit] / 1000.0
    return value


def _stat(blocks, tag, stat):
    block = blocks.get(tag) or {}
    value = block.get(stat)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def normalise(blocks, gpus=None):
    """Stable metric names and units (ms, s, tokens/s) from ``{tag: block}``; absent metrics are None."""
    out = {}
    for name, (tag, stat, target, _direction) in METRICS.items():
        out[name] = _scaled(_stat(blocks, tag, stat), (blocks.get(tag) or {}).get("unit"), target)
    passing = _stat(blocks, "request_count", "avg")
    failing = _stat(blocks, "error_request_count", "avg") or 0.0  # absent means zero
    total = _stat(blocks, "completed_request_count", "avg")
    if total is None and passing is not None:
        total = passing + failing
    if passing is None and total is not None:
        passing = total - failing
    out["requests_passing"] = passing
    out["requests_failing"] = failing if (passing is not None or failing) else None
    out["requests_total"] = total
    if total:
        out["failed_ratio"] = failing / total
    else:
        rate = _stat(blocks, "request_error_rate", "avg")
        out["failed_ratio"] = rate / 100.0 if rate is not None else None
    tps = out["output_tokens_per_s"]
    out["output_tokens_per_s_per_gpu"] = tps / gpus if (tps is not None and gpus) else None
    return out


def percentile_table(blocks):
    """``{name: {unit, direction, avg, min, p1 ... p99, max, std, count}}`` for TTFT, ITL, end-to-end latency
    and tokens/s per user, in ms and tokens/s; a metric the run did not produce is left out."""
    table = {}
    for name, (tag, target, direction) in PERCENTILE_METRICS.items():
        block = blocks.get(tag) or {}
        unit = block.get("unit")
        stats = {}
        for stat in PERCENTILE_STATS:
            value = _stat(blocks, tag, stat)
            if value is None:
                continue
            stats[stat] = value if stat == "count" else _scaled(value, unit, target)
        if any(k in stats for k in ("avg", "p50")):
            table[name] = {"unit": target, "direction": direction, **stats}
    return table


# --------------------------------------------------------------------------- glue
def _read(path):
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


def load_results(path=None, content=None):
    """Load results from an artifact dir / file / log (``path``) or a log text (``content``).

    Returns ``{"source", "origin", "summary_raw", "blocks", "errors", "records_count", "all_failed",
    "aiperf_version", "schema_version", "warnings", "requests", "run_info"}``; ``requests`` are the
    compact per-request rows (from the Job's log, or from an artifact directory's records).
    """
    if (path is None) == (content is None):
        raise AIPerfResultsError("give exactly one of src (a path) or content (the log text)")
    texts, origin = {"summary": None, "csv": None, "records": None, "requests": None, "run": None}, path or "content"
    found = locate(path) if path is not None else None
    if found is None or found["kind"] == "log":
        text = content if content is not None else _read(path)
        texts.update(extract_sections(text))
        results_found = any(texts[k] for k in ("summary", "csv", "records"))
        if not results_found and text.lstrip().startswith("{") and path is None:
            texts["summary"] = text  # the summary JSON itself, passed as content
        elif not results_found:
            raise AIPerfResultsError(
                f"no AIPerf summary found in {origin}: looked for the markers {MARKERS['summary'][0]} / "
                f"{MARKERS['summary'][1]} (also {MARKERS['csv'][0]}, {MARKERS['records'][0]}); did the "
                "benchmark Job print its results, or did aiperf fail before writing them?")
    else:
        origin = found["run_dir"] or path
        for key in ("summary", "csv", "records"):
            if found[key]:
                texts[key] = _read(found[key])

    result = {"source": None, "origin": origin, "summary_raw": None, "blocks": {}, "errors": [],
              "records_count": 0, "all_failed": False, "aiperf_version": None, "schema_version": None,
              "warnings": [], "requests": parse_request_rows(texts["requests"]) if texts["requests"] else [],
              "run_info": parse_run_info(texts["run"])}
    records = parse_records_jsonl(texts["records"]) if texts["records"] else []
    result["records_count"] = len(profiling_records(records))
    if not result["requests"] and found is not None and found["kind"] != "log":
        result["requests"] = job_report.request_rows(records)  # an artifact directory: the full records
    problems = []
    if texts["summary"]:
        try:
            summary = load_json_summary(texts["summary"], origin)
            result.update(source="json", summary_raw=summary, blocks=summary_metrics(summary),
                          aiperf_version=summary.get("aiperf_version"),
                          schema_version=summary.get("schema_version"),
                          errors=group_errors(summary.get("error_summary")))
            if summary.get("was_cancelled"):
                result["warnings"].append("the AIPerf run was cancelled: metrics cover part of the requests")
            if summary.get("is_complete") is False:
                result["warnings"].append(f"the AIPerf run is incomplete: {summary.get('incomplete_reason')}")
        except AIPerfResultsError as exc:
            problems.append(str(exc))
    if result["source"] is None and texts["csv"]:
        try:
            result.update(source="csv", blocks=parse_csv_summary(texts["csv"]))
        except AIPerfResultsError as exc:
            problems.append(str(exc))
    if result["source"] is None and records:
        result.update(source="jsonl", blocks=records_metrics(records))
    if result["source"] is None:
        raise AIPerfResultsError("; ".join(problems) or f"no AIPerf results found in {origin}")
    if problems:
        result["warnings"].extend(f"fell back to {result['source']}: {p}" for p in problems)
    if not result["errors"] and records:
        result["errors"] = group_errors(profiling_records(records))
    passing = _stat(result["blocks"], "request_count", "avg")
    failing = _stat(result["blocks"], "error_request_count", "avg") or 0
    result["all_failed"] = bool(failing) and not passing
    return result

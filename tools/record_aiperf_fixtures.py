#!/usr/bin/env python3
"""Record AIPerf result fixtures from REAL ``aiperf profile`` runs against the real Dynamo runtime.

For each case this serves the model with ai-dynamo's ``dynamo.frontend`` and one ``dynamo.mocker`` engine (vLLM type,
the mocker's own timings) in a network namespace made for it (``mocker_live.served_alone``: as root, with iproute2
and ``.venv-dynamo``), with the offline tokenizer in a temporary HF_HOME, runs the installed ``aiperf`` inside it, and
copies the artifact files the parser reads into ``tests/fixtures/aiperf/<case>/`` with a ``COMMAND.txt`` (exact
command line, aiperf version, what served, wall time, exit code). Failures have real causes: a request whose prompt
is longer than the engine's ``--max-model-len`` is refused by the real frontend (HTTP 500).

Usage::

    .venv/bin/python tools/record_aiperf_fixtures.py [--case NAME ...] [--out DIR] [--keep-tmp]

Nothing leaves the namespace's loopback, and HF_HUB_OFFLINE=1 is set.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kubesim.standins import dynamo_runtime as rt  # noqa: E402
from kubesim.standins import mocker_live  # noqa: E402
from kubesim.standins.model_servers import runtime_unavailable  # noqa: E402
from kubesim.tokenizer import write_hf_cache_tokenizer  # noqa: E402

MODEL = "meta-models/Muse-Spark-Open-816B-A42B-NVFP4"
BLOCK = 512  # mooncake_trace tokens per hash id
MAX_FIXTURE_FILE = 150_000  # bytes; profile_export.jsonl is trimmed to this
COPY = ("profile_export_aiperf.json", "profile_export_aiperf.csv", "profile_export.jsonl",
        ".aiperf_results_ready.json", "phase_manifest.json",
        "phases/warmup/profile_export_aiperf.json", "phases/warmup/profile_export_aiperf.csv",
        "phases/profiling/profile_export_aiperf.json", "phases/profiling/profile_export_aiperf.csv")

# name -> (the engine's --max-model-len (None: the mocker's default), extra aiperf args, use --artifact-dir (False: let
# aiperf auto-name)). The trace's prompts run from 600 to 2000 tokens: past 1536 a request is refused, below 600 all.
CASES: dict[str, tuple[int | None, list[str], bool]] = {
    "streaming_trace": (None, ["--streaming", "--concurrency", "4", "--warmup-request-count", "2"], True),
    "partial_failures": (1536, ["--streaming", "--concurrency", "4"], True),
    "all_failed": (512, ["--streaming", "--concurrency", "4"], True),
    "non_streaming": (None, ["--concurrency", "4"], False),
    # SLOs some requests meet and some miss
    "goodput_slo": (None, ["--streaming", "--concurrency", "4", "--goodput",
                           "time_to_first_token:70 inter_token_latency:9.5"], True),
}


def make_trace(n: int = 30, seed: int = 7) -> list[dict]:
    """Mooncake trace lines: 600-2000 input tokens, shared prefixes, respecting the 512-token block rule."""
    lines, state, next_id = [], seed, 1000
    for _ in range(n):
        state = (1103515245 * state + 12345) % (1 << 31)
        isl = 600 + state % 1401
        osl = 16 + (state >> 8) % 48
        blocks = -(-isl // BLOCK)  # ceil: the last block holds isl - (blocks-1)*512 in (0, 512]
        shared = min(blocks - 1, (state >> 4) % 3)  # a few lines share 0..2 prefix blocks
        hash_ids = list(range(shared))
        for _ in range(blocks - shared):
            hash_ids.append(next_id)
            next_id += 1
        lines.append({"input_length": isl, "output_length": osl, "hash_ids": hash_ids})
    return lines


def aiperf_version(aiperf: str) -> str:
    out = subprocess.run([aiperf, "--version"], capture_output=True, text=True, check=False)
    text = (out.stdout or out.stderr).strip().splitlines()
    return text[-1] if text else "unknown"


def find_artifacts(root: Path) -> Path:
    hits = sorted({p.parent for p in root.rglob("profile_export.jsonl")} |
                  {p.parent for p in root.rglob("profile_export_aiperf.json") if p.parent.parent.name != "phases"})
    if not hits:
        raise SystemExit(f"aiperf wrote no artifacts under {root}; see its logs/aiperf.log")
    return hits[0]


def copy_artifacts(src: Path, dest: Path) -> list[str]:
    copied = []
    for rel in COPY:
        s = src / rel
        if not s.is_file():
            continue
        d = dest / rel
        d.parent.mkdir(parents=True, exist_ok=True)
        if s.stat().st_size > MAX_FIXTURE_FILE and rel.endswith(".jsonl"):
            kept, size = [], 0
            for line in s.read_text().splitlines(keepends=True):
                if size + len(line) > MAX_FIXTURE_FILE:
                    break
                kept.append(line)
                size += len(line)
            d.write_text("".join(kept))
            copied.append(f"{rel} (trimmed to first {len(kept)} records)")
        else:
            shutil.copyfile(s, d)
            copied.append(rel)
    return copied


def served_by(max_model_len: int | None, snapshot: Path) -> list[rt.RuntimeProcess]:
    """The real frontend (round-robin over one engine) and a vLLM-type mocker on the namespace's loopback."""
    container = {"command": ["python3", "-m", "dynamo.vllm"],
                 "args": ["--max-model-len", str(max_model_len)] if max_model_len else []}
    return [rt.frontend_process("frontend", "frontend", None, http_host="127.0.0.1", http_port=mocker_live.PORT,
                                router_mode="round-robin"),
            rt.mocker_process("engine", "worker", "worker", container, model_path=str(snapshot), served=MODEL,
                              profile_path=None, env={"DYN_TCP_RPC_HOST": "127.0.0.1"})]


def record(case: str, out_dir: Path, work: Path, hf_home: Path, snapshot: Path, aiperf: str, version: str) -> float:
    max_model_len, extra, explicit_dir = CASES[case]
    processes = served_by(max_model_len, snapshot)
    case_work = work / case
    case_work.mkdir(parents=True)
    trace = case_work / "trace.jsonl"
    trace.write_text("".join(json.dumps(line) + "\n" for line in make_trace()))
    cmd = [aiperf, "profile", "--model", MODEL, "--tokenizer", MODEL, "--url", f"http://127.0.0.1:{mocker_live.PORT}",
           "--endpoint-type", "chat", "--custom-dataset-type", "mooncake_trace", "--input-file", "trace.jsonl",
           "--request-count", "24", *extra, "--random-seed", "42", "--ui-type", "none", "--no-server-metrics",
           "--no-gpu-telemetry"]
    if explicit_dir:
        cmd += ["--artifact-dir", "artifacts"]
    env = dict(os.environ, HF_HOME=str(hf_home), HF_HUB_OFFLINE="1", NO_PROXY="127.0.0.1,localhost",
               no_proxy="127.0.0.1,localhost")
    t0 = time.monotonic()
    with mocker_live.served_alone(processes, served=MODEL, workers=1, hf_home=hf_home) as (ns, _):
        proc = subprocess.run(["ip", "netns", "exec", ns, *cmd], cwd=case_work, env=env, capture_output=True,
                              text=True, timeout=600, check=False)
    took = time.monotonic() - t0
    (case_work / "aiperf.stdout").write_text(proc.stdout + proc.stderr)
    src = find_artifacts(case_work / "artifacts")
    dest = out_dir / case
    if dest.exists():
        shutil.rmtree(dest)
    # keep aiperf's auto-named per-run subdirectory when it chose one, so locate() is tested on it
    target = dest / src.relative_to(case_work / "artifacts") if not explicit_dir else dest
    target.mkdir(parents=True)
    copied = copy_artifacts(src, target)
    shutil.copyfile(trace, dest / "trace.jsonl")
    printable = ["aiperf", *cmd[1:]]
    (dest / "COMMAND.txt").write_text(
        f"# Recorded by tools/record_aiperf_fixtures.py (REAL run, not hand-made)\n"
        f"aiperf_version: {version}\n"
        f"command: {shlex.join(printable)}\n"
        f"cwd: <tmp>/{case}  (trace.jsonl beside this file)\n"
        f"env: HF_HOME=<tmp HF cache with kubesim.tokenizer for {MODEL}> HF_HUB_OFFLINE=1\n"
        f"served_by: {json.dumps([shlex.join(p.argv[1:]).replace(str(snapshot), '<tokenizer snapshot>') for p in processes])}\n"
        f"exit_code: {proc.returncode}\n"
        f"wall_time_s: {took:.1f}\n"
        f"files: {', '.join(copied)}\n")
    print(f"{case}: exit {proc.returncode} in {took:.1f}s -> {dest} ({len(copied)} files)", flush=True)
    return took


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="default: all cases")
    parser.add_argument("--out", type=Path, default=REPO / "tests" / "fixtures" / "aiperf")
    parser.add_argument("--aiperf", default=str(Path(sys.executable).parent / "aiperf"))
    parser.add_argument("--keep-tmp", action="store_true")
    args = parser.parse_args(argv)
    if not Path(args.aiperf).exists() and not shutil.which(args.aiperf):
        parser.error(f"aiperf not found at {args.aiperf}; pass --aiperf PATH")
    problem = runtime_unavailable()
    if problem:
        parser.error(f"the Dynamo runtime cannot serve here: {problem}")
    version = aiperf_version(args.aiperf)
    work = Path(tempfile.mkdtemp(prefix="aiperf-fixtures-"))
    try:
        hf_home = work / "hf"
        snapshot = write_hf_cache_tokenizer(hf_home, MODEL)
        total = 0.0
        for case in args.case or list(CASES):
            total += record(case, args.out, work, hf_home, snapshot, args.aiperf, version)
        print(f"aiperf {version}: {len(args.case or CASES)} run(s) in {total:.1f}s")
    finally:
        if args.keep_tmp:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

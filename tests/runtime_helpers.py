"""The real Dynamo runtime (ai-dynamo 1.5.1) in a network namespace a test creates: serving a rendered graph there,
and talking to it from a thread that entered the namespace. Used by the runtime's tests and by the monitoring
tests that scrape it with a real Prometheus."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request
import uuid
from contextlib import contextmanager
from pathlib import Path

from kubesim.control_plane.netns import call_inside
from kubesim.standins import dynamo_runtime, mocker_profile
from kubesim.tokenizer import installed_snapshot

REPO = Path(__file__).resolve().parents[1]
HF_HOME = REPO / ".cache" / "huggingface"
MODEL = "meta-models/Muse-Spark-Open-816B-A42B-NVFP4"
TRACE = REPO / "inventories" / "rehearsal-data" / "agentic-rehearsal.jsonl"
PORT = 8000
# worker i serves its metrics on WORKER_METRICS_PORT + i
WORKER_METRICS_PORT = 9100


def runtime_snapshot() -> Path:
    """The rehearsal tokenizer's snapshot, once the runtime's virtualenv is there (``make setup``)."""
    problem = dynamo_runtime.available()
    assert problem is None, problem
    snapshot = installed_snapshot(HF_HOME, MODEL)
    assert snapshot is not None, "the rehearsal tokenizer is missing: run `make setup`"
    return snapshot


@contextmanager
def loopback_netns():
    """A network namespace with only its loopback up, removed afterwards."""
    name = f"inferops-rt-{uuid.uuid4().hex[:6]}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    subprocess.run(["ip", "-n", name, "link", "set", "lo", "up"], check=True)
    try:
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)


def inside(ns: str, fn, *args):
    """Run ``fn(*args)`` on a thread that entered ``ns`` (its sockets live there); return or raise its result."""
    return call_inside(f"/run/netns/{ns}", fn, *args)


def serve(dgd: dict, ns: str, snapshot: Path, tmp_path: Path) -> dynamo_runtime.ServedGraph:
    figures = mocker_profile.PublishedFigures.from_annotations(dgd["metadata"]["annotations"])
    trace = mocker_profile.TraceShape.from_file(TRACE)
    profile = mocker_profile.write(tmp_path / "profile.npz", figures, trace)
    procs = dynamo_runtime.graph_processes(dgd, model_path=str(snapshot), profile_path=profile,
                                           http_host="127.0.0.1", http_port=PORT,
                                           system_port_base=WORKER_METRICS_PORT, trace=trace)
    graph = dynamo_runtime.ServedGraph(procs, discovery_dir=tmp_path / "discovery", log_dir=tmp_path / "logs",
                                       hf_home=HF_HOME, exec_prefix=["ip", "netns", "exec", ns])
    graph.start()
    return graph


def stream(prompt: str, max_tokens: int = 40) -> dict:
    """One streamed chat completion; returns its usage (counted by the runtime), the frontend's own time to first
    token for it (the delta of its TTFT histogram: the server-side figure Prometheus reads) and how many chunks
    carried text (what a client such as AIPerf times its tokens by)."""
    before = histogram("time_to_first_token_seconds")
    body = {"model": MODEL, "messages": [{"role": "user", "content": prompt}], "max_tokens": max_tokens,
            "stream": True, "ignore_eos": True, "stream_options": {"include_usage": True}}
    req = urllib.request.Request(f"http://127.0.0.1:{PORT}/v1/chat/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    t0 = time.perf_counter()
    usage, chunks = None, 0
    with urllib.request.urlopen(req, timeout=60) as r:
        for raw in r:
            line = raw.decode().strip()
            if line.startswith("data: {"):
                event = json.loads(line[6:])
                usage = event.get("usage") or usage
                chunks += any((c.get("delta") or {}).get("content") for c in event.get("choices") or [])
    total_ms = (time.perf_counter() - t0) * 1000
    after = histogram("time_to_first_token_seconds")
    assert after[1] == before[1] + 1, (before, after)
    return {"ttft_ms": (after[0] - before[0]) * 1000, "total_ms": total_ms, "usage": usage, "text_chunks": chunks}


def metrics() -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/metrics", timeout=5) as r:
        return r.read().decode()


def histogram(name: str) -> tuple[float, int]:
    """(sum, count) of the frontend's histogram ``dynamo_frontend_<name>``."""
    total, count = 0.0, 0
    for line in metrics().splitlines():
        if line.startswith(f"dynamo_frontend_{name}_sum"):
            total += float(line.rsplit(" ", 1)[1])
        elif line.startswith(f"dynamo_frontend_{name}_count"):
            count += int(float(line.rsplit(" ", 1)[1]))
    return total, count


def prompt(words: int, seed: str) -> str:
    return " ".join(f"{seed}{i % 97} token{i}" for i in range(words))

"""The real Dynamo runtime (ai-dynamo 1.5.1 frontend and mocker engines) serves the graphs the collection
renders, with the timings of the profile generated from the catalog, inside a network namespace this
test creates (every connection stays on that namespace's loopback)."""

from __future__ import annotations

import json
import subprocess
import threading
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils import render
from ansible_collections.inferops.dynamo.plugins.module_utils.plan import build_plan
from kubesim.control_plane.netns import enter
from kubesim.standins import dynamo_runtime, mocker_profile
from kubesim.tokenizer import installed_snapshot

REPO = Path(__file__).resolve().parents[2]
HF_HOME = REPO / ".cache" / "huggingface"
MODEL = "meta-models/Muse-Spark-Open-816B-A42B-NVFP4"
TRACE = REPO / "inventories" / "rehearsal-data" / "agentic-rehearsal.jsonl"
PORT = 8000

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module")
def runtime_ready():
    problem = dynamo_runtime.available()
    assert problem is None, problem
    snapshot = installed_snapshot(HF_HOME, MODEL)
    assert snapshot is not None, "the rehearsal tokenizer is missing: run `make setup`"
    return snapshot


@pytest.fixture
def namespace():
    """A network namespace with only its loopback up, removed afterwards."""
    name = f"inferops-rt-{uuid.uuid4().hex[:6]}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    subprocess.run(["ip", "-n", name, "link", "set", "lo", "up"], check=True)
    yield name
    subprocess.run(["ip", "netns", "del", name], check=False)


def inside(ns: str, fn, *args):
    """Run ``fn(*args)`` on a thread that entered ``ns`` (its sockets live there); return or raise its result."""
    out: dict = {}

    def run():
        try:
            enter(f"/run/netns/{ns}")
            out["value"] = fn(*args)
        except BaseException as exc:  # handed to the caller
            out["error"] = exc

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


def serve(dgd: dict, ns: str, snapshot: Path, tmp_path: Path) -> dynamo_runtime.ServedGraph:
    figures = mocker_profile.PublishedFigures.from_annotations(dgd["metadata"]["annotations"])
    profile = mocker_profile.write(tmp_path / "profile.npz", figures, mocker_profile.TraceShape.from_file(TRACE))
    procs = dynamo_runtime.graph_processes(dgd, model_path=str(snapshot), profile_path=profile,
                                           http_host="127.0.0.1", http_port=PORT)
    graph = dynamo_runtime.ServedGraph(procs, discovery_dir=tmp_path / "discovery", log_dir=tmp_path / "logs",
                                       hf_home=HF_HOME, exec_prefix=["ip", "netns", "exec", ns])
    graph.start()
    return graph


def stream(prompt: str, max_tokens: int = 40) -> dict:
    """One streamed chat completion; returns its usage (counted by the runtime) and the frontend's own
    time to first token for it (the delta of its TTFT histogram: the server-side figure Prometheus reads)."""
    before = histogram("time_to_first_token_seconds")
    body = {"model": MODEL, "messages": [{"role": "user", "content": prompt}], "max_tokens": max_tokens,
            "stream": True, "ignore_eos": True, "stream_options": {"include_usage": True}}
    req = urllib.request.Request(f"http://127.0.0.1:{PORT}/v1/chat/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    t0 = time.perf_counter()
    usage = None
    with urllib.request.urlopen(req, timeout=60) as r:
        for raw in r:
            line = raw.decode().strip()
            if line.startswith("data: {"):
                usage = json.loads(line[6:]).get("usage") or usage
    total_ms = (time.perf_counter() - t0) * 1000
    after = histogram("time_to_first_token_seconds")
    assert after[1] == before[1] + 1, (before, after)
    return {"ttft_ms": (after[0] - before[0]) * 1000, "total_ms": total_ms, "usage": usage}


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


def _prompt(words: int, seed: str) -> str:
    return " ".join(f"{seed}{i % 97} token{i}" for i in range(words))


@pytest.mark.timing
def test_aggregated_target_is_served_with_its_published_timings_and_a_real_prefix_cache(
        runtime_ready, namespace, tmp_path):
    dgd = render.dynamo_graph_deployment(build_plan({"sku": "gb300", "mode": "agg"}), "muse")
    figures = mocker_profile.PublishedFigures.from_annotations(dgd["metadata"]["annotations"])
    trace = mocker_profile.TraceShape.from_file(TRACE)
    graph = serve(dgd, namespace, runtime_ready, tmp_path)
    try:
        inside(namespace, dynamo_runtime.wait_serving, f"http://127.0.0.1:{PORT}", MODEL, 1, 90.0, graph)
        prompt = _prompt(trace.median_new_tokens // 4, "a")
        cold = inside(namespace, stream, prompt)
        warm = inside(namespace, stream, prompt)
    finally:
        graph.stop()
    n = cold["usage"]["prompt_tokens"]
    expected = mocker_profile.prefill_ms(figures, trace, n) + figures.itl_ms
    # the mocker's prefill of the whole prompt plus one decode step, and nothing of ours in between
    assert expected * 0.8 < cold["ttft_ms"] < expected * 1.5 + 50, (cold, expected)
    # the same prompt again: the mocker's prefix cache holds it, so only its last block is prefilled
    # (one worker behind the frontend: nothing else can make the second request faster)
    assert warm["ttft_ms"] < cold["ttft_ms"] * 0.6, (cold, warm)
    assert cold["usage"]["completion_tokens"] == 40
    decode_ms = (cold["total_ms"] - cold["ttft_ms"]) / (cold["usage"]["completion_tokens"] - 1)
    # the profile's step, not the mocker's own default (about 6 ms a step at an empty cache)
    assert figures.itl_ms * 0.8 < decode_ms < figures.itl_ms * 2.0, (decode_ms, figures.itl_ms)


def test_disaggregated_target_hands_every_request_from_a_prefill_to_a_decode_worker(
        runtime_ready, namespace, tmp_path):
    dgd = render.dynamo_graph_deployment(build_plan({"sku": "gb300", "mode": "disagg"}), "muse")
    graph = serve(dgd, namespace, runtime_ready, tmp_path)
    try:
        health = inside(namespace, dynamo_runtime.wait_serving, f"http://127.0.0.1:{PORT}", MODEL, 2, 90.0, graph)
        answer = inside(namespace, stream, _prompt(200, "d"))
        text = inside(namespace, metrics)
    finally:
        graph.stop()
    components = sorted({i["component"] for i in health["instances"] if i["endpoint"] == "generate"})
    assert len(components) == 2, health
    assert answer["usage"]["completion_tokens"] == 40
    by_type: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.startswith("dynamo_frontend_worker_") and "worker_type=" in line:
            by_type.setdefault(line.split('worker_type="')[1].split('"')[0], []).append(line)
    # the prefill worker read the whole prompt, the decode worker produced the tokens
    prefill_isl = [float(x.rsplit(" ", 1)[1]) for x in by_type.get("prefill", [])
                   if x.startswith("dynamo_frontend_worker_last_input_sequence_tokens")]
    assert prefill_isl == [answer["usage"]["prompt_tokens"]], by_type
    assert by_type.get("decode"), f"no decode worker in the frontend's metrics: {sorted(by_type)}"

"""The real Dynamo runtime (ai-dynamo 1.5.1 frontend and mocker engines) serves the graphs the collection
renders, with the timings of the profile generated from the catalog, inside a network namespace this
test creates (every connection stays on that namespace's loopback)."""

from __future__ import annotations

import json

import pytest
from runtime_helpers import (
    MODEL,
    PORT,
    TRACE,
    inside,
    loopback_netns,
    metrics,
    prompt,
    runtime_snapshot,
    serve,
    stream,
)

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan
from ansible_collections.inferops.dynamo.plugins.module_utils.render import objects as render
from kubesim.standins import dynamo_runtime, mocker_calibration, mocker_profile, operator_rules

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module")
def runtime_ready():
    return runtime_snapshot()


@pytest.fixture
def namespace():
    with loopback_netns() as name:
        yield name


@pytest.mark.timing
def test_aggregated_target_is_served_with_its_published_timings_and_a_real_prefix_cache(
        runtime_ready, namespace, tmp_path):
    dgd = render.dynamo_graph_deployment(build_plan({"sku": "gb300", "mode": "agg"}), "muse")
    figures = mocker_profile.PublishedFigures.from_annotations(dgd["metadata"]["annotations"])
    trace = mocker_profile.TraceShape.from_file(TRACE)
    graph = serve(dgd, namespace, runtime_ready, tmp_path)
    try:
        inside(namespace, dynamo_runtime.wait_serving, f"http://127.0.0.1:{PORT}", MODEL, 1, 90.0, graph)
        text = prompt(trace.median_new_tokens // 4, "a")
        cold = inside(namespace, stream, text)
        warm = inside(namespace, stream, text)
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
    # every generated token reaches the client as text: a token the tokenizer cannot decode alone streams nothing,
    # and a client's TTFT and inter-token latency would stretch over it
    assert cold["text_chunks"] == warm["text_chunks"] == 40, (cold, warm)
    decode_ms = (cold["total_ms"] - cold["ttft_ms"]) / (cold["usage"]["completion_tokens"] - 1)
    # the profile's step, not the mocker's own default (about 6 ms a step at an empty cache)
    assert figures.itl_ms * 0.8 < decode_ms < figures.itl_ms * 2.0, (decode_ms, figures.itl_ms)


def test_disaggregated_target_hands_every_request_from_a_prefill_to_a_decode_worker(
        runtime_ready, namespace, tmp_path):
    dgd = render.dynamo_graph_deployment(build_plan({"sku": "gb300", "mode": "disagg"}), "muse")
    graph = serve(dgd, namespace, runtime_ready, tmp_path)
    try:
        health = inside(namespace, dynamo_runtime.wait_serving, f"http://127.0.0.1:{PORT}", MODEL, 2, 90.0, graph)
        answer = inside(namespace, stream, prompt(200, "d"))
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


@pytest.mark.timing
def test_calibration_lands_the_mockers_online_replay_on_the_published_figures(runtime_ready, tmp_path):
    dgd = render.dynamo_graph_deployment(build_plan({"sku": "gb300", "mode": "agg"}), "muse")
    figures = mocker_profile.PublishedFigures.from_annotations(dgd["metadata"]["annotations"])
    trace = mocker_profile.TraceShape.from_file(TRACE)
    worker = next(c for c in operator_rules.components(dgd) if c.type != "frontend")
    container = worker.template["spec"]["containers"][0]
    blocks = mocker_profile.kv_blocks(figures, trace, dynamo_runtime.block_size(container))
    engine = mocker_calibration.Engines(tuple(dynamo_runtime.mocker_args(worker.type, container, 1.0, blocks)))
    replay = mocker_calibration.replay_measure(figures, trace, TRACE, engine, python=dynamo_runtime.runtime_python())
    # the profile of one request alone, replayed at the published load: the mocker's own queueing and prefill
    # pauses put it well off the published figures, which is why calibration exists
    alone = replay(mocker_profile.Scales())
    assert alone["ttft_p50_ms"] > 1.5 * figures.ttft_ms, alone
    assert alone["tokens_per_s_per_user_p50"] < 0.95 * figures.tokens_per_s_per_user, alone
    profile = mocker_calibration.calibrated_profile(figures, TRACE, engine, python=dynamo_runtime.runtime_python(),
                                                    cache_dir=tmp_path)
    record = json.loads(profile.with_suffix(".json").read_text())
    measured = record["stages"]["replay"]["measured"]
    assert measured["requests"] == 36
    assert abs(measured["ttft_p50_ms"] / figures.ttft_ms - 1) <= mocker_calibration.TOLERANCE, record
    # the per-user speed lands on its goal, where it and the run's output tokens/s are equally far from their figures,
    # and both stay inside the gate's default tolerance (10 %)
    goal = mocker_calibration.speed_goal(figures, measured)
    assert abs(measured["tokens_per_s_per_user_p50"] / goal - 1) <= mocker_calibration.TOLERANCE, record
    assert abs(goal / figures.tokens_per_s_per_user - 1) <= mocker_calibration.SPEED_SHIFT_MAX + 1e-9, record
    assert abs(measured["tokens_per_s_per_user_p50"] / figures.tokens_per_s_per_user - 1) < 0.10, record
    assert abs(measured["output_tokens_per_s"] / figures.output_tokens_per_s - 1) < 0.10, record
    assert record["scales"]["prefill"] < 1 and record["scales"]["decode"] < 1, record

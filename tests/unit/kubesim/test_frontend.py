"""The simulated OpenAI-compatible frontend, exercised over real HTTP on loopback."""

import http.client
import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from kubesim.frontend import (
    CLIENT_OVERHEAD_MS,
    NATURAL_REPLY_TOKENS,
    Frontend,
    FrontendProfile,
    is_error_request,
    slowdown,
)

MODEL = "org/test-model"


@pytest.fixture
def frontend():
    fe = Frontend(FrontendProfile(served_model=MODEL, ttft_ms=40, tokens_per_s_per_user=200, expected_concurrency=2))
    fe.start()
    yield fe
    fe.stop()


def request(fe, path, body=None, method=None):
    """-> (status, headers, raw body text, seconds to first body byte, total seconds)."""
    conn = http.client.HTTPConnection("127.0.0.1", fe.port, timeout=30)
    t0 = time.monotonic()
    conn.request(method or ("POST" if body is not None else "GET"), path,
                 body=json.dumps(body) if body is not None else None, headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    first = resp.read(1)
    t_first = time.monotonic() - t0
    rest = resp.read()
    total = time.monotonic() - t0
    conn.close()
    return resp.status, dict(resp.getheaders()), (first + rest).decode(), t_first, total


def sse_events(text):
    return [line[len("data: "):] for line in text.split("\n") if line.startswith("data: ")]


def chat(content="Tell me a story", **extra):
    return {"model": MODEL, "messages": [{"role": "system", "content": "be brief"},
                                         {"role": "user", "content": content}], **extra}


def test_models_and_health(frontend):
    status, _, body, _, _ = request(frontend, "/v1/models")
    assert status == 200 and [m["id"] for m in json.loads(body)["data"]] == [MODEL]
    assert request(frontend, "/health")[0] == 200


def test_non_streaming_chat_honours_max_tokens_and_reports_usage(frontend):
    status, _, body, _, total = request(frontend, "/v1/chat/completions", chat(max_tokens=5))
    data = json.loads(body)
    assert status == 200 and data["object"] == "chat.completion"
    assert len(data["choices"][0]["message"]["content"].split()) == 5
    assert data["choices"][0]["finish_reason"] == "length"
    assert data["usage"]["completion_tokens"] == 5 and data["usage"]["prompt_tokens"] > 0
    assert total >= (40 - CLIENT_OVERHEAD_MS + 4 * 5) / 1000 * 0.9


def test_streaming_chat_with_usage(frontend):
    status, headers, body, t_first, _ = request(
        frontend, "/v1/chat/completions",
        chat(max_completion_tokens=7, stream=True, stream_options={"include_usage": True}))
    assert status == 200 and headers["Content-Type"].startswith("text/event-stream")
    events = sse_events(body)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    content = [c["choices"][0]["delta"]["content"] for c in chunks if c["choices"]]
    assert len(content) == 7
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert chunks[-2]["choices"][0]["finish_reason"] == "length"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 7
    assert t_first >= (40 - CLIENT_OVERHEAD_MS) / 1000 * 0.9  # TTFT ~ ttft_ms, less the client's share


def test_streaming_completions_without_usage(frontend):
    status, _, body, _, _ = request(frontend, "/v1/completions",
                                    {"model": MODEL, "prompt": "Once upon", "max_tokens": 3, "stream": True})
    events = sse_events(body)
    chunks = [json.loads(e) for e in events[:-1]]
    assert status == 200 and events[-1] == "[DONE]" and len(chunks) == 3
    assert all(c["object"] == "text_completion" and "usage" not in c for c in chunks)


def test_non_streaming_completions(frontend):
    data = json.loads(request(frontend, "/v1/completions", {"model": MODEL, "prompt": "hi", "max_tokens": 4})[2])
    assert data["usage"]["completion_tokens"] == 4 and len(data["choices"][0]["text"].split()) == 4


def test_smoke_prompt_answers_exactly_ready(frontend):
    data = json.loads(request(frontend, "/v1/chat/completions", chat("Reply with exactly: READY", max_tokens=64))[2])
    assert data["choices"][0]["message"]["content"] == "READY"
    assert data["usage"]["completion_tokens"] == 1
    body = request(frontend, "/v1/chat/completions", chat("Reply with exactly: READY", stream=True))[2]
    text = "".join(json.loads(e)["choices"][0]["delta"].get("content", "") for e in sse_events(body)[:-1])
    assert text == "READY"


def test_ignore_eos_controls_natural_stop(frontend):
    frontend.update(tokens_per_s_per_user=1e6, ttft_ms=0)
    n = NATURAL_REPLY_TOKENS + 3
    natural = json.loads(request(frontend, "/v1/completions", {"model": MODEL, "prompt": "x", "max_tokens": n})[2])
    forced = json.loads(request(frontend, "/v1/completions",
                                {"model": MODEL, "prompt": "x", "max_tokens": n, "ignore_eos": True})[2])
    assert natural["usage"]["completion_tokens"] == NATURAL_REPLY_TOKENS
    assert natural["choices"][0]["finish_reason"] == "stop"
    assert forced["usage"]["completion_tokens"] == n


def test_unknown_model_is_404_like_vllm(frontend):
    status, _, body, _, _ = request(frontend, "/v1/chat/completions", {**chat(), "model": "other"})
    assert status == 404 and json.loads(body)["error"]["message"] == "The model `other` does not exist."


def test_bad_requests(frontend):
    assert request(frontend, "/v1/chat/completions", {"model": MODEL})[0] == 400
    assert request(frontend, "/v1/chat/completions", chat(max_tokens=0))[0] == 400


def test_error_injection_is_evenly_spread_and_live(frontend):
    frontend.update(error_rate=0.5, error_status=503, ttft_ms=0, tokens_per_s_per_user=1e5)
    results = [request(frontend, "/v1/chat/completions", chat(max_tokens=1)) for _ in range(10)]
    failed = [r for r in results if r[0] == 503]
    assert len(failed) == 5
    err = json.loads(failed[0][2])["error"]
    assert err["code"] == 503 and err["type"] == "ServiceUnavailableError" and "Injected failure" in err["message"]
    frontend.update(error_rate=0.0)
    assert all(request(frontend, "/v1/chat/completions", chat(max_tokens=1))[0] == 200 for _ in range(3))


def test_speed_factor_slows_down(frontend):
    # 100 tokens (0.52 s quiet, 1.04 s slowed): with 20 (0.125 s) a 65 ms stall of a loaded worker during the fast
    # request alone made it look only 1.3x faster (make test, 2026-12-06)
    body = chat(max_tokens=100)
    fast = request(frontend, "/v1/chat/completions", body)[4]
    frontend.update(speed_factor=0.5)
    slow = request(frontend, "/v1/chat/completions", body)[4]
    assert slow > fast * 1.6


def test_concurrency_above_expected_slows_each_request(frontend):
    body = chat(max_tokens=30, stream=True)
    alone = request(frontend, "/v1/chat/completions", body)[4]
    with ThreadPoolExecutor(max_workers=12) as pool:
        crowded = list(pool.map(lambda _: request(frontend, "/v1/chat/completions", body)[4], range(12)))
    assert frontend.stats["max_inflight"] >= 8
    assert sorted(crowded)[len(crowded) // 2] > alone * 1.5


def test_update_validates():
    fe = Frontend(FrontendProfile(served_model=MODEL))
    with pytest.raises(ValueError, match="unknown FrontendProfile field"):
        fe.update(colour="red")
    with pytest.raises(ValueError, match="error_rate must be within"):
        fe.update(error_rate=2)
    with pytest.raises(ValueError, match="speed_factor must be > 0"):
        Frontend(FrontendProfile(served_model=MODEL, speed_factor=0))


def test_stop_closes_port():
    fe = Frontend(FrontendProfile(served_model=MODEL))
    port = fe.start()
    assert port > 0 and fe.port == port
    fe.stop()
    with pytest.raises(OSError):
        http.client.HTTPConnection("127.0.0.1", port, timeout=2).request("GET", "/health")


def test_pure_helpers():
    assert [is_error_request(i, 0.2) for i in range(10)].count(True) == 2
    assert all(is_error_request(i, 1.0) for i in range(5)) and not any(is_error_request(i, 0) for i in range(5))
    assert slowdown(4, 16) == 1.0 and slowdown(32, 16) == 1.5 and slowdown(64, 16) == 2.5

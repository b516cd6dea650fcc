"""Simulated OpenAI-compatible frontend of the rehearsal cluster.

It stands in for the Dynamo frontend (``/v1/models``, ``/v1/chat/completions``,
``/v1/completions``, ``/health``) so the smoke test and AIPerf benchmarks of the
collection run for real against loopback, without a GPU.

Behaviour (imperfect on purpose, but deterministic):

* time to first token = ``ttft_ms`` and inter-token latency = ``1000 / tokens_per_s_per_user``
  ms, both divided by ``speed_factor`` and multiplied by the concurrency slowdown
  ``1 + 0.5 * max(0, inflight / expected_concurrency - 1)``, plus a deterministic jitter
  of at most +/-8 % per token;
* a fraction ``error_rate`` of the requests (spread evenly, not random) is answered with
  ``error_status`` and an OpenAI-style JSON error body;
* a request for another model gets a 404 like vLLM;
* the smoke prompt whose last user message is ``Reply with exactly: READY`` gets ``READY``.

The server runs aiohttp on its own event loop in a background thread, so dozens of
concurrent streams cost almost nothing on two cores.  Profile fields can be changed
live with :meth:`Frontend.update` (fault injection).

Standalone::

    python -m kubesim.frontend --port 18000 --model M --ttft-ms 200 --tps-per-user 50 [--error-rate 0.1]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import math
import signal
import threading
import time
import uuid
import zlib
from dataclasses import dataclass
from typing import Any

from aiohttp import web

SMOKE_PROMPT = "Reply with exactly: READY"
SMOKE_ANSWER = "READY"
# Without ``ignore_eos`` the simulated model "emits EOS" after this many tokens at most.
NATURAL_REPLY_TOKENS = 4096
DEFAULT_MAX_TOKENS = 16
MAX_MODEL_LEN = 131072
JITTER = 0.08

WORDS = (
    "the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "while", "model", "keeps",
    "streaming", "tokens", "across", "rack", "to", "every", "user", "that", "asked", "for", "one", "more",
    "answer", "about", "inference", "and", "throughput", "latency", "cache", "prefill", "decode", "router",
    "worker", "frontend", "kernel", "memory", "network",
)

_ERROR_TYPES = {
    400: "BadRequestError",
    404: "NotFoundError",
    408: "RequestTimeoutError",
    429: "RateLimitError",
    500: "InternalServerError",
    502: "BadGatewayError",
    503: "ServiceUnavailableError",
    504: "GatewayTimeoutError",
}


@dataclass
class FrontendProfile:
    served_model: str
    ttft_ms: float = 200.0
    tokens_per_s_per_user: float = 50.0
    expected_concurrency: int = 16
    speed_factor: float = 1.0  # <1.0 slower than expected (latencies divided by it)
    error_rate: float = 0.0  # fraction of requests answered with error_status
    error_status: int = 500


def validate_profile(profile: FrontendProfile) -> None:
    """Raise ValueError with an actionable message when a profile field is out of range."""
    if not profile.served_model:
        raise ValueError("served_model must be a non-empty model name")
    if profile.ttft_ms < 0:
        raise ValueError(f"ttft_ms must be >= 0, got {profile.ttft_ms}")
    if profile.tokens_per_s_per_user <= 0:
        raise ValueError(f"tokens_per_s_per_user must be > 0, got {profile.tokens_per_s_per_user}")
    if profile.expected_concurrency < 1:
        raise ValueError(f"expected_concurrency must be >= 1, got {profile.expected_concurrency}")
    if profile.speed_factor <= 0:
        raise ValueError(f"speed_factor must be > 0, got {profile.speed_factor}")
    if not 0.0 <= profile.error_rate <= 1.0:
        raise ValueError(f"error_rate must be within [0, 1], got {profile.error_rate}")
    if not 400 <= int(profile.error_status) <= 599:
        raise ValueError(f"error_status must be an HTTP error status (400-599), got {profile.error_status}")


CLIENT_OVERHEAD_MS = 15.0


def slowdown(inflight: int, expected_concurrency: int) -> float:
    """Latency multiplier once more requests are in flight than the deployment was sized for."""
    return 1.0 + 0.5 * max(0.0, inflight / max(1, expected_concurrency) - 1.0)


def jitter(request_no: int, token_no: int) -> float:
    """Deterministic multiplier in [1 - JITTER, 1 + JITTER]."""
    h = zlib.crc32(f"{request_no}:{token_no}".encode()) / 0xFFFFFFFF
    return 1.0 + JITTER * (2.0 * h - 1.0)


def is_error_request(request_no: int, error_rate: float) -> bool:
    """Spread errors evenly: exactly floor(n * rate) of the first n requests fail."""
    if error_rate <= 0:
        return False
    if error_rate >= 1:
        return True
    return math.floor((request_no + 1) * error_rate) > math.floor(request_no * error_rate)


def estimate_tokens(text: str) -> int:
    """Rough prompt token count (about 4 characters per token), at least 1 for a non-empty text."""
    return max(1, round(len(text) / 4)) if text else 0


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def last_user_message(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return _content_text(message.get("content"))
    return ""


def reply_tokens(prompt_last: str, max_tokens: int, ignore_eos: bool) -> list[str]:
    """The token strings of the answer (their count is the completion_tokens)."""
    if prompt_last.strip() == SMOKE_PROMPT:
        return [SMOKE_ANSWER]
    n = max_tokens if ignore_eos else min(max_tokens, NATURAL_REPLY_TOKENS)
    return [(WORDS[0].capitalize() if i == 0 else " " + WORDS[i % len(WORDS)]) for i in range(n)]


def error_body(message: str, status: int) -> dict[str, Any]:
    return {"error": {"message": message, "type": _ERROR_TYPES.get(status, "APIError"), "param": None,
                      "code": status}}


class _BadRequest(Exception):
    pass


class Frontend:
    """OpenAI-compatible simulated frontend served from a background thread."""

    def __init__(self, profile: FrontendProfile, host: str = "127.0.0.1", port: int = 0, netns_path: str | None = None):
        validate_profile(profile)
        self._profile = profile
        self._host = host
        self._requested_port = port
        self._netns_path = netns_path
        self._port = 0
        self._lock = threading.Lock()
        self._request_no = 0
        self._inflight = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._start_error: BaseException | None = None
        self.stats = {"requests": 0, "errors": 0, "completed": 0, "max_inflight": 0}

    # ----------------------------------------------------------------- public API
    @property
    def port(self) -> int:
        return self._port

    @property
    def profile(self) -> FrontendProfile:
        return self._profile

    @property
    def inflight(self) -> int:
        return self._inflight

    def update(self, **changes: Any) -> None:
        """Change profile fields live, e.g. ``update(speed_factor=0.5, error_rate=0.2)``."""
        fields = {f.name for f in dataclasses.fields(FrontendProfile)}
        unknown = sorted(set(changes) - fields)
        if unknown:
            raise ValueError(f"unknown FrontendProfile field(s) {unknown}; valid: {sorted(fields)}")
        new = dataclasses.replace(self._profile, **changes)
        validate_profile(new)
        self._profile = new  # one reference swap: handlers read the new values on their next token

    def start(self) -> int:
        if self._thread is not None:
            return self._port
        self._ready.clear()
        self._thread = threading.Thread(target=self._run, name=f"kubesim-frontend-{self._profile.served_model}",
                                        daemon=True)
        self._thread.start()
        self._ready.wait(timeout=30)
        if self._start_error is not None:
            self._thread.join(timeout=5)
            self._thread = None
            raise RuntimeError(f"frontend could not listen on {self._host}:{self._requested_port}: "
                               f"{self._start_error}") from self._start_error
        if not self._ready.is_set():
            raise RuntimeError("frontend did not start within 30 s")
        return self._port

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if loop.is_running():
            fut = asyncio.run_coroutine_threadsafe(self._shutdown(), loop)
            try:
                fut.result(timeout=10)
            except Exception:
                pass
            loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        self._thread = None
        self._loop = None

    def __enter__(self) -> Frontend:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ----------------------------------------------------------------- server plumbing
    def _run(self) -> None:
        if self._netns_path:
            # Sockets belong to the network namespace of the thread that opens them: this one
            # serves a pod IP inside the rehearsal cluster's namespace.
            from .control_plane.netns import enter

            enter(self._netns_path)
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._setup())
        except BaseException as exc:
            self._start_error = exc
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _setup(self) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get("/health", self._health)
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/completions", self._completions)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self._host, self._requested_port, backlog=1024)
        await site.start()
        sockets = site._server.sockets if site._server else []  # type: ignore[union-attr]
        self._port = sockets[0].getsockname()[1] if sockets else self._requested_port

    async def _shutdown(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # ----------------------------------------------------------------- handlers
    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "healthy", "model": self._profile.served_model})

    async def _models(self, request: web.Request) -> web.Response:
        p = self._profile
        return web.json_response({"object": "list", "data": [{
            "id": p.served_model, "object": "model", "created": 0, "owned_by": "kubesim",
            "root": p.served_model, "max_model_len": MAX_MODEL_LEN}]})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        return await self._generate(request, chat=True)

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        return await self._generate(request, chat=False)

    @staticmethod
    def _parse(body: Any, chat: bool) -> tuple[str, str, int, bool, bool, bool]:
        """-> (prompt text, last user text, max tokens, stream, include_usage, ignore_eos)."""
        if not isinstance(body, dict):
            raise _BadRequest("request body must be a JSON object")
        if chat:
            messages = body.get("messages")
            if not isinstance(messages, list) or not messages:
                raise _BadRequest("'messages' must be a non-empty list")
            prompt = "\n".join(_content_text(m.get("content")) for m in messages if isinstance(m, dict))
            last = last_user_message(messages)
        else:
            raw = body.get("prompt")
            if isinstance(raw, list):
                raw = " ".join(str(x) for x in raw)
            if not isinstance(raw, str):
                raise _BadRequest("'prompt' must be a string")
            prompt = raw
            last = raw.strip().splitlines()[-1] if raw.strip() else ""
        max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
        if max_tokens is None:
            max_tokens = DEFAULT_MAX_TOKENS
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise _BadRequest(f"max_tokens must be a positive integer, got {max_tokens!r}")
        stream = bool(body.get("stream", False))
        include_usage = bool((body.get("stream_options") or {}).get("include_usage", False))
        ignore_eos = bool(body.get("ignore_eos", False))
        return prompt, last, max_tokens, stream, include_usage, ignore_eos

    def _next_request_no(self) -> int:
        with self._lock:
            n = self._request_no
            self._request_no += 1
            self.stats["requests"] += 1
            return n

    async def _generate(self, request: web.Request, chat: bool) -> web.StreamResponse:
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return web.json_response(error_body("request body is not valid JSON", 400), status=400)
        profile = self._profile
        model = body.get("model", profile.served_model) if isinstance(body, dict) else None
        if isinstance(body, dict) and model != profile.served_model:
            return web.json_response(error_body(f"The model `{model}` does not exist.", 404), status=404)
        try:
            prompt, last, max_tokens, stream, include_usage, ignore_eos = self._parse(body, chat)
        except _BadRequest as exc:
            return web.json_response(error_body(str(exc), 400), status=400)

        request_no = self._next_request_no()
        if is_error_request(request_no, profile.error_rate):
            self.stats["errors"] += 1
            status = int(profile.error_status)
            return web.json_response(error_body("Injected failure (kubesim frontend fault injection)", status),
                                     status=status)

        tokens = reply_tokens(last, max_tokens, ignore_eos)
        finish_reason = "length" if len(tokens) >= max_tokens else "stop"
        usage = {"prompt_tokens": estimate_tokens(prompt), "completion_tokens": len(tokens),
                 "total_tokens": estimate_tokens(prompt) + len(tokens)}
        rid = ("chatcmpl-" if chat else "cmpl-") + uuid.uuid4().hex[:24]
        created = int(time.time())
        self._inflight += 1
        self.stats["max_inflight"] = max(self.stats["max_inflight"], self._inflight)
        try:
            if stream:
                return await self._stream(request, chat, rid, created, tokens, finish_reason, usage,
                                          include_usage, request_no)
            await self._pace(len(tokens), request_no)
            text = "".join(tokens)
            if chat:
                choice = {"index": 0, "message": {"role": "assistant", "content": text},
                          "finish_reason": finish_reason, "logprobs": None}
            else:
                choice = {"index": 0, "text": text, "finish_reason": finish_reason, "logprobs": None}
            self.stats["completed"] += 1
            return web.json_response({
                "id": rid, "object": "chat.completion" if chat else "text_completion", "created": created,
                "model": self._profile.served_model, "choices": [choice], "usage": usage})
        finally:
            self._inflight -= 1

    def _delay_s(self, token_no: int, request_no: int) -> float:
        """Delay before token ``token_no`` (0 = first token, i.e. TTFT), using the live profile.

        The first token comes CLIENT_OVERHEAD_MS early: a benchmark client on the same 2-core machine
        adds about that much (request building, loopback, event-loop lag) to the TTFT it measures, so a
        frontend at speed factor 1.0 is measured close to the expected TTFT rather than above it."""
        p = self._profile
        base_ms = max(0.0, p.ttft_ms - CLIENT_OVERHEAD_MS) if token_no == 0 else 1000.0 / p.tokens_per_s_per_user
        factor = slowdown(self._inflight, p.expected_concurrency) * jitter(request_no, token_no)
        return base_ms * factor / p.speed_factor / 1000.0

    async def _pace(self, n_tokens: int, request_no: int) -> None:
        deadline = time.monotonic()
        for i in range(max(1, n_tokens)):
            deadline += self._delay_s(i, request_no)
        await asyncio.sleep(max(0.0, deadline - time.monotonic()))

    async def _stream(self, request: web.Request, chat: bool, rid: str, created: int, tokens: list[str],
                      finish_reason: str, usage: dict[str, int], include_usage: bool,
                      request_no: int) -> web.StreamResponse:
        resp = web.StreamResponse(status=200, headers={"Content-Type": "text/event-stream",
                                                       "Cache-Control": "no-cache"})
        await resp.prepare(request)
        obj = "chat.completion.chunk" if chat else "text_completion"
        model = self._profile.served_model

        def chunk(text: str | None, finish: str | None, first: bool) -> dict[str, Any]:
            if chat:
                delta: dict[str, Any] = {"role": "assistant"} if first else {}
                if text is not None:
                    delta["content"] = text
                choice: dict[str, Any] = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            else:
                choice = {"index": 0, "text": text or "", "logprobs": None, "finish_reason": finish}
            return {"id": rid, "object": obj, "created": created, "model": model, "choices": [choice]}

        async def send(payload: dict[str, Any] | str) -> None:
            data = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
            await resp.write(f"data: {data}\n\n".encode())

        deadline = time.monotonic()
        for i, tok in enumerate(tokens):
            deadline += self._delay_s(i, request_no)
            wait = deadline - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            last = i == len(tokens) - 1
            await send(chunk(tok, finish_reason if last else None, first=i == 0))
        if include_usage:
            await send({"id": rid, "object": obj, "created": created, "model": model, "choices": [],
                        "usage": usage})
        await send("[DONE]")
        await resp.write_eof()
        self.stats["completed"] += 1
        return resp


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kubesim.frontend",
                                     description="Simulated OpenAI-compatible inference frontend.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=18000)
    parser.add_argument("--model", required=True, help="served model name")
    parser.add_argument("--ttft-ms", type=float, default=200.0)
    parser.add_argument("--tps-per-user", type=float, default=50.0, help="output tokens/s per user")
    parser.add_argument("--expected-concurrency", type=int, default=16)
    parser.add_argument("--speed-factor", type=float, default=1.0)
    parser.add_argument("--error-rate", type=float, default=0.0, help="fraction of requests failing")
    parser.add_argument("--error-status", type=int, default=500)
    args = parser.parse_args(argv)
    try:
        fe = Frontend(FrontendProfile(served_model=args.model, ttft_ms=args.ttft_ms,
                                      tokens_per_s_per_user=args.tps_per_user,
                                      expected_concurrency=args.expected_concurrency,
                                      speed_factor=args.speed_factor, error_rate=args.error_rate,
                                      error_status=args.error_status), host=args.host, port=args.port)
        port = fe.start()
    except (ValueError, RuntimeError) as exc:
        parser.error(str(exc))
    print(f"kubesim frontend serving {args.model!r} on http://{args.host}:{port}", flush=True)
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    done.wait()
    fe.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""wait_serving: a frontend that lists the model and its workers is only serving once it answers a completion."""

from __future__ import annotations

import json
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from kubesim.standins import dynamo_runtime

MODEL = "org/model"
HEALTH = {"status": "healthy", "instances": [{"component": "backend", "endpoint": "generate"}]}


@contextmanager
def frontend(refusals: int):
    """A frontend on 127.0.0.1 that lists MODEL and one worker, and refuses its first ``refusals`` completions
    with the 404 a listed model's pipeline gives before it is built."""
    completions = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _answer(self, code: int, body: dict | None = None):
            data = json.dumps(body).encode() if body is not None else b""
            self.send_response(code)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/v1/models":
                self._answer(200, {"object": "list", "data": [{"id": MODEL}]})
            else:
                self._answer(200, HEALTH)

        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            completions.append(self.path)
            if len(completions) <= refusals:
                self._answer(404)
            else:
                self._answer(200, {"choices": [{"text": "x"}]})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", completions
    finally:
        server.shutdown()
        server.server_close()


def test_a_listed_model_that_refuses_completions_is_waited_for():
    with frontend(refusals=2) as (url, completions):
        health = dynamo_runtime.wait_serving(url, MODEL, 1, timeout=10.0)
    assert health == HEALTH
    assert completions == ["/v1/completions"] * 3


def test_a_model_that_never_answers_times_out_saying_what_it_answered():
    with frontend(refusals=10**6) as (url, _), pytest.raises(TimeoutError, match="one-token completion answered 404"):
        dynamo_runtime.wait_serving(url, MODEL, 1, timeout=1.0)

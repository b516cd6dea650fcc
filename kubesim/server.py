"""HTTP front of one simulated API server (stdlib ThreadingHTTPServer, HTTP/1.1 keep-alive)."""

from __future__ import annotations

import http.client
import json
import logging
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from .store import ApiError, dumps

if TYPE_CHECKING:
    from .cluster import SimCluster

log = logging.getLogger("kubesim.server")

VERSION = {"major": "1", "minor": "33", "gitVersion": "v1.33.0-kubesim", "gitCommit": "kubesim",
           "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.24.0",
           "compiler": "gc", "platform": "linux/amd64"}

HOP_HEADERS = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailers",
               "transfer-encoding", "upgrade", "host", "authorization", "content-length"}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, addr, handler, cluster: SimCluster):
        self.cluster = cluster
        self.conns: set[socket.socket] = set()
        self.conns_lock = threading.Lock()
        super().__init__(addr, handler)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kubesim"
    sys_version = ""
    server: _Server

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.server.conns_lock:
            self.server.conns.add(self.connection)

    def finish(self):
        try:
            super().finish()
        finally:
            with self.server.conns_lock:
                self.server.conns.discard(self.connection)

    def log_message(self, format, *args):
        return

    # ------------------------------------------------------------------ plumbing
    def _send(self, code: int, body: Any, ctype: str = "application/json") -> None:
        data = body if isinstance(body, bytes) else dumps(body)
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Audit-Id", "kubesim")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _error(self, err: ApiError) -> None:
        self._send(err.code, err.status())

    def _body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            return self.rfile.read(n)
        if (self.headers.get("Transfer-Encoding") or "").lower() == "chunked":
            out = b""
            while True:
                line = self.rfile.readline()
                size = int(line.strip().split(b";")[0] or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        return b""

    def _auth_ok(self) -> bool:
        token = self.server.cluster.token
        if not token:
            return True
        return self.headers.get("Authorization", "") == f"Bearer {token}"

    def _dispatch(self) -> None:
        cl = self.server.cluster
        try:
            public = self.path.split("?")[0] in ("/version", "/healthz", "/readyz", "/livez")
            if not public and not self._auth_ok():
                self._send(401, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                 "message": "Unauthorized", "reason": "Unauthorized", "code": 401})
                return
            url = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
            body = self._body() if self.command in ("POST", "PUT", "PATCH", "DELETE") else b""
            result = cl.api.handle(self, self.command, url.path, query, body)
            if result is None:  # handler already wrote the response
                return
            code, payload = result
            self._send(code, payload)
        except ApiError as err:
            self._error(err)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as exc:
            log.exception("internal error on %s %s", self.command, self.path.split("?")[0])
            try:
                self._error(ApiError(500, "InternalError", f"Internal error occurred: {type(exc).__name__}: {exc}"))
            except Exception:
                self.close_connection = True

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _dispatch

    # ------------------------------------------------------------------ proxy helper
    def proxy_to(self, port: int, method: str, path: str, query: str, body: bytes) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_HEADERS}
        target = path + ("?" + query if query else "")
        try:
            conn.request(method, target, body=body or None, headers=headers)
            resp = conn.getresponse()
        except OSError as exc:
            conn.close()
            raise ApiError(503, "ServiceUnavailable", f"error trying to reach service: {exc}") from exc
        try:
            self.send_response(resp.status, resp.reason)
            for k, v in resp.getheaders():
                if k.lower() not in HOP_HEADERS:
                    self.send_header(k, v)
            length = resp.getheader("Content-Length")
            if length is not None:
                self.send_header("Content-Length", length)
                self.end_headers()
                self.wfile.write(resp.read())
            else:
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                while True:
                    chunk = resp.read1(65536)
                    if not chunk:
                        break
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        finally:
            conn.close()

    def stream_chunks(self, gen, ctype: str = "text/plain") -> None:
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for chunk in gen:
            if chunk:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class ApiListener:
    """Owns the listening socket; can be taken down (connection refused) and brought back."""

    def __init__(self, cluster: SimCluster, port: int = 0):
        self.cluster = cluster
        self.port = port
        self.httpd: _Server | None = None
        self.thread: threading.Thread | None = None

    def up(self) -> int:
        if self.httpd is not None:
            return self.port
        for attempt in range(50):
            try:
                self.httpd = _Server(("127.0.0.1", self.port), Handler, self.cluster)
                break
            except OSError:
                if attempt == 49:
                    raise
                time.sleep(0.1)
        assert self.httpd is not None
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.1},
                                       name=f"api-{self.cluster.index}", daemon=True)
        self.thread.start()
        return self.port

    def down(self) -> None:
        httpd, self.httpd = self.httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        with httpd.conns_lock:
            conns = list(httpd.conns)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    @property
    def is_up(self) -> bool:
        return self.httpd is not None


def parse_json_or_yaml(body: bytes, ctype: str) -> Any:
    if not body:
        return None
    try:
        return json.loads(body)
    except ValueError:
        if "yaml" not in ctype:
            raise ApiError(400, "BadRequest", "the body of the request was in an unknown format") from None
    import yaml

    try:
        return yaml.safe_load(body)
    except yaml.YAMLError as exc:
        raise ApiError(400, "BadRequest", f"error decoding YAML: {exc}") from exc


def split_path(path: str) -> list[str]:
    return [unquote(p) for p in path.strip("/").split("/") if p != ""]

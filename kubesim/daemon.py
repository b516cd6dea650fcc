"""The background daemon of either backend: its clusters in one process, a loopback control endpoint for
status and faults, and the files clients attach with (``kubesim.pid``, ``daemon.json``, ``kubeconfig``)."""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from .backend import Backend

log = logging.getLogger("kubesim.daemon")


class Daemon:
    def __init__(self, backend: Backend, state_dir: Path):
        self.backend = backend
        self.state_dir = state_dir
        self.control: ThreadingHTTPServer | None = None
        self.stopped = threading.Event()

    def start(self) -> dict:
        self.backend.start()
        self.control = control_server(self)
        threading.Thread(target=self.control.serve_forever, name="control", daemon=True).start()
        kubeconfig = self.state_dir / "kubeconfig"
        kubeconfig.write_text(self.backend.kubeconfig_text())
        os.chmod(kubeconfig, 0o600)
        info = self.info()
        tmp = self.state_dir / "daemon.json.tmp"
        tmp.write_text(json.dumps(info, indent=2))
        tmp.replace(self.state_dir / "daemon.json")
        return info

    def info(self) -> dict:
        return {"pid": os.getpid(), "backend": self.backend.name,
                "control_port": self.control.server_address[1] if self.control else None,
                "kubeconfig": str(self.state_dir / "kubeconfig"), "state_dir": str(self.state_dir),
                **self.backend.info(), "clusters": self.backend.clusters()}

    def fault(self, index: int, kind: str, args: dict) -> dict:
        return self.backend.fault(index, kind, args)

    def stop(self) -> None:
        self.backend.stop()
        if self.control:
            self.control.shutdown()
            self.control.server_close()
        self.stopped.set()


def control_server(daemon: Daemon) -> ThreadingHTTPServer:
    """Loopback endpoint: ``GET /status``, ``POST /fault`` and ``POST /shutdown``."""
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format, *args):
            return

        def _reply(self, code: int, obj) -> None:
            data = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path.startswith("/status"):
                self._reply(200, daemon.info())
            else:
                self._reply(404, {"error": "not found"})

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(n) or b"{}")
            if self.path.startswith("/fault"):
                try:
                    self._reply(200, daemon.fault(int(body.get("cluster", 0)), body["fault"], body.get("args") or {}))
                except (ValueError, KeyError, IndexError) as exc:
                    self._reply(400, {"error": str(exc)})
            elif self.path.startswith("/shutdown"):
                self._reply(200, {"ok": True})
                threading.Thread(target=daemon.stop, daemon=True).start()
            else:
                self._reply(404, {"error": "not found"})

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    srv.daemon_threads = True
    return srv


def run_daemon(backend: Backend, state_dir: str | Path) -> int:
    """Run ``backend``'s clusters until SIGTERM, SIGINT or ``/shutdown``."""
    state = Path(state_dir).resolve()
    state.mkdir(parents=True, exist_ok=True)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    backend.prepare(state)
    d = Daemon(backend, state)
    (state / "kubesim.pid").write_text(str(os.getpid()))

    def _term(signum, frame):
        threading.Thread(target=d.stop, daemon=True).start()

    signal.signal(signal.SIGTERM, _term)
    signal.signal(signal.SIGINT, _term)
    try:
        info = d.start()
    except Exception:
        log.exception("the %s backend failed to start", backend.name)
        d.stop()
        return 1
    log.info("%s daemon pid %s: %s", backend.name, os.getpid(),
             ", ".join(f'{c["context"]}={c["base_url"]}' for c in info["clusters"]))
    d.stopped.wait()
    for f in ("daemon.json", "kubesim.pid"):
        (state / f).unlink(missing_ok=True)
    log.info("%s daemon stopped", backend.name)
    return 0

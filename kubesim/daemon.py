"""The background daemon: N clusters in one process, plus a loopback control endpoint for faults."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import threading
from dataclasses import asdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from .cluster import ClusterConfig, SimCluster

log = logging.getLogger("kubesim.daemon")

USER = "kubesim-user"


def kubeconfig_text(clusters: list[dict], token: str) -> str:
    import yaml

    doc = {
        "apiVersion": "v1", "kind": "Config", "preferences": {},
        "clusters": [{"name": c["context"], "cluster": {"server": c["base_url"]}} for c in clusters],
        "users": [{"name": USER, "user": {"token": token}}],
        "contexts": [{"name": c["context"], "context": {"cluster": c["context"], "user": USER, "namespace": "default"}}
                     for c in clusters],
        "current-context": clusters[0]["context"] if clusters else "",
    }
    return yaml.safe_dump(doc, sort_keys=False)


class Daemon:
    def __init__(self, n: int, config: ClusterConfig):
        if not config.token:
            import secrets

            config.token = secrets.token_hex(16)
        self.config = config
        self.state_dir = Path(config.state_dir).resolve()
        self.clusters = [SimCluster(i, config) for i in range(n)]
        self.control: ThreadingHTTPServer | None = None
        self.stopped = threading.Event()

    def start(self) -> dict:
        for c in self.clusters:
            c.start()
        self.control = control_server(self)
        threading.Thread(target=self.control.serve_forever, name="control", daemon=True).start()
        info = self.info()
        (self.state_dir / "kubeconfig").write_text(kubeconfig_text(info["clusters"], self.config.token))
        os.chmod(self.state_dir / "kubeconfig", 0o600)
        tmp = self.state_dir / "daemon.json.tmp"
        tmp.write_text(json.dumps(info, indent=2))
        tmp.replace(self.state_dir / "daemon.json")
        return info

    def info(self) -> dict:
        return {"pid": os.getpid(), "control_port": self.control.server_address[1] if self.control else None,
                "kubeconfig": str(self.state_dir / "kubeconfig"), "state_dir": str(self.state_dir),
                "config": {k: v for k, v in asdict(self.config).items() if k != "token"},
                "clusters": [{"index": c.index, "context": c.name, "port": c.port,
                              "base_url": f"http://127.0.0.1:{c.port}", "api_up": c.listener.is_up,
                              "faults": c.faults.snapshot()} for c in self.clusters]}

    def fault(self, index: int, kind: str, args: dict) -> dict:
        c = self.clusters[index]
        faults = c.set_fault(kind, args)
        return {"cluster": c.index, "faults": faults, "api_up": c.listener.is_up}

    def stop(self) -> None:
        for c in self.clusters:
            c.stop()
        if self.control:
            self.control.shutdown()
            self.control.server_close()
        self.stopped.set()


def control_server(daemon) -> ThreadingHTTPServer:
    """Loopback endpoint for status and faults; ``daemon`` has info(), fault(i, kind, args) and stop()."""
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


def run_daemon(n: int, config: ClusterConfig) -> int:
    state = Path(config.state_dir).resolve()
    state.mkdir(parents=True, exist_ok=True)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for i in range(n):
        shutil.rmtree(state / str(i), ignore_errors=True)
    d = Daemon(n, config)
    (state / "kubesim.pid").write_text(str(os.getpid()))
    info = d.start()
    log.info("kubesim daemon pid %s: %s", os.getpid(),
             ", ".join(f'{c["context"]}={c["base_url"]}' for c in info["clusters"]))

    def _term(signum, frame):
        threading.Thread(target=d.stop, daemon=True).start()

    signal.signal(signal.SIGTERM, _term)
    signal.signal(signal.SIGINT, _term)
    d.stopped.wait()
    for f in ("daemon.json", "kubesim.pid"):
        try:
            (state / f).unlink()
        except FileNotFoundError:
            pass
    log.info("kubesim daemon stopped")
    return 0

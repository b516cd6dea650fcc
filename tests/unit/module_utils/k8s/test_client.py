"""k8s_client: paths, the target description, inline kubeconfig masking, and raw requests against a tiny local
HTTP server standing in for the API server (auth header, JSON/404/5xx handling, unreachable message)."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import client as kc


def test_object_paths():
    assert kc.object_path("v1", "pods", "ns", "p", "log") == "/api/v1/namespaces/ns/pods/p/log"
    assert kc.object_path("nvidia.com/v1beta1", "dynamographdeployments", "dyn", "d") == \
        "/apis/nvidia.com/v1beta1/namespaces/dyn/dynamographdeployments/d"
    assert kc.object_path("v1", "nodes") == "/api/v1/nodes"


def test_service_proxy_path():
    assert kc.service_proxy_path("dyn", "d-frontend", 8000, "/v1/chat/completions") == \
        "/api/v1/namespaces/dyn/services/d-frontend:8000/proxy/v1/chat/completions"
    assert kc.service_proxy_path("dyn", "https:d", "http", "health?x=1") == \
        "/api/v1/namespaces/dyn/services/https%3Ad:http/proxy/health?x=1"


def test_auth_spec_keeps_kubeconfig_path_visible():
    assert kc.AUTH_ARG_SPEC["kubeconfig"]["no_log"] is False
    assert kc.AUTH_ARG_SPEC["api_key"]["no_log"] is True


def test_mask_inline_kubeconfig():
    class M:
        params = {"kubeconfig": {"users": [{"name": "u", "user": {"token": "s3cret", "client-key-data": "KEY"}}],
                                 "clusters": [{"name": "c", "cluster": {"server": "https://x"}}]}}
        no_log_values: set = set()

    m = M()
    kc.mask_inline_kubeconfig(m)
    assert m.no_log_values == {"s3cret", "KEY"}


class Handler(BaseHTTPRequestHandler):
    seen: list = []
    busy: dict = {}

    def log_message(self, *args):
        pass

    def _reply(self, code, body, ctype="application/json"):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        Handler.seen.append((self.command, self.path, self.headers.get("Authorization")))
        if self.path.startswith("/api/v1/namespaces/ns/pods/p/log"):
            return self._reply(200, b"line1\nline2\n", "text/plain")
        if self.path == "/apis/apps/v1/namespaces/ns/deployments/d":
            return self._reply(200, {"kind": "Deployment", "metadata": {"name": "d"}})
        if self.path == "/api/v1/namespaces/ns/pods?labelSelector=app%3Dx":
            return self._reply(200, {"items": [{"metadata": {"name": "p"}}]})
        if self.path.startswith("/busy/"):   # /busy/<n>: 429 with Retry-After for the first n requests
            Handler.busy[self.path] = Handler.busy.get(self.path, 0) + 1
            if Handler.busy[self.path] <= int(self.path.rsplit("/", 1)[1]):
                self.send_response(429)
                self.send_header("Retry-After", "0")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None
            return self._reply(200, {"kind": "Status", "message": "served"})
        if self.path == "/forbidden":
            return self._reply(403, {"kind": "Status", "reason": "Forbidden", "message": "pods is forbidden"})
        return self._reply(404, {"kind": "Status", "reason": "NotFound", "message": "not found"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length))
        Handler.seen.append((self.command, self.path, self.headers.get("Content-Type")))
        self._reply(503 if body.get("fail") else 200, {"echo": body})


@pytest.fixture(scope="module")
def api_server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()


def kubeconfig(tmp_path, server, token="tok123"):
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "sim",
        "clusters": [{"name": "sim", "cluster": {"server": server}}],
        "users": [{"name": "sim", "user": {"token": token}}],
        "contexts": [{"name": "sim", "context": {"cluster": "sim", "user": "sim"}}]}))
    return str(path)


def test_reads_with_bearer_token(tmp_path, api_server):
    api = kc.get_api({"kubeconfig": kubeconfig(tmp_path, api_server), "context": "sim"})
    assert api.host == api_server
    assert kc.get_object(api, "apps/v1", "deployments", "ns", "d")["metadata"]["name"] == "d"
    assert Handler.seen[-1][2] == "Bearer tok123"
    assert kc.get_object(api, "apps/v1", "deployments", "ns", "missing") is None
    assert [p["metadata"]["name"] for p in kc.list_objects(api, "v1", "pods", "ns", "app=x")] == ["p"]
    assert kc.read_pod_log(api, "ns", "p", "main", tail_lines=5) == "line1\nline2\n"
    assert "tailLines=5" in Handler.seen[-1][1] and "container=main" in Handler.seen[-1][1]


def test_error_status_becomes_api_error(tmp_path, api_server):
    api = kc.get_api({"kubeconfig": kubeconfig(tmp_path, api_server), "context": "sim"})
    with pytest.raises(kc.K8sApiError) as err:
        api.get_json("/forbidden")
    assert err.value.status == 403 and "Forbidden: pods is forbidden" in str(err.value)


def test_raw_request_returns_any_status(tmp_path, api_server):
    api = kc.get_api({"kubeconfig": kubeconfig(tmp_path, api_server), "context": "sim"})
    ok = api.request("POST", "/x", body={"a": 1})
    assert ok.status == 200 and ok.json() == {"echo": {"a": 1}} and Handler.seen[-1][2] == "application/json"
    bad = api.request("POST", "/x", body={"fail": True}, retries=0)
    assert bad.status == 503 and "application/json" in bad.content_type


def test_too_many_requests_is_retried_as_client_go_does(tmp_path, api_server, monkeypatch):
    """A 429 (priority and fairness, or an API server that has just started) is 'not processed, try again
    after Retry-After', whatever the verb: retried; past the budget the 429 itself is returned."""
    api = kc.get_api({"kubeconfig": kubeconfig(tmp_path, api_server), "context": "sim"})
    assert api.get_json("/busy/3")["message"] == "served"
    monkeypatch.setattr(kc, "TOO_MANY_REQUESTS_RETRIES", 2)
    assert api.request("GET", "/busy/4").status == 429


def test_unreachable_names_kubeconfig_context_and_host(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    path = kubeconfig(tmp_path, f"http://127.0.0.1:{port}")
    api = kc.get_api({"kubeconfig": path, "context": "sim"})
    with pytest.raises(kc.K8sUnreachable) as err:
        api.get_json("/version")
    msg = str(err.value)
    assert msg.startswith("cannot reach the Kubernetes API (") and f"kubeconfig {path}" in msg
    assert "context sim" in msg and f"host http://127.0.0.1:{port}" in msg


def test_unknown_context_is_a_clear_error(tmp_path, api_server):
    path = kubeconfig(tmp_path, api_server)
    with pytest.raises(kc.K8sUnreachable, match=f"cannot load Kubernetes configuration \\(kubeconfig {path}, context nope"):
        kc.get_api({"kubeconfig": path, "context": "nope"})


def test_hosts_reading_their_own_clusters_at_once_each_reach_their_own(tmp_path):
    """Module tasks of many hosts run in threads of one controller: each must get its own cluster's address even
    though kubernetes.core loads a kubeconfig into the client library's process-wide default."""
    ports = {f"cluster-{i}": 20000 + i for i in range(6)}
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "cluster-0",
        "clusters": [{"name": n, "cluster": {"server": f"https://127.0.0.1:{p}"}} for n, p in ports.items()],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": n, "context": {"cluster": n, "user": "u"}} for n in ports],
    }))
    wrong: list[str] = []
    start = threading.Barrier(len(ports))

    def read_own(context: str) -> None:
        start.wait()
        for _ in range(40):
            host = kc.get_api({"kubeconfig": str(kubeconfig), "context": context}).host
            if host != f"https://127.0.0.1:{ports[context]}":
                wrong.append(f"{context} -> {host}")

    threads = [threading.Thread(target=read_own, args=(c,)) for c in ports]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong, wrong[:5]


def test_a_kubeconfig_file_is_parsed_once_until_it_changes(tmp_path, api_server, monkeypatch):
    """A fleet's kubeconfig holds every cluster's context: each API session parsing it again cost a rollout of N
    clusters N x N parses. A loaded configuration is kept while the file stays the same, and each session gets
    its own copy."""
    import kubernetes.config.kube_config as kcfg

    parsed = []
    real_load = kcfg.KubeConfigMerger.load_config
    monkeypatch.setattr(kcfg.KubeConfigMerger, "load_config", lambda self, path: parsed.append(path) or
                        real_load(self, path))
    path = kubeconfig(tmp_path, api_server, token="first")
    one = kc.get_api({"kubeconfig": path, "context": "sim"})
    two = kc.get_api({"kubeconfig": path, "context": "sim"})
    assert parsed == [path]
    assert one.configuration is not two.configuration
    one.configuration.api_key["BearerToken"] = "changed by one session"
    assert kc.get_object(two, "apps/v1", "deployments", "ns", "d") and Handler.seen[-1][2] == "Bearer first"

    # the file is rewritten (a new token): loaded again
    Path(path).write_text(Path(path).read_text().replace("token: first", "token: second-token"))
    three = kc.get_api({"kubeconfig": path, "context": "sim"})
    assert parsed == [path, path]
    assert kc.get_object(three, "apps/v1", "deployments", "ns", "d") and Handler.seen[-1][2] == "Bearer second-token"

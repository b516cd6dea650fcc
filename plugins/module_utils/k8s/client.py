# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Client layer: an authenticated Kubernetes API client built from the same options (and ``K8S_AUTH_*``
environment variables, in-cluster config, kubeconfig) as kubernetes.core, plus raw requests through the API
server (JSON reads, pod logs, the service proxy).

Only known paths are requested: no discovery, so a look at a workload costs a handful of GETs.
"""

from __future__ import annotations

import copy
import json
import os
import threading
from urllib.parse import quote, urlencode

try:
    from ansible_collections.kubernetes.core.plugins.module_utils.args_common import (
        AUTH_ARG_SPEC as _CORE_AUTH,
    )
except ImportError:  # pragma: no cover - kubernetes.core is a declared dependency
    _CORE_AUTH = {
        "kubeconfig": {"type": "raw", "no_log": True}, "context": {}, "host": {},
        "api_key": {"no_log": True}, "username": {}, "password": {"no_log": True},
        "validate_certs": {"type": "bool", "aliases": ["verify_ssl"]},
        "ca_cert": {"type": "path", "aliases": ["ssl_ca_cert"]},
        "client_cert": {"type": "path", "aliases": ["cert_file"]},
        "client_key": {"type": "path", "aliases": ["key_file"]},
        "proxy": {}, "no_proxy": {}, "proxy_headers": {"type": "dict"}, "persist_config": {"type": "bool"},
        "impersonate_user": {}, "impersonate_groups": {"type": "list", "elements": "str"},
    }

try:
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import (
        _create_auth_spec,
        _create_configuration,
        _create_headers,
    )

    HAS_CORE_CLIENT = True
except ImportError:  # pragma: no cover
    HAS_CORE_CLIENT = False

try:
    import kubernetes
    import urllib3

    HAS_KUBERNETES = True
    KUBERNETES_IMPORT_ERROR = None
except ImportError as exc:  # pragma: no cover
    HAS_KUBERNETES = False
    KUBERNETES_IMPORT_ERROR = exc

# The kubernetes.core auth options. ``kubeconfig`` is no_log there because it may be an inline dict with
# credentials; we keep a *path* visible so an error can say which kubeconfig was tried, and mask the secret
# leaves of an inline dict ourselves (see mask_inline_kubeconfig).
AUTH_ARG_SPEC = copy.deepcopy(_CORE_AUTH)
AUTH_ARG_SPEC["kubeconfig"]["no_log"] = False

SECRET_KEYS = ("token", "password", "client-key-data", "client-certificate-data", "id-token", "refresh-token",
               "access-token", "client-secret", "auth-provider")

DEFAULT_TIMEOUT = 30


class K8sError(Exception):
    """Any failure talking to the API; ``str()`` is a complete, user-facing message."""


class K8sUnreachable(K8sError):
    """The API server did not answer (connection refused, DNS, TLS, timeout) or config is unusable."""


class K8sApiError(K8sError):
    def __init__(self, status: int, message: str, body: str = ""):
        super().__init__(message)
        self.status = status
        self.body = body


class Response:
    def __init__(self, status: int, headers: dict, data: bytes):
        self.status = status
        self.headers = headers
        self.data = data

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", "replace")

    def json(self):
        return json.loads(self.data.decode("utf-8"))

    @property
    def content_type(self) -> str:
        return next((v for k, v in self.headers.items() if k.lower() == "content-type"), "")


def mask_inline_kubeconfig(module) -> None:
    """When ``kubeconfig`` is an inline dict, hide its credentials in everything the module returns."""
    kc = module.params.get("kubeconfig")
    secrets: set[str] = set()

    def walk(node, secret: bool) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, secret or str(k).lower() in SECRET_KEYS)
        elif isinstance(node, list):
            for v in node:
                walk(v, secret)
        elif secret and isinstance(node, str) and node:
            secrets.add(node)

    if isinstance(kc, dict):
        walk(kc, False)
        module.no_log_values.update(secrets)


def _describe(auth: dict, host: str | None) -> str:
    kc = auth.get("kubeconfig")
    if isinstance(kc, dict):
        where = "inline kubeconfig"
    elif kc:
        where = f"kubeconfig {kc}"
    elif auth.get("host"):
        where = "host option"
    else:
        env = os.environ.get("KUBECONFIG")
        where = f"kubeconfig {env or '~/.kube/config'} (default)" if not os.environ.get(
            "KUBERNETES_SERVICE_HOST") else "in-cluster config"
    ctx = auth.get("context")
    parts = [where]
    if ctx:
        parts.append(f"context {ctx}")
    elif not auth.get("host"):
        parts.append("current context")
    if host:
        parts.append(f"host {host}")
    return ", ".join(parts)


class K8sApi:
    """A configured ``kubernetes.client.ApiClient`` plus raw JSON/text requests by path."""

    def __init__(self, configuration, headers: dict | None = None, target: str = ""):
        self.configuration = configuration
        self.api_client = kubernetes.client.ApiClient(configuration)
        self.headers = dict(headers or {})
        self.target = target

    @property
    def host(self) -> str:
        return (self.configuration.host or "").rstrip("/")

    def _auth_headers(self) -> dict:
        out = {}
        try:
            settings = self.configuration.auth_settings() or {}
        except Exception as exc:  # exec plugins, expired tokens
            raise K8sUnreachable(f"cannot get credentials ({self.target}): {exc}") from exc
        for setting in settings.values():
            if setting.get("in") == "header" and setting.get("value"):
                out[setting["key"]] = setting["value"]
        if "authorization" not in {k.lower() for k in out} and getattr(self.configuration, "username", None) \
                and getattr(self.configuration, "password", None):
            out.update(urllib3.util.make_headers(
                basic_auth=f"{self.configuration.username}:{self.configuration.password}"))
        return out

    def request(self, method: str, path: str, query: dict | None = None, body=None, headers: dict | None = None,
                timeout: float | None = None, retries: int = 2) -> Response:
        """Send ``method path`` to the API server with the client's TLS and credentials.

        Returns every HTTP status as a :class:`Response`; raises :class:`K8sUnreachable` when no answer."""
        resp = self._send(method, path, query, body, headers, timeout, retries, preload=True)
        return Response(resp.status, dict(resp.headers.items()), resp.data or b"")

    def stream(self, path: str, query: dict | None = None, timeout: float | None = None):
        """GET ``path`` without reading its body (a watch): the urllib3 response, to read from, then ``close()``
        (a stream left half read must not go back to the pool) and ``release_conn()``. Raises
        :class:`K8sUnreachable` when no answer."""
        return self._send("GET", path, query, None, None, timeout, 0, preload=False)

    def _send(self, method: str, path: str, query: dict | None, body, headers: dict | None, timeout: float | None,
              retries: int, preload: bool):
        url = self.host + path
        if query:
            url += "?" + urlencode({k: v for k, v in query.items() if v is not None}, doseq=True)
        hdrs = {"Accept": "application/json, */*", "User-Agent": "inferops.dynamo/k8s_client"}
        hdrs.update(self.headers)
        hdrs.update(self._auth_headers())
        data = None
        if body is not None:
            if isinstance(body, bytes | str):
                data = body.encode("utf-8") if isinstance(body, str) else body
            else:
                data = json.dumps(body).encode("utf-8")
                hdrs["Content-Type"] = "application/json"
        hdrs.update(headers or {})
        timeout = float(timeout or DEFAULT_TIMEOUT)
        try:
            resp = self.api_client.rest_client.pool_manager.request(
                method.upper(), url, body=data, headers=hdrs,
                timeout=urllib3.Timeout(connect=min(timeout, 10.0), read=timeout),
                retries=_retry(retries),
                preload_content=preload)
        except urllib3.exceptions.HTTPError as exc:
            reason = getattr(exc, "reason", None) or exc
            raise K8sUnreachable(f"cannot reach the Kubernetes API ({self.target}): {reason}") from exc
        return resp

    def get_json(self, path: str, query: dict | None = None, missing_ok: bool = True,
                 timeout: float | None = None):
        """GET a JSON object; None for 404 when ``missing_ok``; :class:`K8sApiError` for other errors."""
        resp = self.request("GET", path, query=query, timeout=timeout)
        if resp.status == 404 and missing_ok:
            return None
        if resp.status >= 400:
            raise api_error(resp, f"GET {path}")
        return resp.json()

    def get_text(self, path: str, query: dict | None = None, timeout: float | None = None) -> str:
        resp = self.request("GET", path, query=query, timeout=timeout)
        if resp.status >= 400:
            raise api_error(resp, f"GET {path}")
        return resp.text


# A 429 is the API server's "not processed, try again after Retry-After" (priority and fairness, or a server
# that has just started): client-go retries it up to 10 times, whatever the verb. So do we, a little less.
TOO_MANY_REQUESTS_RETRIES = 8


def _retry(connect_retries: int) -> urllib3.Retry:
    return urllib3.Retry(total=connect_retries + TOO_MANY_REQUESTS_RETRIES, connect=connect_retries, read=0,
                         status=TOO_MANY_REQUESTS_RETRIES, status_forcelist=(429,), allowed_methods=None,
                         respect_retry_after_header=True, raise_on_status=False, redirect=0, other=0,
                         backoff_factor=0.2, backoff_max=2)


def api_error(resp: Response, what: str) -> K8sApiError:
    """A K8sApiError from an error answer, with the Status message when the body is a Status."""
    message = resp.text[:500]
    try:
        doc = resp.json()
        if isinstance(doc, dict) and doc.get("message"):
            message = f"{doc.get('reason', '')}: {doc['message']}".lstrip(": ")
    except ValueError:
        pass
    return K8sApiError(resp.status, f"{what} answered {resp.status}: {message}", resp.text)


def refuse_credentials(resp: Response, what: str, api: K8sApi) -> None:
    """Raise on a 401: every other request with these credentials would be refused too, so no read answers."""
    if resp.status == 401:
        raise K8sApiError(401, f"the API server refused the credentials ({api.target}): "
                              f"{api_error(resp, what)}", resp.text)


def auth_params(params: dict) -> dict:
    return {k: params.get(k) for k in AUTH_ARG_SPEC if params.get(k) is not None}


# kubernetes.core's _create_configuration loads the kubeconfig into the client library's process-wide default
# Configuration, then copies it. Module tasks run in threads of the controller (strategy linear_threads): without
# this lock, two hosts' tasks interleave the load and the copy, and one of them talks to the other's cluster.
_DEFAULT_CONFIGURATION_LOCK = threading.Lock()

# Each load parses the whole kubeconfig file. A fleet's kubeconfig has a context per cluster, so a rollout of N
# clusters parsed N contexts at each of its N x (tasks) API sessions: on 48 clusters, a fifth of the control node's
# CPU. A loaded configuration is kept for as long as its file is the same file with the same size and mtime (its
# credentials' own refresh, such as an exec plugin's token, still runs when they expire), and each session gets a
# copy of it.
_CONFIGURATIONS: dict[tuple, object] = {}


def _configuration_key(auth: dict) -> tuple | None:
    """What a loaded configuration depends on, when it comes from a kubeconfig file; None otherwise (in-cluster,
    an inline kubeconfig, the default file), which is loaded every time."""
    path = auth.get("kubeconfig")
    if not isinstance(path, str) or not path:
        return None
    try:
        st = os.stat(os.path.expanduser(path))
    except OSError:
        return None
    return (json.dumps(auth, sort_keys=True, default=str), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _load_configuration(auth: dict):
    key = _configuration_key(auth)
    with _DEFAULT_CONFIGURATION_LOCK:
        if key is None:
            return _create_configuration(auth)
        if key not in _CONFIGURATIONS:
            _CONFIGURATIONS[key] = _create_configuration(auth)
        return copy.deepcopy(_CONFIGURATIONS[key])


def get_api(params: dict) -> K8sApi:
    """Build a :class:`K8sApi` from module params (kubernetes.core auth options and ``K8S_AUTH_*`` env)."""
    if not HAS_KUBERNETES:
        raise K8sError(f"the kubernetes Python library is required: {KUBERNETES_IMPORT_ERROR}")
    kwargs = auth_params(params)
    if HAS_CORE_CLIENT:
        auth = _create_auth_spec(None, **kwargs)
        auth = {k: v for k, v in auth.items() if v not in (None, {})}
        try:
            configuration = _load_configuration(auth)
        except Exception as exc:
            raise K8sUnreachable(f"cannot load Kubernetes configuration ({_describe(auth, None)}): {exc}") from exc
        headers = _create_headers(None, **kwargs)
    else:  # pragma: no cover - minimal fallback: kubeconfig/context, host, api_key, validate_certs
        auth = kwargs
        try:
            if auth.get("host") and auth.get("api_key"):
                configuration = kubernetes.client.Configuration()
                configuration.host = auth["host"]
                configuration.api_key = {"authorization": "Bearer " + auth["api_key"]}
            else:
                configuration = kubernetes.client.Configuration()
                kubernetes.config.load_kube_config(config_file=auth.get("kubeconfig"), context=auth.get("context"),
                                                   client_configuration=configuration)
        except Exception as exc:
            raise K8sUnreachable(f"cannot load Kubernetes configuration ({_describe(auth, None)}): {exc}") from exc
        if auth.get("validate_certs") is not None:
            configuration.verify_ssl = auth["validate_certs"]
        headers = {}
    flat = {}
    for key, value in headers.items():
        flat[key] = ",".join(value) if isinstance(value, list) else value
    return K8sApi(configuration, flat, _describe(auth, (configuration.host or "").rstrip("/")))


# ---------------------------------------------------------------------------- paths
def api_prefix(api_version: str) -> str:
    return f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"


def object_path(api_version: str, plural: str, namespace: str | None = None, name: str | None = None,
                subresource: str | None = None) -> str:
    path = api_prefix(api_version)
    if namespace:
        path += f"/namespaces/{quote(namespace, safe='')}"
    path += f"/{plural}"
    if name:
        path += f"/{quote(name, safe='')}"
    if subresource:
        path += f"/{subresource}"
    return path


def service_proxy_path(namespace: str, service: str, port: int | str, path: str = "/") -> str:
    """``/api/v1/namespaces/{ns}/services/{service}:{port}/proxy{path}`` (``path`` keeps its query)."""
    if not path.startswith("/"):
        path = "/" + path
    return (f"/api/v1/namespaces/{quote(namespace, safe='')}/services/"
            f"{quote(service, safe='')}:{quote(str(port), safe='')}/proxy{path}")


# ---------------------------------------------------------------------------- typed reads
def get_object(api: K8sApi, api_version: str, plural: str, namespace: str | None, name: str) -> dict | None:
    return api.get_json(object_path(api_version, plural, namespace, name))


def list_objects(api: K8sApi, api_version: str, plural: str, namespace: str | None,
                 label_selector: str | None = None) -> list[dict]:
    query = {"labelSelector": label_selector} if label_selector else None
    doc = api.get_json(object_path(api_version, plural, namespace), query=query, missing_ok=True)
    return list((doc or {}).get("items") or [])


def read_pod_log(api: K8sApi, namespace: str, pod: str, container: str | None = None, tail_lines: int = 40,
                 previous: bool = False, limit_bytes: int = 256 * 1024) -> str:
    query = {"container": container, "tailLines": int(tail_lines), "limitBytes": int(limit_bytes)}
    if previous:
        query["previous"] = "true"
    return api.get_text(object_path("v1", "pods", namespace, pod, "log"), query=query)

"""The stand-ins' reads: a list asked for again in one reconcile pass is not sent again; a write of its kind, or the
next pass, reads afresh. (Counted on a recording client; the requests are what the real API server would get.)"""

import json

from kubesim.standins.kube import Kube


class Response:
    def __init__(self, status, doc):
        self.status, self._data = status, json.dumps(doc).encode()

    def read(self):
        return self._data


class RecordingClient:
    """Enough of kubernetes.client.ApiClient for Kube's reads: every GET is recorded and answered."""

    def __init__(self):
        self.gets: list[str] = []

    def param_serialize(self, method, path, query_params=(), **_):
        return method, path + ("?" + "&".join(f"{k}={v}" for k, v in query_params) if query_params else "")

    def call_api(self, method, url):
        self.gets.append(url)
        if url.endswith("/missing"):
            return Response(404, {"kind": "Status"})
        return Response(200, {"items": [{"metadata": {"name": "p"}}]})


class Resource:
    def __init__(self, plural):
        self.plural = plural

    def path(self, name=None, namespace=None):
        return "/api/v1" + (f"/namespaces/{namespace}" if namespace else "") + f"/{self.plural}" + (f"/{name}" if name else "")


def kube():
    k = Kube.__new__(Kube)
    k.api_client, k.component, k._emitted, k._pass_lists = RecordingClient(), "test", set(), {}
    k._res = lambda api_version, kind: Resource(kind.lower() + "s")
    return k


def test_a_list_is_read_once_per_pass():
    k = kube()
    k.begin_pass()
    assert k.list("v1", "Pod") == k.list("v1", "Pod") == [{"metadata": {"name": "p"}}]
    k.list("v1", "Pod", label_selector="a=b")
    assert k.api_client.gets == ["/api/v1/pods", "/api/v1/pods?labelSelector=a=b"]
    k.begin_pass()
    k.list("v1", "Pod")
    assert len(k.api_client.gets) == 3


def test_a_write_reads_its_kind_afresh_and_keeps_the_others():
    k = kube()
    k.begin_pass()
    k.list("v1", "Pod")
    k.list("v1", "Service")
    k._forget("Pod")          # what create, patch and delete do before they write
    k.list("v1", "Pod")
    k.list("v1", "Service")
    assert k.api_client.gets == ["/api/v1/pods", "/api/v1/services", "/api/v1/pods"]


def test_a_missing_object_is_none():
    assert kube().get("v1", "Pod", "missing", "ns") is None

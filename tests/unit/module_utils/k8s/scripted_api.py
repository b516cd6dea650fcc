"""An API session that answers from a table, for the k8s module_utils' unit tests."""

from __future__ import annotations

import json

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import client as kc

NOT_FOUND = (404, {"kind": "Status", "reason": "NotFound", "message": "not found"})


class ScriptedApi:
    """Answers (method, path, labelSelector), else (method, path), from a table (404 otherwise; a callable answer is
    given the request's body); records (method, path, query, body) of each request."""

    target = "kubeconfig /k, context c, host https://api"

    def __init__(self, answers: dict):
        self.answers = answers
        self.asked: list[tuple] = []

    def request(self, method, path, query=None, body=None, **_):
        self.asked.append((method, path, query, body))
        key = (method, path, (query or {}).get("labelSelector"))
        status, doc = self.answers.get(key, self.answers.get((method, path), NOT_FOUND))
        if callable(doc):
            doc = doc(body)
        return kc.Response(status, {"Content-Type": "application/json"}, json.dumps(doc).encode())

    get_json = kc.K8sApi.get_json   # the real client's reading of an answer, over the scripted requests

#!/usr/bin/python
# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: service_request
short_description: Send an HTTP request to a Kubernetes Service through the API server's service proxy
version_added: "0.1.0"
description:
  - Sends O(method) O(path) to port O(port) of Service O(service) through the API server service proxy
    (C(/api/v1/namespaces/{namespace}/services/{service}:{port}/proxy{path})) with the credentials of the
    kubernetes.core auth options, so no port-forward, ingress or in-cluster runner is needed.
  - Returns the status, the parsed JSON body and the text body (truncated to O(max_content_chars)).
  - Fails with the status and an excerpt of the body when the status is not in O(status_code), or when the API
    server cannot be reached (naming the kubeconfig, context and host it tried).
  - The caller needs the C(get) verb on C(services/proxy) (and C(create) for POST) in the namespace.
author:
  - inferops team (@inferops)
extends_documentation_fragment:
  - inferops.dynamo.attributes
  - kubernetes.core.k8s_auth_options
options:
  namespace:
    description:
      - Namespace of the Service.
    type: str
    default: default
  service:
    description:
      - Name of the Service, for example C(<dgd-name>-frontend) for the frontend of a DynamoGraphDeployment.
    type: str
    required: true
  port:
    description:
      - Service port (number or port name).
    type: str
    default: "8000"
  scheme:
    description:
      - Scheme the API server uses to talk to the Service (C(http) or C(https)); sent as the
        C(scheme:service:port) form of the proxy path when C(https).
    type: str
    choices: [http, https]
    default: http
  path:
    description:
      - Path (and query string) on the Service, for example C(/v1/chat/completions) or C(/v1/models).
    type: str
    default: /
  method:
    description:
      - HTTP method.
    type: str
    choices: [GET, POST]
    default: GET
  body:
    description:
      - Request body. A dict or list is sent as JSON (C(Content-Type application/json)); a string is sent as is.
    type: raw
  headers:
    description:
      - Extra request headers (for example C(Accept)). The C(Authorization) header is the API server's and is set
        from the auth options.
    type: dict
    default: {}
  timeout:
    description:
      - Seconds to wait for the answer.
    type: int
    default: 60
  status_code:
    description:
      - Statuses that count as success.
    type: list
    elements: int
    default: [200]
  retries:
    description:
      - Send the request again, up to this many times, while the answer's status is not in O(status_code) or the API
        server cannot be reached, waiting O(retry_delay) seconds between two tries; the last answer decides.
      - Each new try is shown as a plain line saying what the last one answered (where the module runs in the
        controller), not as a failed task. Use it instead of an C(until:) loop, which prints
        C(FAILED - RETRYING) at every retry of a request that then succeeds.
    type: int
    default: 0
  retry_delay:
    description:
      - Seconds between two tries of O(retries).
    type: float
    default: 5
  max_content_chars:
    description:
      - Longest RV(content) returned; longer bodies are cut and RV(content_truncated) is set.
    type: int
    default: 16384
notes:
  - Supports check mode by sending the request anyway, because a GET or an inference call does not change anything
    in the cluster; C(changed) is always false. Do not use it for requests that change the service's state.
  - The Kubernetes service proxy buffers streaming answers (C(stream=true)); ask for non-streamed answers.
requirements:
  - kubernetes >= 24.2.0 (Python client)
seealso:
  - module: inferops.dynamo.workload_status
  - module: ansible.builtin.uri
"""

EXAMPLES = r"""
- name: Smoke test of the recipe page through the frontend Service (no port-forward)
  inferops.dynamo.service_request:
    namespace: dynamo
    service: muse-spark-sglang-aggregate-gb300-frontend
    port: 8000
    path: /v1/chat/completions
    method: POST
    body:
      model: meta-models/Muse-Spark-Open-816B-A42B-NVFP4
      messages:
        - role: user
          content: "Reply with exactly: READY"
      temperature: 0
      max_tokens: 64
    timeout: 120
  register: smoke

- name: The model answered READY
  ansible.builtin.assert:
    that:
      - "'READY' in smoke.json.choices[0].message.content"
    fail_msg: "smoke answer: {{ smoke.json.choices[0].message.content | default(smoke.content) }}"

- name: List the served models on a rehearsal cluster, accepting 503 while it warms up
  inferops.dynamo.service_request:
    kubeconfig: .kubesim/kubeconfig
    context: kubesim-0
    namespace: default
    service: demo-frontend
    path: /v1/models
    retries: 30
    retry_delay: 5
  register: models
"""

RETURN = r"""
status:
  description: HTTP status of the answer (as relayed by the API server).
  returned: when the API server answered
  type: int
  sample: 200
json:
  description: The body parsed as JSON when it is JSON, else null.
  returned: when the API server answered
  type: raw
  sample: {"choices": [{"message": {"role": "assistant", "content": "READY"}}]}
content:
  description: The body as text, truncated to O(max_content_chars).
  returned: when the API server answered
  type: str
content_truncated:
  description: Whether RV(content) was cut.
  returned: when the API server answered
  type: bool
content_type:
  description: The C(Content-Type) of the answer.
  returned: when the API server answered
  type: str
url:
  description: The API server URL that was requested.
  returned: always
  type: str
  sample: https://api.example:6443/api/v1/namespaces/dynamo/services/demo-frontend:8000/proxy/v1/models
elapsed:
  description: Seconds the request took (the last try).
  returned: always
  type: float
attempts:
  description: Tries made (1 without O(retries)).
  returned: always
  type: int
"""

import json  # noqa: E402 (Ansible puts imports after the docs)
import time  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import client as kc  # noqa: E402
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import runner  # noqa: E402

EXCERPT = 500


def proxy_target(p: dict) -> str:
    service = p["service"] if p["scheme"] == "http" else f"https:{p['service']}"
    return kc.service_proxy_path(p["namespace"], service, p["port"], p["path"])


def shape(resp, max_chars: int) -> dict:
    text = resp.text
    parsed = None
    if resp.data and ("json" in resp.content_type.lower() or text.lstrip()[:1] in ("{", "[")):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
    return {"status": resp.status, "json": parsed, "content": text[:max_chars],
            "content_truncated": len(text) > max_chars, "content_type": resp.content_type}


def run(module: AnsibleModule, api=None) -> tuple[dict, str | None]:
    """(result, failure message or None)."""
    p = module.params
    api = api or kc.get_api(p)
    path = proxy_target(p)
    result = {"url": api.host + path}
    start = time.monotonic()
    resp = api.request(p["method"], path, body=p["body"], headers=p["headers"], timeout=p["timeout"],
                       retries=0 if p["method"] == "POST" else 2)
    result["elapsed"] = round(time.monotonic() - start, 3)
    result.update(shape(resp, p["max_content_chars"]))
    if resp.status not in p["status_code"]:
        excerpt = resp.text[:EXCERPT].strip()
        return result, (f"{p['method']} {p['path']} on service {p['namespace']}/{p['service']}:{p['port']} "
                        f"answered {resp.status} (expected {', '.join(map(str, p['status_code']))}): {excerpt}")
    return result, None


ARGUMENT_SPEC = dict(
    kc.AUTH_ARG_SPEC,
    namespace=dict(type="str", default="default"),
    service=dict(type="str", required=True),
    port=dict(type="str", default="8000"),
    scheme=dict(type="str", default="http", choices=["http", "https"]),
    path=dict(type="str", default="/"),
    method=dict(type="str", default="GET", choices=["GET", "POST"]),
    body=dict(type="raw"),
    headers=dict(type="dict", default={}),
    timeout=dict(type="int", default=60),
    status_code=dict(type="list", elements="int", default=[200]),
    max_content_chars=dict(type="int", default=16384),
    retries=dict(type="int", default=0),
    retry_delay=dict(type="float", default=5),
)
MODULE_OPTIONS = dict(supports_check_mode=True)


def run_with_retries(module, api=None, sleep=time.sleep) -> tuple[dict, str | None]:
    """``run`` again while it fails, ``retries`` more times at most; the last try's (result, failure)."""
    p = module.params
    report = getattr(module, "report", None)
    tries = max(0, p["retries"]) + 1
    api = api or kc.get_api(p)
    for attempt in range(1, tries + 1):
        try:
            result, failure = run(module, api)
        except kc.K8sUnreachable as exc:
            if attempt == tries:
                raise
            result, failure = {}, str(exc)
        result["attempts"] = attempt
        if failure is None or attempt == tries:
            return result, failure
        if report is not None:
            said = f"answered {result['status']}" if "status" in result else f"got no answer ({failure})"
            report(f"{p['method']} {p['path']} on service {p['namespace']}/{p['service']}:{p['port']} {said}; "
                   f"trying again in {p['retry_delay']:g} s ({tries - attempt} more at most)")
        sleep(p["retry_delay"])
    raise AssertionError("unreachable")  # pragma: no cover


def work(module) -> dict:
    result, failure = run_with_retries(module)
    if failure:
        raise runner.ModuleFailure(failure, **result)
    return result


def run_module(module) -> None:
    """The module's work, for an ``AnsibleModule`` here or the controller's stand-in (plugin_utils.in_process)."""
    runner.run(module, work)


def main() -> None:
    runner.main(ARGUMENT_SPEC, MODULE_OPTIONS, run_module)


if __name__ == "__main__":
    main()

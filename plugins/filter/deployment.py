# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Filters that turn a plan (from inferops.dynamo.deployment_plan) into Kubernetes objects and text.

Docs: one sidecar .yml per filter beside this file.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.dynamo.plugins.module_utils.bench import duration as bench_plan
from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import rollout_summary as _rollout
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.errors import PlanError
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.summary import plan_report as _plan_report
from ansible_collections.inferops.dynamo.plugins.module_utils.preflight import cache_users
from ansible_collections.inferops.dynamo.plugins.module_utils.preflight.node_capacity import (
    node_capacity as _node_capacity,
)
from ansible_collections.inferops.dynamo.plugins.module_utils.preflight.storage_class import (
    choose as _choose_storage_class,
)
from ansible_collections.inferops.dynamo.plugins.module_utils.render import model_transfer
from ansible_collections.inferops.dynamo.plugins.module_utils.render import objects as render
from ansible_collections.inferops.dynamo.plugins.module_utils.render.pvc_change import (
    pvc_change as _pvc_change,
)


def _require_plan(plan, filter_name: str) -> dict:
    if not isinstance(plan, dict) or "target" not in plan or "workers" not in plan:
        raise AnsibleFilterError(
            f"{filter_name}: expected the 'plan' returned by inferops.dynamo.deployment_plan, "
            f"got {type(plan).__name__}. Run the inferops.dynamo.plan role (or the deployment_plan module) first."
        )
    return _plain(plan)


def _plain(value):
    """The value as plain dicts and lists, each leaf read once.

    A plan reaches a filter as Ansible's lazily templated containers, which template an element again on every
    read; the renderers copy parts of the plan more than once, which cost about half a CPU-second per call."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _require_namespace(namespace, filter_name: str) -> str:
    if not namespace or not isinstance(namespace, str):
        raise AnsibleFilterError(f"{filter_name}: a namespace (non-empty string) is required.")
    return namespace


def serving_objects(plan, namespace):
    plan = _require_plan(plan, "serving_objects")
    return render.serving_objects(plan, _require_namespace(namespace, "serving_objects"))


def namespace_object(plan, namespace):
    plan = _require_plan(plan, "namespace_object")
    return render.namespace(_require_namespace(namespace, "namespace_object"), render.cache_labels(plan))


def hf_token_secret(plan, namespace, token, required=True):
    plan = _require_plan(plan, "hf_token_secret")
    if not token and required:
        raise AnsibleFilterError("hf_token_secret: the token is empty; pass hf_token from a vault or HF_TOKEN.")
    return render.hf_token_secret(plan, _require_namespace(namespace, "hf_token_secret"), str(token or ""))


def model_cache_pvc(plan, namespace, storage_class=None, size_gi=None, existing=None, grow=False):
    plan = _require_plan(plan, "model_cache_pvc")
    ns = _require_namespace(namespace, "model_cache_pvc")
    if size_gi is not None:
        size_gi = _int(size_gi, "size_gi", "model_cache_pvc")
    return render.model_cache_pvc(plan, ns, storage_class or None, size_gi, existing or None, bool(grow))


def model_cache_pvc_change(existing, storage_class, size_gi, storage_classes):
    if existing is not None and not isinstance(existing, dict):
        raise AnsibleFilterError("model_cache_pvc_change: expected the live PVC (a dict) or none as input.")
    if not isinstance(storage_classes, list):
        raise AnsibleFilterError("model_cache_pvc_change: storage_classes must be the list of StorageClass objects.")
    return _pvc_change(existing or None, storage_class or None, _int(size_gi, "size_gi", "model_cache_pvc_change"),
                       storage_classes)


def storage_class_choice(storage_classes, named, rwx_provisioners, cluster):
    if storage_classes is not None and not isinstance(storage_classes, list):
        raise AnsibleFilterError("storage_class_choice: expected the list of StorageClass objects (or none when "
                                 "they could not be listed) as input.")
    if not isinstance(rwx_provisioners, list):
        raise AnsibleFilterError("storage_class_choice: rwx_provisioners must be a list of provisioner names.")
    return _choose_storage_class(storage_classes, str(named or ""), rwx_provisioners, str(cluster))


def download_job(plan, namespace, source=None, image=None, s3_image=None, parallelism=1, max_workers=16,
                 verify=True, retries=model_transfer.DOWNLOAD_RETRIES):
    plan = _require_plan(plan, "download_job")
    ns = _require_namespace(namespace, "download_job")
    try:
        return render.download_job(plan, ns, image or model_transfer.DOWNLOAD_IMAGE, source=source or None,
                                   s3_image=s3_image or model_transfer.S3_IMAGE,
                                   parallelism=_int(parallelism, "parallelism", "download_job"),
                                   max_workers=_int(max_workers, "max_workers", "download_job"), verify=bool(verify),
                                   retries=_int(retries, "retries", "download_job", minimum=0))
    except model_transfer.SourceError as exc:
        raise AnsibleFilterError(f"download_job: model_cache_source refused: {exc}.") from exc


def trace_stage_job(plan, namespace, url, sha256, image):
    plan = _require_plan(plan, "trace_stage_job")
    if not url or not sha256:
        raise AnsibleFilterError("trace_stage_job: both the trace URL and its SHA-256 are required.")
    return render.trace_stage_job(plan, _require_namespace(namespace, "trace_stage_job"), url, sha256, image)


def plan_report(plan):
    return _plan_report(_require_plan(plan, "plan_report"))


def _int(value, name, filter_name, minimum=1):
    try:
        number = int(value)
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError(f"{filter_name}: {name} must be a whole number, got {value!r}.") from exc
    if number < minimum:
        raise AnsibleFilterError(f"{filter_name}: {name} must be {'positive' if minimum == 1 else f'at least {minimum}'}"
                                 f", got {number}.")
    return number


def _rate(value, name, filter_name):
    """A requests/s value; blank or 0 is none."""
    if value in (None, "", 0, "0"):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError(f"{filter_name}: {name} must be a number of requests per second, got {value!r}.") from exc
    if number < 0:
        raise AnsibleFilterError(f"{filter_name}: {name} must be 0 (none) or positive, got {number:g}.")
    return number or None


def benchmark_estimate(plan, concurrency, request_count, time_budget, output_tokens_per_request=None,
                       request_rate_ceiling=None):
    plan = _require_plan(plan, "benchmark_estimate")
    trace = plan["benchmark"]["trace"]
    try:
        result = bench_plan.estimate(
            request_count=_int(request_count, "request_count", "benchmark_estimate"),
            output_tokens_per_request=_int(output_tokens_per_request or trace["output_tokens"],
                                           "output_tokens_per_request", "benchmark_estimate"),
            concurrency=_int(concurrency, "concurrency", "benchmark_estimate"),
            expected=plan.get("expected"),
            time_budget_s=_int(time_budget, "time_budget", "benchmark_estimate"),
            warmup_requests=int(trace.get("warmup_requests", 5)),
            request_rate_ceiling=_rate(request_rate_ceiling, "request_rate_ceiling", "benchmark_estimate"),
        )
    except PlanError as exc:
        return {"refused": True, "message": str(exc), "rule": exc.rule}
    return {"refused": False, **result}


def aiperf_job(plan, namespace, run_id, concurrency, request_count, image, deadline_s, warmup_isl=8000,
               warmup_osl=1000, workers_max=None, extra_args=None, goodput=None, warmup_requests=None,
               request_rate_ceiling=None):
    plan = _require_plan(plan, "aiperf_job")
    return render.aiperf_job(
        plan, _require_namespace(namespace, "aiperf_job"), run_id=str(run_id),
        concurrency=_int(concurrency, "concurrency", "aiperf_job"),
        request_count=_int(request_count, "request_count", "aiperf_job"), image=str(image),
        deadline_s=_int(deadline_s, "deadline_s", "aiperf_job"),
        warmup_requests=int(plan["benchmark"]["warmup_requests"] if warmup_requests in (None, "") else warmup_requests),
        warmup_isl=_int(warmup_isl, "warmup_isl", "aiperf_job"), warmup_osl=_int(warmup_osl, "warmup_osl", "aiperf_job"),
        workers_max=_int(workers_max, "workers_max", "aiperf_job") if workers_max else None,
        extra_args=list(extra_args or []), goodput=str(goodput) if goodput else None,
        request_rate_ceiling=_rate(request_rate_ceiling, "request_rate_ceiling", "aiperf_job"))


def node_capacity(nodes, gpu_resource, extra_resources=None):
    if not isinstance(nodes, list):
        raise AnsibleFilterError("node_capacity: expected the 'resources' list of a kubernetes.core.k8s_info on Nodes.")
    return _node_capacity(nodes, str(gpu_resource), list(extra_resources or []))


def rollout_summary(hostvars, hosts, title="Rollout summary"):
    """Rows, a text table and Markdown from each cluster's ``rollout_result`` fact."""
    hosts = list(hosts or [])
    results = {h: (hostvars.get(h) or {}).get("rollout_result") for h in hosts}
    batches = {h: (hostvars.get(h) or {}).get("rollout_batch", "") for h in hosts}
    rows = _rollout.summarise(hosts, results, batches)
    return {"rows": rows, "lines": _rollout.table_lines(rows), "markdown": _rollout.markdown(rows, title),
            "failed": [r["cluster"] for r in rows if r["status"] in _rollout.FAILED]}


def model_cache_purge_refusal(pods, plan):
    plan = _require_plan(plan, "model_cache_purge_refusal")
    if not isinstance(pods, list):
        raise AnsibleFilterError("model_cache_purge_refusal: expected the namespace's pods (a list).")
    return cache_users.purge_refusal(_plain(pods), plan)


class FilterModule:
    def filters(self):
        return {
            "serving_objects": serving_objects,
            "namespace_object": namespace_object,
            "hf_token_secret": hf_token_secret,
            "model_cache_pvc": model_cache_pvc,
            "model_cache_pvc_change": model_cache_pvc_change,
            "storage_class_choice": storage_class_choice,
            "download_job": download_job,
            "trace_stage_job": trace_stage_job,
            "plan_report": plan_report,
            "node_capacity": node_capacity,
            "benchmark_estimate": benchmark_estimate,
            "aiperf_job": aiperf_job,
            "rollout_summary": rollout_summary,
            "model_cache_purge_refusal": model_cache_purge_refusal,
        }

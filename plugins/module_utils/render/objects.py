# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Kubernetes objects from a plan (see plan.build_plan).

Object names follow the recipe page so that a deployment made by hand with its kubectl steps is
adopted in place: the DynamoGraphDeployment, its ``<name>-frontend`` Service, the
``shared-model-cache`` PVC, the ``hf-token-secret`` Secret and the ``model-download`` Job.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

from ansible_collections.inferops.dynamo.plugins.module_utils import naming
from ansible_collections.inferops.dynamo.plugins.module_utils.bench import job_report as aiperf_job_report
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.engine_args import COMPILE_CACHE
from ansible_collections.inferops.dynamo.plugins.module_utils.render import (
    autoscaling,
    model_transfer,
    network_policy,
    planner,
    pod_security,
)

MODEL_VOLUME = "model-cache"
COMPILE_CACHE_FOLDER = "compile-cache"     # on the model cache claim, beside hub/ (the download Job makes it)
TRACE_JOB = "stage-benchmark-trace"
TRACE_MOUNT = "/model-cache"     # the recipe's benchmark mounts the cache here
# A worker may load ~0.5-1.6 TB of weights: without a measured load time the startup probe allows two
# hours (720 x 10 s), so that a slow load is never killed; liveness only starts after it. With one
# (plan input load_seconds, printed by every deploy) it allows twice that, and never less than 10 minutes.
STARTUP_PERIOD_S = 10
STARTUP_FAILURE_THRESHOLD = 720
STARTUP_MIN_BUDGET_S = 600


def _meta(name: str, namespace: str | None, labels: dict, annotations: dict | None = None) -> dict:
    meta: dict = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(annotations)
    return meta


def cache_labels(plan: dict) -> dict:
    """The model cache is shared by every target of the model: it carries no target label."""
    return {k: v for k, v in plan["labels"].items() if k != naming.TARGET_LABEL}


def namespace(name: str, labels: dict | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(name, None, labels or {})}


def hf_token_secret(plan: dict, ns: str, token: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": _meta(plan["model_cache"]["secret"], ns, cache_labels(plan)),
        "type": "Opaque",
        "stringData": {"HF_TOKEN": token},
    }


def model_cache_pvc(plan: dict, ns: str, storage_class: str | None, size_gi: int | None = None,
                    existing: dict | None = None, grow: bool = False) -> dict:
    """The RWX cache PVC. An ``existing`` PVC (made by hand from the recipe page) keeps its spec:
    a PVC's class and access modes are immutable and it cannot shrink, so we only add our labels,
    and raise its request to ``size_gi`` when ``grow`` (pvc_change decided its class can expand)."""
    if existing:
        live = existing.get("spec", {})
        # Only what a user sets: volumeName (binder) and volumeMode (defaulted) stay with their owners. Built
        # anew rather than deep-copied: a live object read through Ansible carries tags that make deepcopy slow.
        spec = {}
        if "accessModes" in live:
            spec["accessModes"] = list(live["accessModes"])
        if "resources" in live:
            spec["resources"] = {"requests": {"storage": live["resources"]["requests"]["storage"]}}
        if "storageClassName" in live:
            spec["storageClassName"] = live["storageClassName"]
        if grow and size_gi:
            spec["resources"] = {"requests": {"storage": f"{int(size_gi)}Gi"}}
    else:
        spec = {
            "accessModes": ["ReadWriteMany"],
            "resources": {"requests": {"storage": f"{size_gi or plan['model_cache']['size_gi']}Gi"}},
        }
        if storage_class:
            spec["storageClassName"] = storage_class
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": _meta(plan["model_cache"]["pvc"], ns, cache_labels(plan)),
        "spec": spec,
    }


def _cache_volume(plan: dict) -> dict:
    return {"name": MODEL_VOLUME, "persistentVolumeClaim": {"claimName": plan["model_cache"]["pvc"]}}


def trace_stage_job(plan: dict, ns: str, url: str, sha256: str, image: str) -> dict:
    """Fetch the benchmark trace onto the PVC and refuse it unless its SHA-256 matches."""
    trace = plan["benchmark"]["trace"]
    dest = f"{TRACE_MOUNT}/{trace['path_on_cache']}"
    script = "\n".join([
        "set -eu",
        f'curl -fsSL --retry 3 -o "{dest}.part" "$TRACE_URL"',
        f'echo "$TRACE_SHA256  {dest}.part" | sha256sum -c -',
        f'mv "{dest}.part" "{dest}"',
        f'echo "trace staged: {dest} ($(wc -l < "{dest}") requests)"',
    ])
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": _meta(TRACE_JOB, ns, cache_labels(plan)),
        "spec": {
            "backoffLimit": 2,
            "template": {
                "metadata": {"labels": cache_labels(plan)},
                "spec": {
                    "restartPolicy": "Never",
                    "automountServiceAccountToken": False,
                    "securityContext": pod_security.restricted_pod(),
                    "containers": [{
                        "name": "stage-trace",
                        "image": image,
                        "command": ["sh", "-c", script],
                        "env": [{"name": "TRACE_URL", "value": url}, {"name": "TRACE_SHA256", "value": sha256}],
                        "securityContext": pod_security.restricted_container(),
                        "volumeMounts": [{"name": MODEL_VOLUME, "mountPath": TRACE_MOUNT}],
                    }],
                    "volumes": [_cache_volume(plan)],
                },
            },
        },
    }


def download_job(plan: dict, ns: str, image: str = model_transfer.DOWNLOAD_IMAGE, *, source: dict | None = None,
                 s3_image: str = model_transfer.S3_IMAGE, parallelism: int = 1, max_workers: int = 16,
                 verify: bool = True, retries: int = model_transfer.DOWNLOAD_RETRIES) -> dict:
    """The model-download Job (model_transfer.download_job): from the Hub by default, or a mirror, a bucket,
    or an existing claim adopted as it is."""
    return model_transfer.download_job(
        plan, ns, _meta(model_transfer.DOWNLOAD_JOB, ns, cache_labels(plan)), _cache_volume(plan), source=source, image=image,
        s3_image=s3_image, parallelism=parallelism, max_workers=max_workers, verify=verify, retries=retries)


def prepull_job(plan: dict, ns: str, nodes: int, deadline_s: int = 3600) -> dict:
    """The short-lived Job that pulls the workers' image on each of the SKU's nodes (model_transfer.prepull_job)."""
    return model_transfer.prepull_job(plan, ns, nodes, plan["labels"], deadline_s)


def compute_domain(plan: dict, ns: str) -> dict | None:
    cd = plan.get("compute_domain")
    if not cd:
        return None
    return {
        "apiVersion": naming.COMPUTE_DOMAIN_API_VERSION,
        "kind": "ComputeDomain",
        "metadata": _meta(cd["name"], ns, plan["labels"]),
        "spec": {
            "numNodes": 0,
            "channel": {"allocationMode": "Single", "resourceClaimTemplate": {"name": cd["claim_template"]}},
        },
    }


def _expected_annotations(plan: dict) -> dict:
    expected = plan.get("expected") or {}
    return {ann: str(expected[key]) for key, ann in naming.EXPECTED_ANNOTATIONS.items() if key in expected}


def _requests(devices: dict, others: dict | None) -> dict:
    """Container resources: the devices requested and limited alike, CPU, memory and ephemeral storage requested
    only (a memory limit would turn a pinned-allocation spike into an OOM kill, as upstream warns)."""
    out = {"requests": {**(others or {}), **devices}}
    if devices:
        out["limits"] = dict(devices)
    return out


def _worker_container(plan: dict, worker: dict, health_port: int, health_path: str) -> dict:
    limits = {plan["sku"]["gpu_resource"]: str(worker["gpus"])}
    if plan["target"]["mode"] == "disagg":
        limits.update(plan["rdma"]["resources"])
    startup = {
        "httpGet": {"path": health_path, "port": health_port},
        "periodSeconds": STARTUP_PERIOD_S,
        "failureThreshold": startup_failure_threshold(plan),
    }
    probes = worker.get("probes") or {}
    if probes.get("startup_timeout_s"):
        startup["timeoutSeconds"] = probes["startup_timeout_s"]
    container: dict = {
        "name": "main",
        "image": worker["image"],
        "command": list(worker["command"]),
        "args": list(worker["args"]),
        "env": copy.deepcopy(worker["env"]),
        "resources": _requests(limits, plan.get("worker_resources")),
        "startupProbe": startup,
        # the weights read-only (every target of the model loads them); the compile caches, which the workers
        # write, in their own folder of the same claim
        "volumeMounts": [{"name": MODEL_VOLUME, "mountPath": plan["model_cache"]["mount_path"], "readOnly": True},
                         {"name": MODEL_VOLUME, "mountPath": COMPILE_CACHE, "subPath": COMPILE_CACHE_FOLDER}],
    }
    if probes.get("liveness"):
        # replaces the operator's default liveness as a whole (it merges no probe field by field)
        container["livenessProbe"] = {"httpGet": {"path": "/live", "port": health_port}, **probes["liveness"]}
    if worker.get("ports"):
        # an explicit list replaces the operator's defaults as a whole: it names them too
        container["ports"] = [{"name": n, "containerPort": p, "protocol": "TCP"} for n, p in worker["ports"].items()]
    capabilities = plan["rdma"]["capabilities"] if plan["target"]["mode"] == "disagg" else []
    container["securityContext"] = pod_security.worker_container(capabilities, plan.get("worker_run_as_user"))
    if plan.get("compute_domain"):
        container["resources"]["claims"] = [{"name": plan["compute_domain"]["claim_name"]}]
    return container


def startup_failure_threshold(plan: dict) -> int:
    """Startup probe periods for the worker's load: two hours unknown, else twice the measured load."""
    measured = (plan.get("startup") or {}).get("load_seconds")
    if not measured:
        return STARTUP_FAILURE_THRESHOLD
    return -(-max(STARTUP_MIN_BUDGET_S, 2 * int(measured)) // STARTUP_PERIOD_S)


def _node_selector(plan: dict) -> dict:
    return {plan["sku"]["node_label_key"]: plan["sku"]["node_label_value"]}


def _placement_affinity(plan: dict) -> dict:
    """Every worker of the graph in the NVLink clique of the first one (plan ``placement``): the upstream placement
    component's pod affinity (templates/kustomize/components/placement/disagg/patch-dgd.yaml:26-63). The selector
    names the worker roles only: the frontend, scheduled anywhere, must not pin the clique."""
    placement = plan["placement"]
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {
            "matchLabels": {naming.DGD_LABEL: plan["name"]},
            "matchExpressions": [{"key": naming.COMPONENT_TYPE_LABEL, "operator": "In",
                                  "values": list(placement["roles"])}],
        },
        "topologyKey": placement["topology_key"],
    }]}}


# The Dynamo operator's update strategy annotation: Recreate stops the old workers before starting new ones
# (no surge capacity needed, no service meanwhile); without it workers roll with a 25% surge.


# A tag the Dynamo operator reads a runtime version from: MAJOR.MINOR.PATCH, an optional v, pre-release and build.
_SEMVER_TAG = re.compile(r"^[vV]?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                         r"(?:-(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*)?"
                         r"(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$")


def has_semver_tag(image: str) -> bool:
    """Whether the operator can read the runtime version from ``image``'s tag; without one (a digest, ``latest``,
    ``1.5``) its webhook refuses the component unless ``runtimeVersionOverride`` states it."""
    name = image.split("@", 1)[0]
    tag = name.rsplit(":", 1)[1] if ":" in name.rsplit("/", 1)[-1] else ""
    return bool(_SEMVER_TAG.match(tag.strip()))


def dynamo_graph_deployment(plan: dict, ns: str) -> dict:
    frontend = plan["frontend"]
    scaling = plan.get("autoscaling") if (plan.get("autoscaling") or {}).get("engine") == "planner" else None
    components = [{
        "name": frontend["component"],
        "type": "frontend",
        "replicas": 1,
        "podTemplate": {"spec": {"securityContext": pod_security.restricted_pod(), "containers": [{
            "name": "main",
            "image": frontend["image"],
            "command": list(frontend["command"]),
            "args": list(frontend["args"]),
            "env": copy.deepcopy(frontend["env"]),
            "securityContext": pod_security.restricted_container(),
            **({"resources": _requests({}, frontend["resources"])} if frontend.get("resources") else {}),
        }]}},
    }]
    for worker in plan["workers"]:
        pod_spec: dict = {
            "nodeSelector": _node_selector(plan),
            "containers": [_worker_container(plan, worker, 9090, "/live")],
            "volumes": [_cache_volume(plan)],
        }
        if plan["sku"]["cpu_arch"] == "arm64":
            pod_spec["tolerations"] = [{"key": "kubernetes.io/arch", "operator": "Equal", "value": "arm64",
                                        "effect": "NoSchedule"}]
        if plan.get("compute_domain"):
            pod_spec["resourceClaims"] = [{"name": plan["compute_domain"]["claim_name"],
                                           "resourceClaimTemplateName": plan["compute_domain"]["claim_template"]}]
        if plan.get("placement"):
            pod_spec["affinity"] = _placement_affinity(plan)
        component = {
            "name": worker["component"],
            "type": worker["role"],
            "replicas": worker["replicas"],
            # NIXL stages transfer metadata through /dev/shm; the 64 MB default is far too small.
            "sharedMemorySize": "64Gi",
            "podTemplate": {"spec": pod_spec},
        }
        if plan.get("update_strategy") == "Recreate":
            # the operator reads a worker's strategy from its pod template (or the DGD's spec.annotations), never
            # from the DGD's own metadata; per worker, so the frontend keeps rolling without an outage
            component["podTemplate"] = {"metadata": {"annotations": {naming.STRATEGY_ANNOTATION: "Recreate"}},
                                        "spec": pod_spec}
        if worker["nodes"] > 1:
            component["multinode"] = {"nodeCount": worker["nodes"]}
        if scaling:
            # the component's adapter owns its replicas (the planner scales it): the collection leaves them unset,
            # so an update neither resets them nor reads the planner's choice as drift
            component["scalingAdapter"] = {}
            del component["replicas"]
        components.append(component)
    annotations = _expected_annotations(plan)
    if scaling:
        components.append(planner.planner_component(plan, frontend["image"]))
        annotations[naming.MAX_REPLICAS_ANNOTATION] = str(scaling["max_replicas"])
    for component in components:
        image = component["podTemplate"]["spec"]["containers"][0]["image"]
        if plan.get("runtime_version") and not has_semver_tag(image):
            component["runtimeVersionOverride"] = plan["runtime_version"]
    return {
        "apiVersion": naming.DGD_API_VERSION,
        "kind": "DynamoGraphDeployment",
        "metadata": _meta(plan["name"], ns, plan["labels"], annotations),
        "spec": {"backendFramework": plan["target"]["framework"], "components": components},
    }


def standalone_deployment(plan: dict, ns: str) -> list[dict]:
    worker = plan["workers"][0]
    port = plan["frontend_port"]
    selector = {"app.kubernetes.io/name": plan["name"]}
    pod_labels = {**plan["labels"], **selector}
    container = _worker_container(plan, worker, port, "/health")
    container["securityContext"] = pod_security.restricted_container()
    container["ports"] = [{"name": "http", "containerPort": port}]
    container["readinessProbe"] = {"httpGet": {"path": "/health", "port": port}, "periodSeconds": 10}
    container["volumeMounts"].append({"name": "dshm", "mountPath": "/dev/shm"})
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(plan["name"], ns, plan["labels"], _expected_annotations(plan)),
        "spec": {
            # KEDA's HPA owns the replicas of an autoscaled target: the collection leaves them unset
            **({} if plan.get("autoscaling") else {"replicas": worker["replicas"]}),
            # Every GPU of the node is taken: a rolling update could never schedule a second pod.
            "strategy": {"type": "Recreate"},
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": pod_labels},
                "spec": {
                    # it never calls the API: no token to steal
                    "automountServiceAccountToken": False,
                    "securityContext": pod_security.restricted_pod(),
                    "nodeSelector": _node_selector(plan),
                    "containers": [container],
                    "volumes": [_cache_volume(plan),
                                {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}}],
                },
            },
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _meta(plan["frontend_service"], ns, plan["labels"]),
        "spec": {"selector": selector, "ports": [{"name": "http", "port": port, "targetPort": port}]},
    }
    return [deployment, service]


AIPERF_ROOT = f"{TRACE_MOUNT}/perf"
SUMMARY_BEGIN = "=== AIPERF SUMMARY BEGIN ==="
SUMMARY_END = "=== AIPERF SUMMARY END ==="

_MODEL_WAIT = """python3 - <<'PY'
import json, os, sys, time, urllib.request
url = "http://%s/v1/models" % os.environ["ENDPOINT"]
for attempt in range(720):
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            if any(m.get("id") == os.environ["TARGET_MODEL"] for m in json.load(r).get("data", [])):
                print("model %s is served at %s" % (os.environ["TARGET_MODEL"], url), flush=True)
                sys.exit(0)
    except Exception as exc:
        print("waiting for %s: %s" % (url, exc), flush=True)
    time.sleep(5)
sys.exit("model %s never appeared at %s" % (os.environ["TARGET_MODEL"], url))
PY"""


def _job_report_script() -> str:
    """aiperf_job_report.py, run in the Job after AIPerf (the same file the controller imports)."""
    return Path(aiperf_job_report.__file__).read_text(encoding="utf-8")


def aiperf_job(plan: dict, ns: str, *, run_id: str, concurrency: int, request_count: int, image: str,
               deadline_s: int, warmup_requests: int = 5, warmup_isl: int = 8000, warmup_osl: int = 1000,
               workers_max: int | None = None, extra_args: list | None = None, goodput: str | None = None,
               request_rate_ceiling: float | None = None) -> dict:
    """The recipe's AIPerf Job: five sequential warm-up requests, then the agentic trace replayed with
    mooncake_trace, streaming, at the target's concurrency; artifacts on the PVC under a per-run
    directory; the summary printed between markers so it travels through the pod log.

    ``goodput`` is AIPerf's ``--goodput`` value (the user's objectives, per request). ``request_rate_ceiling``
    (requests/s) adds ``--request-rate`` with constant arrivals to both runs: at a fixed concurrency alone AIPerf
    0.13 polls for a free slot without sleeping, one core at 100 % for the whole run, while with a rate it
    tries once per tick (a freed slot waits at most one tick). After AIPerf the Job
    prints the run's facts (trace checksums, UTC times) and one compact row per request
    (``aiperf_job_report``)."""
    trace = plan["benchmark"]["trace"]
    common = ('-m "$TARGET_MODEL" --tokenizer "$TOKENIZER" --url "http://$ENDPOINT" --endpoint-type chat '
              "--streaming --ui-type simple "
              '${REQUEST_RATE_CEILING:+--request-rate "$REQUEST_RATE_CEILING" --arrival-pattern constant}'
              '${TOKENIZER_TRUST_REMOTE_CODE:+ --tokenizer-trust-remote-code}')
    # the user's extra arguments are the script's "$@": each stays one argument, never shell text
    extra = '"$@"'
    script = "\n".join([
        "set -u",
        # a connection per in-flight request and AIPerf's workers: the soft open-file limit up to the hard one
        # (upstream raises it with ulimit -n too)
        'ulimit -n "$(ulimit -Hn)" 2>/dev/null || true',
        'STARTED="$(date -u +%Y-%m-%dT%H:%M:%SZ)"',
        'RUN_DIR="$ROOT_ARTIFACT_DIR/$RUN_ID"',
        'mkdir -p "$RUN_DIR"',
        'test -s "$TRACE_FILE" || { echo "benchmark trace $TRACE_FILE is missing on the model cache PVC: '
        'stage it with the model_cache role" >&2; exit 2; }',
        'head -n "$REQUEST_COUNT" "$TRACE_FILE" > "$RUN_DIR/trace.jsonl"',
        _MODEL_WAIT,
        'if [ "$WARMUP_REQUESTS" -gt 0 ]; then echo "warm-up: $WARMUP_REQUESTS sequential requests"',
        f'aiperf profile {common} --isl "$WARMUP_ISL" --osl "$WARMUP_OSL" --concurrency 1 '
        f'--request-count "$WARMUP_REQUESTS" --artifact-dir "$RUN_DIR/warmup" {extra} || echo "warm-up failed: continuing"',
        'else echo "warm-up: skipped"; fi',
        'echo "profiling: $REQUEST_COUNT requests at concurrency $CONCURRENCY"',
        f'aiperf profile {common} --input-file "$RUN_DIR/trace.jsonl" --custom-dataset-type {trace["custom_dataset_type"]} '
        '--request-count "$REQUEST_COUNT" --prompt-input-tokens-block-size 512 --use-server-token-count '
        '--extra-inputs ignore_eos:true --concurrency "$CONCURRENCY" --workers-max "$WORKERS_MAX" --random-seed 42 '
        '--request-timeout-seconds 1200 --artifact-dir "$RUN_DIR/profile" ${GOODPUT:+--goodput "$GOODPUT"} '
        f'{extra}',
        "rc=$?",
        'echo "aiperf exit code: $rc"',
        "STARTED=\"$STARTED\" RUN_DIR=\"$RUN_DIR\" AIPERF_RC=\"$rc\" python3 - <<'PY' || echo \"run report failed\"",
        _job_report_script().rstrip(),
        "PY",
        'S="$RUN_DIR/profile/profile_export_aiperf.json"',
        f'if [ -s "$S" ]; then echo "{SUMMARY_BEGIN}"; cat "$S"; echo; echo "{SUMMARY_END}"; fi',
        'R="$RUN_DIR/profile/profile_export.jsonl"',
        'if [ ! -s "$S" ] && [ -s "$R" ]; then echo "=== AIPERF RECORDS BEGIN ==="; tail -n 500 "$R"; '
        'echo "=== AIPERF RECORDS END ==="; exit 0; fi',
        'echo "artifacts: $RUN_DIR"',
        '[ -s "$S" ] || exit "$rc"',
    ])
    env = {
        "ENDPOINT": plan["benchmark"]["endpoint"],
        "TARGET_MODEL": plan["model"]["served_model_name"],
        "TOKENIZER": plan["checkpoint"]["hf_id"],
        **({"TOKENIZER_TRUST_REMOTE_CODE": "1"} if plan.get("trust_remote_code") else {}),
        "CONCURRENCY": str(concurrency),
        "REQUEST_COUNT": str(request_count),
        "WORKERS_MAX": str(workers_max or concurrency),
        "WARMUP_REQUESTS": str(warmup_requests),
        "WARMUP_ISL": str(warmup_isl),
        "WARMUP_OSL": str(warmup_osl),
        "TRACE_FILE": f"{TRACE_MOUNT}/{trace['path_on_cache']}",
        "ROOT_ARTIFACT_DIR": AIPERF_ROOT,
        "RUN_ID": run_id,
        **({"GOODPUT": goodput} if goodput else {}),
        **({"REQUEST_RATE_CEILING": f"{float(request_rate_ceiling):g}"} if request_rate_ceiling else {}),
        "HF_HOME": TRACE_MOUNT,
        "HF_HUB_OFFLINE": "1",
        "AIPERF_HTTP_CONNECTION_LIMIT": "200",
        "AIPERF_SERVICE_PROFILE_CONFIGURE_TIMEOUT": "3600",
        "AIPERF_DATASET_CONFIGURATION_TIMEOUT": "3600",
    }
    labels = {**plan["labels"], naming.RUN_ID_LABEL: run_id}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": _meta(plan["benchmark"]["job"], ns, labels),
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": int(deadline_s),
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "restartPolicy": "Never",
                    "automountServiceAccountToken": False,
                    "securityContext": pod_security.restricted_pod(),
                    # beside the frontend, as every upstream perf Job, so that TTFT compares with the published
                    # table; preferred, not required as upstream: a full frontend node delays, never blocks, a run
                    "affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
                        "weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": _frontend_labels(plan)},
                                                           "topologyKey": "kubernetes.io/hostname"}}]}},
                    "containers": [{
                        "name": "aiperf",
                        "securityContext": pod_security.restricted_container(),
                        "image": image,
                        "command": ["sh", "-c", script, "aiperf-job"],
                        "args": [str(a) for a in extra_args or []],
                        "env": [{"name": k, "value": v} for k, v in env.items()],
                        "resources": {"requests": {"cpu": "4", "memory": "8Gi"}, "limits": {"memory": "64Gi"}},
                        "volumeMounts": [{"name": MODEL_VOLUME, "mountPath": TRACE_MOUNT}],
                    }],
                    "volumes": [_cache_volume(plan)],
                },
            },
        },
    }


def _frontend_labels(plan: dict) -> dict:
    """The labels of the target's frontend pods: the operator's for a graph, the standalone server's own."""
    if plan["kind"] == "DynamoGraphDeployment":
        return {naming.DGD_LABEL: plan["name"], naming.COMPONENT_TYPE_LABEL: "frontend"}
    return {"app.kubernetes.io/name": plan["name"]}


def serving_objects(plan: dict, ns: str) -> list[dict]:
    """What the engine role applies: ComputeDomain (when needed), what autoscales the target (the planner's
    configuration and identity before the graph that runs it), then the workload (and its KEDA ScaledObject)."""
    objects = network_policy.network_policies(plan, ns)
    cd = compute_domain(plan, ns)
    if cd:
        objects.append(cd)
    scaling = plan.get("autoscaling")
    if plan["kind"] == "DynamoGraphDeployment":
        objects += planner.planner_objects(plan, ns)
        objects.append(dynamo_graph_deployment(plan, ns))
    else:
        objects.extend(standalone_deployment(plan, ns))
        if scaling:
            objects.append(autoscaling.scaled_object(plan, ns, prometheus_url=scaling["prometheus_url"],
                                                     min_replicas=scaling["min_replicas"],
                                                     max_replicas=scaling["max_replicas"]))
    return objects


def deploy_manifests(plan: dict, ns: str, storage_class: str | None = None) -> list[dict]:
    """Every object a deploy applies, in order (the HF token Secret is listed without its value)."""
    return [
        namespace(ns, cache_labels(plan)),
        hf_token_secret(plan, ns, "<from hf_token>"),
        model_cache_pvc(plan, ns, storage_class),
        download_job(plan, ns),
        *serving_objects(plan, ns),
    ]

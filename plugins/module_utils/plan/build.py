# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Resolve a user's choices against the catalog into a complete deployment plan.

``build_plan(request)`` is the single entry point: it validates every input (clear errors before
anything touches a cluster), applies the deployment-matrix rules, computes each worker's command
line and environment, and the capacity estimate. A request that breaks several rules is refused
with all of them (PlanRefused), the inputs first, then the matrix rules, then the fit.
Pure Python: no Ansible imports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ansible_collections.inferops.dynamo.plugins.module_utils import naming
from ansible_collections.inferops.dynamo.plugins.module_utils.plan import (
    deploy_inputs,
    engine_args,
    grammar,
    matrix_rules,
)
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.catalog import Catalog, load_catalog
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.checks import FIELD_INPUTS, Checks
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.errors import PlanError, PlanRefused
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.rdma import PROVIDERS, rdma_profile
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.sizing import capacity_plan
from ansible_collections.inferops.dynamo.plugins.module_utils.render import planner, pod_security

DEFAULT_MODEL = "muse-spark-open-816b-a42b"
DEFAULT_FRAMEWORK = "sglang"
COLLECTION = "inferops.dynamo"

CHOICES = {
    "mode": ["agg", "disagg", "kv-router"],
    "framework": ["sglang", "vllm"],
    "checkpoint": ["nvfp4", "mxfp4", "mxfp4-from-bf16", "bf16"],
    "parallelism": ["auto", "tp", "tp-ep", "dp", "dp-ep"],
    "speculative": ["dspark", "dspark-adaptive", "none"],
    "rdma_provider": list(PROVIDERS),
    "vllm_frontend": ["rust", "python"],
    "kv_cache_dtype": ["auto", "fp8"],
    "attention_backend": ["ROCM_AITER_FA", "TRITON_ATTN"],
    "update_strategy": ["RollingUpdate", "Recreate"],
    "autoscaling": list(planner.MODES),
}
INTEGERS = ("concurrency", "context_length", "max_num_seqs", "request_count", "tensor_parallel_size", "load_seconds",
            "autoscaling_min_replicas", "autoscaling_max_replicas", "autoscaling_gpu_budget", "autoscaling_interval",
            "rdma_devices_per_worker")
# whole numbers where 0 means "off"
COUNTS = ("migration_limit", "worker_run_as_user")
# Kubernetes resource quantities the pods request beside their GPUs (catalog runtimes.dynamo.resources)
QUANTITIES = {"worker_cpu": ("worker", "cpu"), "worker_memory": ("worker", "memory"),
              "worker_ephemeral_storage": ("worker", "ephemeral-storage"),
              "frontend_cpu": ("frontend", "cpu"), "frontend_memory": ("frontend", "memory")}
# positive numbers that may have a fraction
NUMBERS = ("autoscaling_ttft_ms", "autoscaling_itl_ms", "autoscaling_tolerance")
STRINGS = ("model", "sku", "checkpoint_repo", "draft_repo", "image", "flavour", "rdma_net_devices", "cache_claim",
           "autoscaling_prometheus_url", "checkpoint_revision", "draft_revision", "monitoring_namespace")
# The grammar each free-text input must follow (plan.grammar); model, sku and flavour are looked up by name.
GRAMMAR = {
    "checkpoint_repo": "hub_repo",
    "draft_repo": "hub_repo",
    "checkpoint_revision": "commit",
    "draft_revision": "commit",
    "image": "image",
    "cache_claim": "dns_subdomain",
    "rdma_net_devices": "net_devices",
    "autoscaling_prometheus_url": "url",
    "monitoring_namespace": "dns_label",
}
BOOLEANS = ("frontend_decoding", "trust_remote_code", "network_policy", "allow_unpinned_weights")
# lists: who may call the endpoint (network_policy.client_peers) and the API server's address ranges
LISTS = ("network_policy_clients", "network_policy_api_server_cidrs")
KNOWN = (set(CHOICES) | set(INTEGERS) | set(COUNTS) | set(QUANTITIES) | set(NUMBERS) | set(STRINGS) | set(BOOLEANS)
         | set(LISTS) | {"modalities"})
DEFAULT_MONITORING_NAMESPACE = "monitoring"
# Without these there is no target, so nothing else can be judged.
IDENTITY = ("sku", "mode", "framework", "model")


def _blank(value) -> bool:
    return value is None or (isinstance(value, str) and value.strip() == "")


def normalise_request(request: dict, catalog: Catalog | None = None) -> dict:
    """Types and choices of every input; ``None`` or "" means "the target's default"."""
    out, refusals = _normalise(request, catalog or load_catalog())
    if refusals:
        raise PlanRefused(refusals)
    return out


def _normalise(request, catalog: Catalog) -> tuple[dict, list[PlanError]]:
    """The valid inputs, and a refusal for each invalid one (which is left out, as if unset)."""
    if not isinstance(request, dict):
        return {}, [PlanError(f"the plan request must be a mapping, got {type(request).__name__}.", inputs=IDENTITY)]
    refusals: list[PlanError] = []
    unknown = sorted(k for k in request if k not in KNOWN)
    if unknown:
        refusals.append(PlanError(f"unknown plan input(s): {', '.join(unknown)}.", "unknown-input", sorted(KNOWN),
                                  inputs=unknown))
    out: dict = {}
    for key, value in request.items():
        if key in unknown or _blank(value):
            continue
        try:
            out[key] = _input(key, value)
        except PlanError as exc:
            refusals.extend(getattr(exc, "errors", [exc]))
    for key, find in (("sku", catalog.sku), ("model", catalog.model)):
        try:
            if key in out:
                find(out[key])
        except PlanError as exc:
            refusals.append(exc)
            del out[key]
    refused = set().union(*(e.inputs for e in refusals))
    if "sku" not in out and "sku" not in refused:
        refusals.append(PlanError("sku is required (-e sku=...).", "missing-sku", sorted(catalog.skus),
                                  inputs=["sku"]))
    if "mode" not in out and "mode" not in refused:
        refusals.append(PlanError("mode is required (-e mode=...).", "missing-mode", CHOICES["mode"], inputs=["mode"]))
    # The fundamental ones first: an unknown input (often a typo of a known one), then what names the target.
    order = {key: n for n, key in enumerate(IDENTITY)}
    refusals.sort(key=lambda e: (e.rule != "unknown-input", min((order.get(i, len(order)) for i in e.inputs),
                                                                default=len(order))))
    return out, refusals


def _input(key: str, value):
    if key in INTEGERS:
        return _positive_int(key, value)
    if key in COUNTS:
        return _count(key, value)
    if key in QUANTITIES:
        return _quantity(key, value)
    if key in NUMBERS:
        return _positive_number(key, value)
    if key in CHOICES:
        if isinstance(value, bool) and {"on", "off"} <= set(CHOICES[key]):
            value = "on" if value else "off"        # YAML 1.1 reads an unquoted on/off (AWX's extra vars) as a bool
        text = str(value).strip()
        if text not in CHOICES[key]:
            raise PlanError(f"{key}='{text}' is not valid.", f"invalid-{key.replace('_', '-')}", CHOICES[key],
                            inputs=[key])
        return text
    if key in BOOLEANS:
        return _boolean(key, value)
    if key == "modalities":
        return _modalities(value)
    if key in LISTS:
        return _list(key, value)
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise PlanError(f"{key} must be a string, got {type(value).__name__}.", f"invalid-{key.replace('_', '-')}",
                        inputs=[key])
    text = str(value).strip()
    if key in GRAMMAR:
        grammar.check(key, GRAMMAR[key], text)
    return text


def _list(key: str, value) -> list:
    if key == "network_policy_clients":
        broken = deploy_inputs.clients_refusals(value)
    else:
        items = value if isinstance(value, list) else [value]
        broken = [e for e in (grammar.refusal(f"{key}[{n}]", "cidr", c) for n, c in enumerate(items)) if e]
        value = items
    if broken:
        raise PlanRefused(broken)
    return [dict(v) if isinstance(v, dict) else str(v) for v in value]


def _positive_int(key: str, value) -> int:
    rule = f"invalid-{key.replace('_', '-')}"
    if isinstance(value, bool):
        raise PlanError(f"{key} must be a positive whole number, got {value!r}.", rule, inputs=[key])
    try:
        number = int(str(value).strip())
    except ValueError as exc:
        raise PlanError(f"{key} must be a positive whole number, got {value!r}.", rule, inputs=[key]) from exc
    if number <= 0:
        raise PlanError(f"{key} must be a positive whole number, got {number}.", rule, inputs=[key])
    return number


def _count(key: str, value) -> int:
    rule = f"invalid-{key.replace('_', '-')}"
    text = str(value).strip()
    if isinstance(value, bool) or not text.isdigit():
        raise PlanError(f"{key} must be a whole number, 0 or more, got {value!r}.", rule, inputs=[key])
    return int(text)


# A Kubernetes quantity: a decimal number with an optional SI or binary suffix ("16", "500m", "512Gi", "1.5T").
_QUANTITY = re.compile(r"^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$")


def _quantity(key: str, value) -> str:
    text = str(value).strip()
    if isinstance(value, bool) or not _QUANTITY.match(text) or not float(re.sub(r"[A-Za-z]+$", "", text)) > 0:
        raise PlanError(f"{key} must be a Kubernetes quantity above zero (16, 500m, 512Gi), got {value!r}.",
                        f"invalid-{key.replace('_', '-')}", ["16", "500m", "512Gi"], inputs=[key])
    return text


def _positive_number(key: str, value) -> float:
    rule = f"invalid-{key.replace('_', '-')}"
    try:
        number = float(str(value).strip())
    except ValueError as exc:
        raise PlanError(f"{key} must be a positive number, got {value!r}.", rule, inputs=[key]) from exc
    if isinstance(value, bool) or not number > 0:
        raise PlanError(f"{key} must be a positive number, got {value!r}.", rule, inputs=[key])
    return number


def _boolean(key: str, value) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "1", "on"):
        return True
    if text in ("false", "no", "0", "off"):
        return False
    raise PlanError(f"{key} must be true or false, got {value!r}.", f"invalid-{key.replace('_', '-')}", ["true", "false"],
                    inputs=[key])


def _modalities(value) -> list[str]:
    items = value if isinstance(value, list) else str(value).split(",")
    cleaned = [str(v).strip() for v in items if str(v).strip()]
    valid = ["text", "image", "audio", "video"]
    bad = [m for m in cleaned if m not in valid]
    if bad or not cleaned:
        raise PlanError(f"modalities {cleaned} are not valid.", "invalid-modalities", valid, inputs=["modalities"])
    return cleaned


def _default_modalities(model: dict, sku: dict, mode: str) -> list[str]:
    if sku["vendor"] == "amd":
        return ["text"]
    if mode == "disagg":
        # Video fails in the disaggregated recipes (no decord2 in the image): not offered by default.
        return [m for m in model["modalities"] if m != "video"]
    return list(model["modalities"])


def _without_blank_revision(entry: dict) -> dict:
    """A catalog checkpoint or draft model as the plan reads it: an empty ``revision`` (the catalog's field where
    the sources publish no commit) is no revision at all."""
    out = dict(entry)
    if _blank(out.get("revision")):
        out.pop("revision", None)
    return out


@dataclass
class Resolved:
    """Everything the rules and argument builders read, with defaults applied."""

    catalog: Catalog
    model_key: str
    model: dict
    sku_key: str
    sku: dict
    framework: str
    mode: str
    target_key: str
    target: dict
    runtime_key: str
    runtime: dict
    checkpoint_key: str
    checkpoint: dict
    draft: dict | None
    parallelism: str
    speculative: str
    concurrency: int
    request_count: int
    context_length: int
    max_num_seqs: int | None
    kv_cache_dtype: str
    modalities: list
    frontend_decoding: bool
    vllm_frontend: str | None
    vllm_frontend_requested: str | None
    attention_backend: str | None
    attention_backend_requested: str | None
    tp: int
    ep: int
    gpus_per_worker: int
    kv_replicas: int
    trust_remote_code: bool = False
    allow_unpinned_weights: bool = False
    network_policy: dict = field(default_factory=dict)
    rdma: dict = field(default_factory=dict)

    @property
    def served_model_name(self) -> str:
        """The checkpoint actually served: the repository it is loaded from."""
        return self.checkpoint.get("served_model_name") or self.checkpoint["hf_id"]


def resolve(request: dict, catalog: Catalog | None = None) -> Resolved:
    checks = Checks()
    resolved = _resolve(request, catalog or load_catalog(), checks)
    if checks.errors:
        raise PlanRefused(checks.errors)
    return resolved


def _resolve(request: dict, catalog: Catalog, checks: Checks) -> Resolved | None:
    """The request with the target's defaults; its refusals go to ``checks``. None when no target can be
    named (every refusal up to there is recorded): then no rule can be judged."""
    req, refusals = _normalise(request, catalog)
    for refusal in refusals:
        checks.record(refusal)
    if checks.refused_inputs & set(IDENTITY):
        return None
    model_key = req.get("model", DEFAULT_MODEL)
    model = catalog.model(model_key)
    sku = catalog.sku(req["sku"])
    framework = req.get("framework", "vllm" if sku["vendor"] == "amd" and "framework" not in req else DEFAULT_FRAMEWORK)
    unserved = matrix_rules.vendor_frameworks(sku["vendor"], framework, req["mode"], sku)
    if unserved:  # no target serves this on the SKU
        for refusal in unserved:
            checks.record(refusal)
        return None
    try:
        target_key, target = catalog.target(framework, req["mode"], req["sku"])
    except PlanError as exc:
        checks.record(exc)
        return None

    flavour = req.get("flavour")
    flavours = target.get("flavours", {})
    if flavour is not None:
        if flavour in flavours:
            req = {**{k: v for k, v in flavours[flavour].items()}, **req}
        else:  # whatever a flavour would have set is unknown too
            checks.record(PlanError(f"flavour '{flavour}' is not defined for {target_key}.", "unknown-flavour",
                                    sorted(flavours) or ["(none for this target)"],
                                    inputs={"flavour", *(k for f in flavours.values() for k in f)}))

    checkpoint_key = req.get("checkpoint", target["checkpoint"])
    checkpoint = _without_blank_revision(model["checkpoints"][checkpoint_key])
    if "checkpoint_repo" in req:
        checkpoint["hf_id"] = req["checkpoint_repo"]
        # another repository: the catalog's revision and its need for remote code were the catalog's repository's
        checkpoint.pop("revision", None)
        checkpoint.pop("trust_remote_code", None)
    if "checkpoint_revision" in req:
        checkpoint["revision"] = req["checkpoint_revision"]

    speculative = req.get("speculative", target.get("speculative", "none"))
    draft = None
    if speculative != "none":
        draft = _without_blank_revision(model["draft_models"]["dspark"])
        if "draft_repo" in req:
            draft["hf_id"] = req["draft_repo"]
            draft.pop("revision", None)
        if "draft_revision" in req:
            draft["revision"] = req["draft_revision"]
    trust_remote_code = req.get("trust_remote_code", bool(checkpoint.get("trust_remote_code", False)))
    if trust_remote_code and not checkpoint.get("revision"):
        # remote code runs on every GPU node: only code whose revision cannot move under us
        checks.record(PlanError(
            f"trust_remote_code runs the repository's Python ({checkpoint['hf_id']}) in every worker, so its "
            "revision must be pinned; a branch can change under a running deployment.", "remote-code-unpinned",
            ["checkpoint_revision=<40-character commit id>", "trust_remote_code=false"],
            inputs=["trust_remote_code", "checkpoint_revision"]))

    concurrency = req.get("concurrency", target["benchmark"]["concurrency"])
    parallelism = req.get("parallelism", target.get("parallelism", "tp-ep"))
    if "parallelism" not in req and checkpoint_key == "bf16":
        parallelism = "tp"  # BF16 stays on plain TP (002)
    if parallelism == "auto":
        parallelism = "tp-ep" if (concurrency >= matrix_rules.TP_EP_THROUGHPUT_FROM
                                  and checkpoint_key in ("mxfp4", "mxfp4-from-bf16")) else "tp"

    workers = target["workers"]
    gpus_per_worker = int(workers[0]["gpus"])
    tp = req.get("tensor_parallel_size", int(workers[0]["tp"]))
    if target["runtime"] == "dynamo":
        ep = tp if parallelism == "tp-ep" else 1
    else:
        ep = tp if parallelism == "tp-ep" else 1
    kv_replicas = sum(int(w["replicas"]) for w in workers if w["role"] in ("worker", "decode", "server"))

    context_length = req.get("context_length", target["context_length"])
    if context_length > model["max_context"]:
        checks.record(PlanError(f"context_length={context_length} exceeds the model's {model['max_context']} tokens.",
                                "context-too-long", [f"context_length<={model['max_context']}"],
                                inputs=["context_length"]))
        context_length = target["context_length"]
    max_num_seqs = req.get("max_num_seqs")
    if max_num_seqs is None and sku["vendor"] == "amd" and context_length == matrix_rules.LONG_CONTEXT:
        max_num_seqs = matrix_rules.LONG_CONTEXT_MAX_SEQS

    attention_requested = req.get("attention_backend")
    attention = None
    if sku["vendor"] == "amd":
        attention = attention_requested or ("TRITON_ATTN" if speculative == "dspark-adaptive" else "ROCM_AITER_FA")
    vllm_frontend_requested = req.get("vllm_frontend")
    vllm_frontend = None
    if target["runtime"] == "vllm-standalone" and sku["vendor"] == "nvidia":
        vllm_frontend = vllm_frontend_requested or target.get("vllm_frontend", "python")

    resolved = Resolved(
        catalog=catalog, model_key=model_key, model=model, sku_key=req["sku"], sku=sku,
        framework=framework, mode=req["mode"], target_key=target_key, target=target,
        runtime_key=target["runtime"], runtime=catalog.runtimes[target["runtime"]],
        checkpoint_key=checkpoint_key, checkpoint=checkpoint, draft=draft,
        parallelism=parallelism, speculative=speculative, concurrency=concurrency,
        request_count=req.get("request_count", target["benchmark"]["request_count"]),
        context_length=context_length, max_num_seqs=max_num_seqs,
        kv_cache_dtype=req.get("kv_cache_dtype", target["kv_cache_dtype"]),
        modalities=req.get("modalities", _default_modalities(model, sku, req["mode"])),
        frontend_decoding=req.get("frontend_decoding", False),
        vllm_frontend=vllm_frontend, vllm_frontend_requested=vllm_frontend_requested,
        attention_backend=attention, attention_backend_requested=attention_requested,
        tp=tp, ep=ep, gpus_per_worker=gpus_per_worker, kv_replicas=kv_replicas,
        trust_remote_code=trust_remote_code,
        allow_unpinned_weights=req.get("allow_unpinned_weights", False),
        network_policy={"enabled": req.get("network_policy", True), "clients": req.get("network_policy_clients", []),
                        "api_server_cidrs": req.get("network_policy_api_server_cidrs", []),
                        "monitoring_namespace": req.get("monitoring_namespace", DEFAULT_MONITORING_NAMESPACE)},
    )
    try:
        resolved.rdma = rdma_profile(req.get("rdma_provider", "none"), gpus_per_worker, sku, req.get("rdma_net_devices"),
                                     devices=req.get("rdma_devices_per_worker"), runtime=resolved.runtime)
    except PlanError as exc:
        checks.record(exc)
        resolved.rdma = rdma_profile("none", gpus_per_worker, sku)
    frontend_settings = resolved.runtime.get("frontend", {})
    resolved.migration_limit = req.get("migration_limit", frontend_settings.get("migration_limit", 0))  # type: ignore[attr-defined]
    resolved.resources = _pod_resources(resolved, req)  # type: ignore[attr-defined]
    resolved.worker_run_as_user = req.get("worker_run_as_user", resolved.runtime.get("worker_run_as_user"))  # type: ignore[attr-defined]
    resolved.image = req.get("image")  # type: ignore[attr-defined]
    resolved.cache_claim = req.get("cache_claim")  # type: ignore[attr-defined]
    resolved.load_seconds = req.get("load_seconds")  # type: ignore[attr-defined]
    resolved.update_strategy = req.get("update_strategy", "RollingUpdate")  # type: ignore[attr-defined]
    resolved.autoscaling = req.get("autoscaling", "off")  # type: ignore[attr-defined]
    for key in ("autoscaling_min_replicas", "autoscaling_max_replicas", "autoscaling_gpu_budget",
                "autoscaling_interval", "autoscaling_prometheus_url", "autoscaling_ttft_ms", "autoscaling_itl_ms",
                "autoscaling_tolerance"):
        setattr(resolved, key, req.get(key))
    return resolved


def _pod_resources(r: Resolved, req: dict) -> dict:
    """CPU, memory and ephemeral storage each pod requests beside its GPUs (``{"worker": {...}, "frontend":
    {...}}``): the catalog's for the engine, each overridden by its plan input. Requests only: no limit."""
    defaults = r.runtime.get("resources", {}).get(r.framework, {})
    out = {role: dict(defaults.get(role, {})) for role in ("worker", "frontend")}
    for key, (role, resource) in QUANTITIES.items():
        if key in req:
            out[role][resource] = req[key]
    return out


def _image(r: Resolved) -> str:
    if getattr(r, "image", None):
        return r.image  # type: ignore[attr-defined]
    return runtime_image(r)["image"]


def runtime_image(r: Resolved) -> dict:
    """The catalog's image entry for this plan: the image, its pinned engines and their source."""
    images = r.runtime["images"]
    return images[r.framework] if r.runtime_key == "dynamo" else images[r.sku["vendor"]]


def _workers(r: Resolved) -> list[dict]:
    image = _image(r)
    result = []
    for spec in r.target["workers"]:
        role = spec["role"]
        if r.runtime_key == "vllm-standalone":
            command, args, env = engine_args.standalone_vllm(r)
        elif r.framework == "sglang":
            command, args, env = engine_args.sglang_worker(r, role)
        else:
            command, args, env = engine_args.dynamo_vllm_worker(r, role)
        result.append({
            "component": spec["component"],
            "role": role,
            "replicas": int(spec["replicas"]),
            "gpus": int(spec["gpus"]),
            "nodes": max(1, int(spec["gpus"]) // int(r.sku["gpus_per_node"])),
            "tp": r.tp,
            "ep": r.ep,
            "image": image,
            "command": command,
            "args": args,
            "env": env,
            "ports": engine_args.worker_ports(r, role),
            "probes": engine_args.worker_probes(r),
        })
    return result


def _compute_domain(r: Resolved, name: str) -> dict | None:
    if not engine_args.claims_compute_domain(r):
        return None
    return {
        "name": f"{name}-cd",
        "claim_template": f"{name}-cd-channel",
        "claim_name": "compute-domain-channel",
        "reason": f"{r.sku['display_name']} multi-GPU workers need a DRA ComputeDomain for mode {r.mode} (000).",
    }


def _placement(r: Resolved) -> dict | None:
    """Where the workers must land together: prefill and decode of rdma_provider=mnnvl in one NVLink clique (KV
    moves over cuda_ipc across trays only inside it; split, they serve empty answers and report Ready)."""
    if r.mode != "disagg" or r.rdma.get("provider") != "mnnvl" or not r.sku.get("clique_label"):
        return None
    return {"topology_key": r.sku["clique_label"],
            "roles": [w["role"] for w in r.target["workers"]]}


def _deployment_warnings(r: Resolved, placement: dict | None) -> list[str]:
    """What a platform engineer must know about the pods before deploying (the plan prints it)."""
    out = []
    rdma = r.rdma
    if r.mode == "disagg" and rdma.get("pod_security") == "privileged":
        out.append(f"disaggregated workers add capabilities {', '.join(rdma['capabilities'])} (NIXL pins the KV cache "
                   "it transfers), which Pod Security's baseline level refuses: their namespace must allow the "
                   "privileged level (pod-security.kubernetes.io/enforce), as every upstream SGLang disaggregated "
                   "recipe needs.")
    if placement:
        out.append(f"rdma_provider=mnnvl: prefill and decode must share one NVLink clique, so the workers carry a "
                   f"required pod affinity on the node label {placement['topology_key']} (set by GPU feature "
                   "discovery on NVL72 trays; without it they stay Pending). Split across cliques they would "
                   "report Ready and answer HTTP 200 with empty content (upstream deepseek-v4.1-flash "
                   "deploy-generic.yaml:22-27).")
    if r.runtime.get("generic_images") and not getattr(r, "image", None):
        out.append(f"the default image {runtime_image(r)['image']} is Dynamo's generic runtime release: every "
                   "upstream large-MoE recipe ships a model-specific build, and the Muse page's image is not "
                   "public, so it may not load this checkpoint; name the model's image with -e engine_image=...")
    return out


def _expected(r: Resolved) -> dict | None:
    expected = r.target.get("expected")
    if not expected:
        return None
    # Rates (tokens/s, TTFT) hold at the published concurrency; a shorter replay of the same trace
    # still measures them, so only a change of concurrency makes them incomparable.
    return {**expected, "comparable": r.concurrency == expected["concurrency"]}


def _capacity(r: Resolved) -> dict:
    return capacity_plan(
        sku=r.sku,
        weights_gb=float(r.checkpoint["weights_gb"]),
        draft_gb=float(r.draft["disk_gb"]) if r.draft else 0.0,
        gpus_per_worker=r.gpus_per_worker,
        tp=r.tp,
        kv_cache_dtype=r.kv_cache_dtype,
        context_length=r.context_length,
        kv_assumption=r.model["kv_cache_assumption"],
        kv_replicas=r.kv_replicas,
    )


# What each downloaded repository's pin is called, and the inputs that name the repository and its pin.
_PINS = (("checkpoint", "checkpoint_revision", "checkpoint_repo"), ("draft", "draft_revision", "draft_repo"))


def _unpinned_weights(r: Resolved, refused: set[str]) -> PlanError | None:
    """The refusal of a download of weights at a branch: every repository the plan downloads (the checkpoint, and
    the draft model where the target decodes speculatively) must be pinned to a commit (the user's
    checkpoint_revision / draft_revision, else the catalog's revision), unless allow_unpinned_weights=true says
    the branch is accepted (then the plan warns and the revision history records the commit the download got).
    A repository whose name, pin or choice was refused already is not judged (a commit is a named repository's:
    naming it comes first)."""
    if r.allow_unpinned_weights or "allow_unpinned_weights" in refused:
        return None
    unpinned = []
    for field_name, pin, repo_input in _PINS:
        model = getattr(r, field_name)
        if not model or model.get("revision") or (FIELD_INPUTS[field_name] | {pin, repo_input}) & refused:
            continue
        what = f"checkpoint {r.checkpoint_key}" if field_name == "checkpoint" else "DSpark draft model"
        unpinned.append((pin, f"the {what} ({model['hf_id']})"))
    if not unpinned:
        return None
    return PlanError(
        f"{' and '.join(u[1] for u in unpinned)} would{' each' if len(unpinned) > 1 else ''} be downloaded from "
        "the head of its main branch, which can move under the deployment (and between two download pods): pin "
        f"{'each' if len(unpinned) > 1 else 'it'} to the commit you reviewed (a full 40-character "
        "commit id, as `hf api` or the Hub's page shows it), or accept the branch explicitly (the download then "
        "records the commit it got).", "unpinned-weights",
        [*(f"{u[0]}=<40-character commit id>" for u in unpinned), "allow_unpinned_weights=true"],
        inputs=[*(u[0] for u in unpinned), "allow_unpinned_weights"])


def build_plan(request: dict, catalog: Catalog | None = None, *, downloads_weights: bool = False) -> dict:
    """The whole plan as plain data (JSON-serialisable). Raises PlanRefused with every broken rule:
    the inputs first, then the deployment-matrix rules, then whether it fits.

    ``downloads_weights``: the run this plan is for downloads the weights from the Hub (or a Hub mirror), as a
    deploy or a rollout does: then an unpinned repository is refused (``unpinned-weights``) unless the request
    says ``allow_unpinned_weights``. The plan role says so for every playbook that runs the model cache
    (deployment_plan's ``downloads_weights``); a restore, a teardown or a benchmark downloads nothing."""
    checks = Checks()
    r = _resolve(request, catalog or load_catalog(), checks)
    warnings: list[str] = []
    capacity = None
    if r is not None:
        for rule in [*matrix_rules.RULES, *planner.RULES]:
            warnings.extend(checks.judge(rule, r, default=[]))
        # an existing claim adopted as the model cache (cache_claim) is read as it is: nothing is downloaded
        pin_refusal = (_unpinned_weights(r, checks.refused_inputs)
                       if downloads_weights and not getattr(r, "cache_claim", None) else None)
        if pin_refusal is not None:
            checks.record(pin_refusal)
        capacity = checks.judge(_capacity, r)
    if checks.errors:
        raise PlanRefused(checks.errors)
    warnings += engine_args.engine_warnings(r)
    placement = _placement(r)
    warnings += _deployment_warnings(r, placement)
    name = r.target["name"]
    workers = _workers(r)
    gpus_total = sum(w["gpus"] * w["replicas"] for w in workers)
    if r.max_num_seqs and r.max_num_seqs > capacity["max_seqs_at_context_per_worker"]:
        warnings.append(f"max_num_seqs {r.max_num_seqs} is above the estimated "
                        f"{capacity['max_seqs_at_context_per_worker']} sequences of {r.context_length} tokens per "
                        "worker (an estimate; see capacity.assumptions).")
    frontend = None
    if r.runtime_key == "dynamo":
        command, args, env = engine_args.dynamo_frontend(r)
        frontend = {"component": "Frontend", "image": _image(r), "command": command, "args": args, "env": env,
                    "router": "kv" if r.mode == "kv-router" else "round-robin",
                    "migration_limit": r.migration_limit,  # type: ignore[attr-defined]
                    "resources": r.resources["frontend"]}  # type: ignore[attr-defined]
    downloads = [r.checkpoint["hf_id"]] + ([r.draft["hf_id"]] if r.draft else [])
    revisions = {m["hf_id"]: m["revision"] for m in (r.checkpoint, r.draft) if m and m.get("revision")}
    unpinned = [repo for repo in downloads if repo not in revisions]
    if unpinned:
        accepted = "allow_unpinned_weights=true: " if r.allow_unpinned_weights else ""
        warnings.append(f"{accepted}{', '.join(unpinned)} will be downloaded from its main branch, which can "
                        "change: pin checkpoint_revision (and draft_revision) to a commit id; the revision history "
                        "records the commit the download found.")
    disk_gb = float(r.checkpoint["disk_gb"]) + (float(r.draft["disk_gb"]) if r.draft else 0.0)
    trace = r.catalog.benchmark_trace
    status = r.target["status"]
    if status != "validated":
        warnings.append(f"{r.target_key} is {status} ({r.target['source']}).")
    plan = {
        "collection": COLLECTION,
        "model": {"key": r.model_key, "display_name": r.model["display_name"],
                  "served_model_name": r.served_model_name, "modalities": r.modalities},
        "target": {"key": r.target_key, "framework": r.framework, "mode": r.mode, "sku": r.sku_key,
                   "runtime": r.runtime_key, "status": status, "source": r.target["source"]},
        "sku": {"key": r.sku_key, **{k: r.sku[k] for k in (
            "display_name", "vendor", "gpu_resource", "node_label_key", "node_label_value", "cpu_arch",
            "gpus_per_node", "hbm_gb")}},
        "name": name,
        "kind": "DynamoGraphDeployment" if r.runtime_key == "dynamo" else "Deployment",
        "frontend_service": f"{name}-frontend",
        "frontend_port": int(r.runtime.get("frontend_port", r.runtime.get("port", 8000))),
        "checkpoint": {"key": r.checkpoint_key, **r.checkpoint},
        "draft_model": r.draft,
        # the checkpoint's own Python runs in the workers (and AIPerf's tokenizer): only at a pinned revision
        "trust_remote_code": r.trust_remote_code,
        # who may reach the endpoint, the workers and the planner (render.network_policy)
        "network_policy": r.network_policy,
        "parallelism": r.parallelism,
        "speculative": r.speculative,
        "kv_cache_dtype": r.kv_cache_dtype,
        "context_length": r.context_length,
        "max_num_seqs": r.max_num_seqs,
        "attention_backend": r.attention_backend,
        "vllm_frontend": r.vllm_frontend,
        # The Dynamo runtime release of the catalog's image: the operator needs it stated (runtimeVersionOverride)
        # for an image whose tag is not a semantic version (a digest, ``latest``), and refuses the DGD otherwise.
        "runtime_version": (runtime_image(r).get("engines") or {}).get("ai-dynamo") if r.runtime_key == "dynamo"
        else None,
        # How the Dynamo operator replaces workers on an update (standalone vLLM is always Recreate).
        "update_strategy": r.update_strategy if r.runtime_key == "dynamo" else "Recreate",
        # the planner (Dynamo) or a KEDA ScaledObject (standalone vLLM) between these bounds; None: fixed replicas
        "autoscaling": planner.autoscaling_plan(r, workers),
        "frontend": frontend,
        "workers": workers,
        "gpus_total": gpus_total,
        "compute_domain": _compute_domain(r, name),
        "rdma": r.rdma,
        # what every worker pod requests beside its GPUs (requests only, no limit)
        "worker_resources": r.resources["worker"],  # type: ignore[attr-defined]
        # the engine workers' user (None: the image's own); 0 is root, as upstream
        "worker_run_as_user": getattr(r, "worker_run_as_user", None),
        "placement": placement,
        # the model cache claim: the recipe's, or an existing one adopted as it is (cache_claim)
        "model_cache": {"pvc": getattr(r, "cache_claim", None) or "shared-model-cache",
                        # an existing claim the user adopted as it is: never resized, relabelled or purged
                        "adopted": bool(getattr(r, "cache_claim", None)),
                        "mount_path": engine_args.MODEL_MOUNT,
                        "size_gi": int(-(-disk_gb * 1.25 // 100) * 100), "downloads": downloads,
                        "revisions": revisions, "secret": "hf-token-secret"},
        # each target's own Job: a benchmark of one target never replaces or deletes another's
        "benchmark": {"job": f"{name}-aiperf", "concurrency": r.concurrency, "request_count": r.request_count,
                      "warmup_requests": trace.get("warmup_requests", 5),
                      "endpoint": f"{name}-frontend:{int(r.runtime.get('frontend_port', r.runtime.get('port', 8000)))}",
                      "workload": r.target["benchmark"]["workload"], "trace": trace},
        # a measured weight load (seconds, from an earlier deploy's timing report) budgets the startup probe
        "startup": {"load_seconds": getattr(r, "load_seconds", None)},
        "expected": _expected(r),
        "capacity": capacity,
        "warnings": warnings,
        "labels": {
            "app.kubernetes.io/managed-by": COLLECTION,
            "app.kubernetes.io/part-of": "muse-spark",
            naming.MODEL_LABEL: r.model_key,
            naming.TARGET_LABEL: r.target_key,
        },
    }
    plan["pod_security"] = pod_security.levels(plan)
    return plan

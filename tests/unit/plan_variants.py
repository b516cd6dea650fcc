"""Every variant the plan accepts: each catalog target crossed with every input that shapes what it
renders (checkpoint, parallelism, speculative decoding, KV dtype, RDMA provider, frontend, flavour,
attention backend, 1M context, frontend decoding), kept when the plan accepts it.

Variants that render the same command lines are one variant: the first request that rendered it
names it. Shared by the engine-parser check and the real API server tests.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import CHOICES, build_plan
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.errors import PlanError

from plan_requests import BF16_REPO, DRAFT_REPO, MXFP4_REPO, TARGET_REQUESTS

LONG_CONTEXT = 1048576
REPOS = {"mxfp4": MXFP4_REPO, "mxfp4-from-bf16": BF16_REPO, "bf16": BF16_REPO}


def _dimensions(target_key: str, target: dict, sku: dict) -> dict[str, list]:
    nvidia = sku["vendor"] == "nvidia"
    standalone = target["runtime"] == "vllm-standalone"
    dims: dict[str, list] = {
        "checkpoint": [None, *CHOICES["checkpoint"]],
        "parallelism": [None, *CHOICES["parallelism"]],
        "speculative": [None, *CHOICES["speculative"]],
        "kv_cache_dtype": [None, *CHOICES["kv_cache_dtype"]],
        "context_length": [None, LONG_CONTEXT],
    }
    if target["mode"] == "disagg":
        dims["rdma_provider"] = [None, *CHOICES["rdma_provider"]]
        if target["framework"] == "sglang":
            dims["frontend_decoding"] = [None, True]
    if standalone and nvidia:
        dims["vllm_frontend"] = [None, *CHOICES["vllm_frontend"]]
    if not nvidia:
        dims["attention_backend"] = [None, *CHOICES["attention_backend"]]
    if target.get("flavours"):
        dims["flavour"] = [None, *sorted(target["flavours"])]
    return dims


def _request(base: dict, choice: dict) -> dict:
    req = {**base, **{k: v for k, v in choice.items() if v is not None}}
    if req.get("checkpoint") in REPOS:
        req["checkpoint_repo"] = REPOS[req["checkpoint"]]
    if req.get("speculative") in ("dspark", "dspark-adaptive") or "draft_repo" in base:
        req["draft_repo"] = DRAFT_REPO
    return req


def rendered(plan: dict) -> dict:
    """What reaches the engines: images, commands, arguments and environment of every process."""
    procs = [{k: w[k] for k in ("component", "image", "command", "args", "env")} for w in plan["workers"]]
    if plan["frontend"]:
        procs.append({k: plan["frontend"][k] for k in ("component", "image", "command", "args", "env")})
    return {"target": plan["target"]["key"], "processes": procs}


def _variant_id(target_key: str, choice: dict) -> str:
    parts = [f"{k}={v}" for k, v in sorted(choice.items()) if v is not None]
    return target_key + ("[" + ",".join(parts) + "]" if parts else "")


@functools.cache
def accepted_variants() -> tuple[tuple[str, dict, dict], ...]:
    """(variant id, request, plan) for every distinct rendering the plan accepts."""
    from ansible_collections.inferops.dynamo.plugins.module_utils.plan.catalog import load_catalog

    catalog = load_catalog()
    seen: set[str] = set()
    out = []
    for target_key, base in TARGET_REQUESTS.items():
        target = catalog.targets[target_key]
        dims = _dimensions(target_key, target, catalog.skus[target["sku"]])
        names = list(dims)
        for values in itertools.product(*(dims[n] for n in names)):
            choice = dict(zip(names, values, strict=True))
            req = _request(base, choice)
            try:
                plan = build_plan(req)
            except PlanError:
                continue
            digest = hashlib.sha256(json.dumps(rendered(plan), sort_keys=True).encode()).hexdigest()
            if digest in seen:
                continue
            seen.add(digest)
            out.append((_variant_id(target_key, choice), req, plan))
    return tuple(out)

# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Engine command lines and environment for every worker kind.

Flag spellings come from shared/reference/engines.md (§1 vLLM, §1.11 dynamo.vllm, §2 SGLang,
§2.1 dynamo.sglang) and dynamo.md (§2 recipes, §7 KV router), and every flag, value, JSON key and
engine environment variable is checked against the parsers of the engines the catalog pins per image
(tests/engines/, tests/unit/module_utils/plan/test_engine_args_parsers.py). Functions take the resolved request (see
plan.Resolved) and return plain lists, so golden tests can pin them.
"""

from __future__ import annotations

import json

from ansible_collections.inferops.dynamo.plugins.module_utils.render import planner

MODEL_MOUNT = "/model"          # every worker mounts shared-model-cache here
SGLANG_PAGE_SIZE = 64           # the router's --kv-cache-block-size must equal it
SGLANG_KV_EVENTS_PORT = 5557
VLLM_KV_EVENTS_PORT = 20080
NIXL_BOOTSTRAP_PORT = 30001
MEM_FRACTION = "0.90"
# A model this size takes tens of minutes to load; engines must not give up first.
ENGINE_READY_TIMEOUT_S = "3600"
# SGLang 0.5.18 (the Dynamo 1.5.1 runtime's) waits a fixed 480 s for every rank to finish loading
# (UNBALANCED_MODEL_LOADING_TIMEOUT_S in sglang/srt/model_executor/model_runner_components/
# load_model_utils.py); no option or environment variable changes it at that version.
SGLANG_UNBALANCED_LOADING_TIMEOUT_S = 480


def _json(value: dict) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=False)


def env_list(pairs: list[tuple[str, str]]) -> list[dict]:
    seen: dict[str, int] = {}
    result: list[dict] = []
    for name, value in pairs:
        if name in seen:
            result[seen[name]] = {"name": name, "value": str(value)}
        else:
            seen[name] = len(result)
            result.append({"name": name, "value": str(value)})
    return result


def _cache_env() -> list[tuple[str, str]]:
    # Workers read the weights the download Job placed on the PVC; they never reach the hub.
    return [
        ("HF_HOME", MODEL_MOUNT),
        ("HF_HUB_OFFLINE", "1"),
        ("TRANSFORMERS_OFFLINE", "1"),
        ("PYTHONUNBUFFERED", "1"),
    ]


# Persistent compile/JIT caches on the model cache PVC: the second start of a worker (a restart, a new
# replica, the next deploy) reuses the kernels the first one compiled instead of compiling them again.
# (their own mount of the claim's compile-cache folder: the weights beside it are mounted read-only)
COMPILE_CACHE = "/compile-cache"
# Weight loading: read the checkpoint files ahead with several threads (network file systems serve
# parallel reads far faster than one sequential mmap). SGLang 0.5.18: --weight-loader-prefetch-*
# (also in Dynamo's own recipes); vLLM 0.28.0: --safetensors-load-strategy prefetch.
SGLANG_PREFETCH_THREADS = 8
VLLM_PREFETCH_THREADS = 16


def _compile_cache_env(engine: str) -> list[tuple[str, str]]:
    root = f"{COMPILE_CACHE}/{engine}"
    pairs = [("TORCHINDUCTOR_CACHE_DIR", f"{root}/inductor"), ("TRITON_CACHE_DIR", f"{root}/triton")]
    if engine == "sglang":
        pairs += [("SGLANG_CACHE_DIR", root), ("SGLANG_DG_CACHE_DIR", f"{root}/deep_gemm")]
    else:
        # torch.compile artifacts live under VLLM_CACHE_ROOT/torch_compile_cache
        pairs.append(("VLLM_CACHE_ROOT", root))
    return pairs


def _sglang_load_args() -> list[str]:
    return ["--weight-loader-prefetch-checkpoints",
            "--weight-loader-prefetch-num-threads", str(SGLANG_PREFETCH_THREADS)]


def _vllm_load_args() -> list[str]:
    return ["--safetensors-load-strategy", "prefetch",
            "--safetensors-prefetch-num-threads", str(VLLM_PREFETCH_THREADS)]


def claims_compute_domain(r) -> bool:
    """Whether the workers claim a DRA ComputeDomain (an IMEX channel): the modes the SKU's page asks one for,
    unless the target says it needs none (catalog targets.yml, ``compute_domain``)."""
    return r.mode in r.sku.get("compute_domain_modes", []) and r.target.get("compute_domain", True)


def _compute_domain_env(r) -> list[tuple[str, str]]:
    """NCCL over the NVLink fabric, only where an IMEX channel is claimed (catalog: runtimes.dynamo)."""
    if not claims_compute_domain(r):
        return []
    return list(r.runtime.get("compute_domain_env", {}).items())


def _rdma_env(r, role: str) -> list[tuple[str, str]]:
    if r.mode != "disagg":
        return []
    return list(r.rdma["env"].items())


def _source_args(r) -> list[str]:
    """The checkpoint's pinned revision (the cache holds that snapshot) and, only where the checkpoint needs it and
    its revision is pinned (the plan refuses otherwise), permission to run its own Python."""
    args = ["--revision", r.checkpoint["revision"]] if r.checkpoint.get("revision") else []
    return args + (["--trust-remote-code"] if r.trust_remote_code else [])


# --------------------------------------------------------------------------- Dynamo + SGLang
def sglang_worker(r, role: str) -> tuple[list[str], list[str], list[dict]]:
    args = [
        "--model-path", r.checkpoint["hf_id"],
        "--served-model-name", r.served_model_name,
        *_source_args(r),
        "--tensor-parallel-size", str(r.tp),
    ]
    if r.ep > 1:
        args += ["--expert-parallel-size", str(r.ep)]
    if r.checkpoint["format"] == "nvfp4":
        args += ["--quantization", "modelopt_fp4"]
    elif r.checkpoint["format"] == "mxfp4":
        args += ["--quantization", "mxfp4"]
    if r.kv_cache_dtype == "fp8":
        args += ["--kv-cache-dtype", "fp8_e4m3"]
    args += [
        "--context-length", str(r.context_length),
        "--mem-fraction-static", MEM_FRACTION,
        "--chunked-prefill-size", "8192",
        "--page-size", str(SGLANG_PAGE_SIZE),
    ]
    if r.max_num_seqs:
        args += ["--max-running-requests", str(r.max_num_seqs)]
    args += _sglang_load_args()
    settings = r.runtime.get("sglang", {})
    if settings.get("enable_metrics"):
        # SGLang exports its sglang:* series (KV usage, prefix-cache hit rate) only with it
        args.append("--enable-metrics")
    if settings.get("watchdog_timeout_s"):
        args += ["--watchdog-timeout", str(settings["watchdog_timeout_s"])]
    if r.mode == "kv-router":
        # The KV router only sees prefixes the workers publish.
        args += ["--kv-events-config", _json({
            "publisher": "zmq", "topic": "kv-events", "endpoint": f"tcp://*:{SGLANG_KV_EVENTS_PORT}"})]
    if r.mode == "disagg":
        args += [
            "--disaggregation-mode", role,
            "--disaggregation-transfer-backend", "nixl",
            "--disaggregation-bootstrap-port", str(NIXL_BOOTSTRAP_PORT),
        ]
        if role == "prefill":
            args += ["--host", "0.0.0.0"]
    env: list[tuple[str, str]] = []
    if r.mode == "disagg":
        # Must be the first env entry: cluster Kustomizations anchor networking patches on it.
        env.append(("SGLANG_DISAGGREGATION_NIXL_BACKEND", r.rdma["nixl_backend"]))
        if r.frontend_decoding:
            env.append(("DYN_SGL_FRONTEND_DECODING", "true"))
    env += _cache_env() + _compile_cache_env("sglang") + _compute_domain_env(r)
    if r.mode == "disagg":
        env += list(settings.get("disagg_env", {}).items())
    env += _rdma_env(r, role)
    return ["python3", "-m", "dynamo.sglang"], args, env_list(env)


# --------------------------------------------------------------------------- Dynamo + vLLM
def dynamo_vllm_worker(r, role: str) -> tuple[list[str], list[str], list[dict]]:
    args = [
        "--model", r.checkpoint["hf_id"],
        "--served-model-name", r.served_model_name,
        *_source_args(r),
        "--tensor-parallel-size", str(r.tp),
    ]
    if r.ep > 1:
        args.append("--enable-expert-parallel")
    if r.kv_cache_dtype == "fp8":
        args += ["--kv-cache-dtype", "fp8"]
    args += ["--max-model-len", str(r.context_length), "--gpu-memory-utilization", MEM_FRACTION]
    if r.max_num_seqs:
        args += ["--max-num-seqs", str(r.max_num_seqs)]
    args += _vllm_load_args()
    if r.mode == "kv-router":
        args += ["--enable-prefix-caching", "--kv-events-config", _json({
            "enable_kv_cache_events": True, "publisher": "zmq", "topic": "kv-events",
            "endpoint": f"tcp://*:{VLLM_KV_EVENTS_PORT}"})]
    if r.mode == "disagg":
        args += ["--disaggregation-mode", role,
                 "--kv-transfer-config", _json({"kv_connector": "NixlConnector", "kv_role": "kv_both"})]
    settings = r.runtime.get("vllm", {})
    env = [
        *_cache_env(),
        *settings.get("env", {}).items(),
        # Dynamo's own frontend serves HTTP; vLLM's Rust frontend is not used under Dynamo.
        ("VLLM_USE_RUST_FRONTEND", "0"),
        ("VLLM_ENGINE_READY_TIMEOUT_S", ENGINE_READY_TIMEOUT_S),
        *_compile_cache_env("vllm"),
    ]
    if settings.get("health_check_request_timeout_s"):
        # the runtime's health canary waits this long for its one-token request (Dynamo's default: 3 s)
        env.append(("DYN_HEALTH_CHECK_REQUEST_TIMEOUT", str(settings["health_check_request_timeout_s"])))
    env += _compute_domain_env(r) + _rdma_env(r, role)
    return ["python3", "-m", "dynamo.vllm"], args, env_list(env)


def router_min_initial_workers(r) -> int:
    """Workers the KV router waits for before it routes: every KV-routed replica, or the fewest the planner may
    keep (a frontend restarted after a scale-down must not wait for workers that will never come)."""
    if getattr(r, "autoscaling", "off") == "on":
        return min(r.kv_replicas, planner.replica_bounds(r)[0])
    return r.kv_replicas


def dynamo_frontend(r) -> tuple[list[str], list[str], list[dict]]:
    args = ["--http-port", str(r.runtime["frontend_port"])]
    if r.mode == "kv-router":
        args += ["--router-mode", "kv", "--router-kv-events",
                 "--kv-cache-block-size", str(SGLANG_PAGE_SIZE if r.framework == "sglang" else 16),
                 "--router-min-initial-workers", str(router_min_initial_workers(r))]
    if r.migration_limit:
        args += ["--migration-limit", str(r.migration_limit)]
    return ["python3", "-m", "dynamo.frontend"], args, env_list([("PYTHONUNBUFFERED", "1")])


# --------------------------------------------------------------------------- standalone vLLM
def speculative_config(r) -> str | None:
    if r.speculative == "none":
        return None
    config = {
        "method": "dspark",
        "model": r.draft["hf_id"],
        "num_speculative_tokens": 7,
        "draft_sample_method": "probabilistic",
    }
    if r.speculative == "dspark-adaptive":
        # vLLM 0.28.0's name for DSpark's adaptive verification (speculative.py; DSpark only).
        config["enable_adaptive_verification"] = True
    return _json(config)


def standalone_vllm(r) -> tuple[list[str], list[str], list[dict]]:
    model_repo = r.checkpoint["hf_id"]
    args = [
        "--served-model-name", r.served_model_name,
        "--host", "0.0.0.0",
        "--port", str(r.runtime["port"]),
        *_source_args(r),
        "--tensor-parallel-size", str(r.tp),
    ]
    if r.parallelism == "tp-ep":
        args.append("--enable-expert-parallel")
    if r.checkpoint.get("load_time_quantization"):
        args += ["--quantization", r.checkpoint["load_time_quantization"]]
    if r.kv_cache_dtype == "fp8":
        args += ["--kv-cache-dtype", "fp8"]
    args += ["--max-model-len", str(r.context_length), "--gpu-memory-utilization", MEM_FRACTION]
    if r.max_num_seqs:
        args += ["--max-num-seqs", str(r.max_num_seqs)]
    args += _vllm_load_args()
    env = [*_cache_env(), ("VLLM_ENGINE_READY_TIMEOUT_S", ENGINE_READY_TIMEOUT_S), *_compile_cache_env("vllm")]
    if r.sku["vendor"] == "amd":
        args += [
            "--no-enable-prefix-caching",
            "--enable-chunked-prefill",
            "--language-model-only",
            "--attention-backend", r.attention_backend,
        ]
        env += [("VLLM_USE_V2_MODEL_RUNNER", "1"), ("VLLM_ROCM_USE_AITER", "1")]
    else:
        env.append(("VLLM_USE_RUST_FRONTEND", "1" if r.vllm_frontend == "rust" else "0"))
    spec = speculative_config(r)
    if spec:
        args += ["--speculative-config", spec]
    return ["vllm", "serve", model_repo], args, env_list(env)


def worker_ports(r, role: str) -> dict[str, int]:
    """The ports a Dynamo worker listens on, by name: the operator's own (system, nixl: an explicit list replaces
    them) and the engine's (KV events for the router, the prefill's NIXL bootstrap server)."""
    if r.runtime_key != "dynamo":
        return {}
    ports = dict(r.runtime.get("worker_ports", {}))
    if r.mode == "kv-router":
        ports["kv-events"] = SGLANG_KV_EVENTS_PORT if r.framework == "sglang" else VLLM_KV_EVENTS_PORT
    if r.mode == "disagg" and r.framework == "sglang" and role == "prefill":
        ports["bootstrap"] = NIXL_BOOTSTRAP_PORT
    return ports


def worker_probes(r) -> dict:
    """What the worker's probes change from the operator's: the startup probe's timeout and, on vLLM under Dynamo,
    a liveness probe that tolerates a worker busy with long requests (catalog runtimes.dynamo)."""
    probes = {}
    if r.runtime.get("startup_probe_timeout_s"):
        probes["startup_timeout_s"] = int(r.runtime["startup_probe_timeout_s"])
    liveness = r.runtime.get(r.framework, {}).get("liveness") if r.runtime_key == "dynamo" else None
    if liveness:
        probes["liveness"] = dict(liveness)
    return probes


def engine_warnings(r) -> list[str]:
    """What the plan would want of the engine but no option of the pinned version provides."""
    out = []
    if r.runtime_key == "dynamo" and r.framework == "sglang":
        out.append(f"SGLang 0.5.18 (Dynamo 1.5.1 runtime) waits a fixed {SGLANG_UNBALANCED_LOADING_TIMEOUT_S} s for "
                   "all ranks to finish loading the weights and has no option to lengthen it: on slow shared "
                   "storage an uneven load of the ~533 GB checkpoint can time out; keep the model cache fast "
                   "(one RWX class that scales with readers) and watch the worker logs at first start.")
    return out

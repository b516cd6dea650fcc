# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""A plan as text a person reads in a terminal (plan.yml prints it)."""

from __future__ import annotations

import shlex


def _env_line(env: list[dict]) -> str:
    return " ".join(f"{e['name']}={e['value']}" for e in env)


def _quantities(resources: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in resources.items())


def plan_report(plan: dict) -> list[str]:
    t = plan["target"]
    cap = plan["capacity"]
    lines = [
        f"Target     {t['key']}  ({t['status']}; source {t['source']})",
        f"Model      {plan['model']['display_name']}  served as {plan['model']['served_model_name']}",
        f"Runtime    {t['runtime']}  ->  {plan['kind']} {plan['name']}, Service {plan['frontend_service']}:"
        f"{plan['frontend_port']}",
        f"Checkpoint {plan['checkpoint']['key']}  {plan['checkpoint']['hf_id']}  (~{plan['checkpoint']['weights_gb']} GB)",
        f"GPUs       {plan['gpus_total']} x {plan['sku']['display_name']}  parallelism {plan['parallelism']}  "
        f"KV cache {plan['kv_cache_dtype']}  context {plan['context_length']:,}",
        f"Modalities {', '.join(plan['model']['modalities'])}",
    ]
    if plan.get("draft_model"):
        lines.append(f"Draft      DSpark {plan['draft_model']['hf_id']} ({plan['speculative']})")
    if plan.get("compute_domain"):
        lines.append(f"DRA        ComputeDomain {plan['compute_domain']['name']} "
                     f"(claim template {plan['compute_domain']['claim_template']})")
    lines.append(f"RDMA       {plan['rdma']['provider']}")
    lines.append("Pods       " + ", ".join(f"{kind} {level}" for kind, level in plan["pod_security"].items())
                 + " (Pod Security Standards)")
    policy = plan["network_policy"]
    if policy["enabled"]:
        callers = [c.get("namespace", "") + (f" {c['pod_labels']}" if c.get("pod_labels") else "")
                   for c in policy["clients"]]
        lines.append(f"Network    NetworkPolicy: the endpoint from its namespace{''.join(', ' + c for c in callers)}, "
                     f"{', '.join(policy['api_server_cidrs']) + ', ' if policy['api_server_cidrs'] else ''}and "
                     f"monitoring namespace {policy['monitoring_namespace']}; workers from their own graph")
    else:
        lines.append("Network    no NetworkPolicy (network_policy=false): the endpoint and the workers' ports are open "
                     "to every pod of the cluster")
    if plan.get("placement"):
        lines.append(f"Placement  workers in one NVLink clique (required pod affinity on {plan['placement']['topology_key']})")
    if plan.get("frontend"):
        f = plan["frontend"]
        migration = (f"migration limit {f['migration_limit']}" if f.get("migration_limit")
                     else "no request migration")
        lines.append(f"Frontend   {shlex.join(f['command'] + f['args'])}  (router {f['router']}; {migration}"
                     + (f"; requests {_quantities(f['resources'])}" if f.get("resources") else "") + ")")
    if plan.get("worker_resources"):
        lines.append(f"Resources  each worker requests {_quantities(plan['worker_resources'])} beside its GPUs "
                     "(no CPU or memory limit)")
    for w in plan["workers"]:
        lines.append(f"Worker     {w['component']} ({w['role']}) x{w['replicas']}: {w['gpus']} GPUs, TP{w['tp']}"
                     + (f"/EP{w['ep']}" if w["ep"] > 1 else ""))
        lines.append(f"  command  {shlex.join(w['command'] + w['args'])}")
        lines.append(f"  env      {_env_line(w['env'])}")
    scaling = plan.get("autoscaling")
    if scaling and scaling["engine"] == "planner":
        lines.append(f"Autoscale  Dynamo planner{' (advisory: reports, never scales)' if scaling['mode'] == 'advisory' else ''}"
                     f": {scaling['min_replicas']}-{scaling['max_replicas']} replicas per worker component, at most "
                     f"{scaling['gpu_budget']} GPUs, every {scaling['interval_s']} s, aiming at TTFT "
                     f"{scaling['ttft_ms']} ms and ITL {scaling['itl_ms']} ms; reads {scaling['prometheus_url']}")
    elif scaling:
        lines.append(f"Autoscale  KEDA on the waiting queue: {scaling['min_replicas']}-{scaling['max_replicas']} "
                     f"replicas; reads {scaling['prometheus_url']}")
    lines += [
        f"Capacity   weights {cap['weights_per_gpu_gb']} GB/GPU of {cap['usable_per_gpu_gb']} GB usable; "
        f"KV budget {cap['kv_budget_per_gpu_gb']} GB/GPU",
        f"           ~{cap['max_seqs_at_context_total']} sequences of {cap['context_length']:,} tokens, "
        f"~{cap['max_seqs_at_typical_request_total']} of ~{cap['typical_request_tokens']:,} tokens (estimate)",
    ]
    lines += [f"  assumes  {a}" for a in cap["assumptions"]]
    b = plan["benchmark"]
    lines.append(f"Benchmark concurrency {b['concurrency']}, {b['request_count']} requests, "
                 f"{b['warmup_requests']} warm-up, endpoint {b['endpoint']}")
    exp = plan.get("expected")
    if exp:
        lines.append(f"Expected   {exp['output_tokens_per_s']} tok/s, {exp['output_tokens_per_s_per_gpu']} tok/s/GPU, "
                     f"{exp['output_tokens_per_s_per_user_p50']} tok/s/user p50, TTFT p50 {exp['ttft_p50_ms']} ms, "
                     f"{exp['requests_passing']}/{exp['requests_total']} passing"
                     + ("" if exp["comparable"] else "  (not comparable: operating point changed)"))
    else:
        lines.append("Expected   none published for this target: benchmarks are reported, not gated")
    lines += [f"WARNING    {w}" for w in plan["warnings"]]
    return lines

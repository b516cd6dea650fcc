# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

# The work happens in the action plugin of the same name (on the controller); this file is its
# documentation.
from __future__ import annotations

DOCUMENTATION = r"""
---
module: deployment_plan
short_description: Resolve a Muse Spark deployment request into a complete plan
version_added: "0.1.0"
description:
  - Resolves the user's choices (SKU, mode, framework, model and overrides) against the catalog
    shipped in the collection, applies the rules of the deployment matrix of the two source
    recipes, and returns the plan - workers with complete engine argument lists and environment,
    the Dynamo frontend, GPUs, a capacity estimate, warnings and the expected performance - plus
    every Kubernetes object a deploy would apply.
  - Runs on the controller and never contacts a cluster.
  - A request that cannot be served fails before anything else with every rule it breaks, each with
    its identifier, the reason and the valid alternatives, the most fundamental first (the inputs,
    then the deployment-matrix rules, then whether the weights fit). A rule that cannot be judged
    because an input it depends on was refused is left out.
options:
  request:
    description:
      - The user's choices. C(sku) and C(mode) are required; every other key defaults from the target.
      - "Keys: C(sku), C(mode) (agg, disagg, kv-router), C(framework) (sglang, vllm), C(model),
        C(checkpoint) (nvfp4, mxfp4, mxfp4-from-bf16, bf16), C(checkpoint_repo), C(draft_repo),
        C(parallelism) (auto, tp, tp-ep), C(speculative) (dspark, dspark-adaptive, none),
        C(concurrency), C(request_count), C(context_length), C(max_num_seqs), C(tensor_parallel_size),
        C(kv_cache_dtype) (auto, fp8), C(rdma_provider) (none, infiniband, roce, efa, gke-roce, mnnvl),
        C(rdma_net_devices), C(vllm_frontend) (rust, python), C(attention_backend), C(modalities),
        C(frontend_decoding), C(flavour), C(image), C(update_strategy) (RollingUpdate, Recreate), C(cache_claim)
        (an existing claim adopted as the model cache), C(load_seconds) (a measured weight load: the startup
        probe allows twice that, at least 10 min), C(checkpoint_revision) and C(draft_revision) (commit ids the
        download and the engines pin; the catalog's revision when unset), C(allow_unpinned_weights) (accept a
        download at the main branch, see O(downloads_weights)), C(trust_remote_code) (only with a pinned
        revision)."
      - "Every free-text key is checked against its grammar: repositories as the Hub's C(org/name), revisions as
        40-character commit ids, C(image) as an image reference, C(cache_claim) as a Kubernetes name,
        C(rdma_net_devices) as UCX device names, C(autoscaling_prometheus_url) as an http(s) URL."
      - Empty strings and null mean the target's default, so AWX surveys can leave fields blank.
    type: dict
    required: true
  namespace:
    description: Namespace written into the returned manifests.
    type: str
    default: dynamo
  storage_class:
    description: ReadWriteMany StorageClass written into the model cache PVC of the returned manifests.
    type: str
  settings:
    description:
      - The deploy's other free-text inputs, checked with the request so that every broken one is refused at once,
        before anything is rendered; unset ones are skipped.
      - "Keys: C(model_cache_source) (its type and fields: C(bucket) an s3:// URI, C(endpoint) a URL, C(secret),
        C(ca_configmap) and C(claim) Kubernetes names, C(region)), C(model_cache_download_image),
        C(model_cache_s3_image), C(model_cache_trace_image) and C(benchmark_image) (image references),
        C(model_cache_trace_url) and C(prometheus_url) (http(s) URLs without credentials), C(monitoring_namespace),
        C(benchmark_aiperf_extra_args) (a list of arguments, each passed as one argument, never through a shell),
        C(network_policy_clients) (a list of C(namespace) and C(pod_labels) peers)."
    type: dict
    default: {}
  downloads_weights:
    description:
      - Whether the playbook this plan is for downloads the weights (deploy, rollout, and plan.yml, which previews a
        deploy). Then a checkpoint, and a draft model where the target decodes speculatively, with no pinned
        revision (neither C(checkpoint_revision) / C(draft_revision) nor the catalog's) is refused (rule
        C(unpinned-weights)) unless the request sets C(allow_unpinned_weights=true).
      - Only a download from a Hub resolves a branch; with C(model_cache_source) of type C(s3) (a bucket copied as
        it is) or C(pvc) (a claim adopted as it is) nothing is downloaded from one, and no pin is asked for.
      - C(false) for playbooks that download nothing (benchmark, teardown, rollback).
    type: bool
    default: true
author:
  - inferops team (@inferops)
notes:
  - The capacity figures are estimates; their assumptions are returned with them.
"""

EXAMPLES = r"""
- name: Plan GB300 aggregated SGLang (the framework defaults to sglang)
  inferops.dynamo.deployment_plan:
    request:
      sku: gb300
      mode: agg
  register: plan

- name: Plan the 1M-context MI355X configuration
  inferops.dynamo.deployment_plan:
    request:
      sku: mi355x
      mode: agg
      framework: vllm
      checkpoint_repo: my-org/Muse-Spark-Open-816B-A42B-MXFP4
      flavour: long-context
"""

RETURN = r"""
plan:
  description: The plan as data (target, workers with command/args/env, capacity, expected performance, labels).
  returned: success
  type: dict
report:
  description: The plan as readable lines.
  returned: success
  type: list
  elements: str
request:
  description: The user's inputs as the plan read them, typed, without the unset ones (what a revision records).
  returned: success
  type: dict
  sample: {sku: gb300, mode: agg, image: "nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.5.2"}
manifests:
  description: Every Kubernetes object the deploy would apply, in order (the Secret without its value).
  returned: success
  type: list
  elements: dict
rule:
  description: Identifier of the first (most fundamental) rule a refused request broke.
  returned: failure
  type: str
  sample: amd-no-disagg
valid:
  description: The values or alternatives that would be accepted by that first rule.
  returned: failure
  type: list
  elements: str
violations:
  description: Every rule the request broke, in the order of C(msg).
  returned: failure
  type: list
  elements: dict
  contains:
    rule:
      description: Identifier of the rule.
      type: str
      sample: placeholder-checkpoint
    message:
      description: Why the request breaks it.
      type: str
    valid:
      description: The values or alternatives that would be accepted.
      type: list
      elements: str
"""

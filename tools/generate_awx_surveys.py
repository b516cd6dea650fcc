"""Generate the AWX surveys (awx/surveys/<template>.json) from the data the playbooks validate against.

Sources, in order of authority:

* the catalog (``plugins/module_utils/plan/catalog.py``: ``load_catalog().choices()``) for ``model``, ``sku``,
  ``framework``, ``mode``, and the targets' ``flavours`` for ``flavour``; the models' ``max_context`` bounds
  ``context_length``;
* ``plugins/module_utils/plan/build.py`` ``CHOICES`` for ``checkpoint``, ``parallelism``, ``speculative``,
  ``rdma_provider``, ``vllm_frontend``, ``kv_cache_dtype``;
* the roles' ``meta/argument_specs.yml`` for every question's type, description and (plan template only)
  default. A variable no argument spec declares yet falls back to ``FALLBACK`` below.

Choices are never typed here. When an argument spec lists choices for a variable that differ from the
data (catalog or CHOICES), generation fails: the spec has drifted and must be fixed first.

Usage::

    python tools/generate_awx_surveys.py            # (re)write awx/surveys/*.json
    python tools/generate_awx_surveys.py --check    # exit 1 when the committed files differ
    INFEROPS_DYNAMO_CATALOG=/tmp/catalog python tools/generate_awx_surveys.py --check   # another catalog

Output is deterministic: fixed question order, lists sorted as the sources sort them, ``indent=2``.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
for _p in (ROOT / "collections", ROOT):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from ansible_collections.inferops.dynamo.plugins.module_utils.plan import build as plan_mod  # noqa: E402
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.catalog import load_catalog  # noqa: E402

SURVEY_DIR = ROOT / "awx" / "surveys"
SURVEY_PREFIX = "survey_"

# The plain extra vars every playbook shares (roles/plan/defaults/main.yml reads them).
SHARED = (
    "sku", "mode", "framework", "model", "checkpoint", "checkpoint_repo", "draft_repo", "parallelism",
    "speculative", "concurrency", "request_count", "context_length", "max_num_seqs", "kv_cache_dtype",
    "rdma_provider", "rdma_net_devices", "vllm_frontend", "flavour", "k8s_namespace", "storage_class",
)

# The weights' pinned revisions, or the explicit acceptance of the main branch: asked where the weights are
# downloaded (the plan refuses unpinned weights there; benchmark and teardown download nothing).
WEIGHTS = ("checkpoint_revision", "draft_revision", "allow_unpinned_weights")

# Scaling to the objectives (docs/autoscaling.md): asked where the serving objects are rendered and applied.
AUTOSCALING = ("autoscaling", "autoscaling_min_replicas", "autoscaling_max_replicas", "autoscaling_gpu_budget")

# Template -> questions. ``plan`` runs on localhost without inventory values, so sku and mode are
# required there and the argument specs' defaults apply. The cluster templates run against an inventory
# whose group_vars (sku_*, site_*) set sku, mode, storage_class... per cluster: a survey answer is an extra
# var and would override every cluster, so there every question is optional and has no default
# (an unanswered question is not sent, and the inventory's value is used).
TEMPLATES = {
    "plan": {
        "description": "Resolve a target into a deployment plan (no cluster is touched).",
        "variables": (*SHARED, *WEIGHTS, *AUTOSCALING),
        "required": ("sku", "mode"),
        "use_spec_defaults": True,
    },
    "deploy": {
        "description": "Deploy the target to the inventory's clusters (plan, preflight, model cache, RDMA, engine).",
        "variables": (*SHARED, *WEIGHTS, *AUTOSCALING, "hf_token"),
    },
    "benchmark": {
        "description": "Benchmark the deployed target with AIPerf and compare with the expected performance.",
        "variables": (*SHARED, "benchmark_concurrency", "benchmark_request_count", "benchmark_tolerance",
                      "benchmark_slo", "benchmark_search", "benchmark_gpu_hour_cost", "benchmark_compare"),
    },
    "teardown": {
        "description": "Remove the target's serving objects and benchmark Jobs; the model cache stays unless a purge is confirmed.",
        "variables": (*SHARED, "purge_model_cache", "confirm_purge"),
        "defaults": {"purge_model_cache": "false"},
    },
    "rollout": {
        "description": "Progressive multi-cluster rollout: canary first, then batches, gated by the benchmark.",
        "variables": (*SHARED, *WEIGHTS, *AUTOSCALING, "hf_token", "rollout_serial", "rollout_benchmark_gate"),
    },
}

# Playbook variables whose argument spec lives under a role-prefixed name.
SPEC_ALIASES = {
    "hf_token": ("model_cache", "model_cache_hf_token"),
    "purge_model_cache": ("model_cache", "model_cache_purge"),
    "confirm_purge": ("model_cache", "model_cache_purge_confirmation"),
}

# Variables no argument spec declares (yet): type and description only, never choices.
FALLBACK = {
    "rollout_serial": {"type": "str", "description": "Clusters per batch, one number or percentage (e.g. 1 or 25%); default: the canary group, then 50% at a time."},
    "rollout_benchmark_gate": {"type": "bool", "description": "Gate each cluster on a short benchmark."},
}

LABELS = {
    "sku": "GPU SKU", "mode": "Deployment mode", "framework": "Engine framework", "model": "Model",
    "checkpoint": "Checkpoint", "checkpoint_repo": "Checkpoint repository", "draft_repo": "Draft model repository",
    "checkpoint_revision": "Checkpoint revision (commit id)", "draft_revision": "Draft model revision (commit id)",
    "allow_unpinned_weights": "Accept unpinned weights (main branch)",
    "parallelism": "Parallelism", "speculative": "Speculative decoding", "concurrency": "Concurrency",
    "request_count": "Request count", "context_length": "Context length (tokens)",
    "max_num_seqs": "Max sequences per worker", "kv_cache_dtype": "KV cache dtype", "rdma_provider": "RDMA provider",
    "rdma_net_devices": "RDMA net devices (UCX_NET_DEVICES)", "vllm_frontend": "vLLM frontend", "flavour": "Flavour",
    "k8s_namespace": "Namespace", "storage_class": "StorageClass (ReadWriteMany)", "hf_token": "Hugging Face token",
    "purge_model_cache": "Purge the model cache (DELETES DATA)", "confirm_purge": "Confirm the purge: namespace",
    "benchmark_concurrency": "Benchmark concurrency", "benchmark_request_count": "Benchmark request count",
    "benchmark_tolerance": "Benchmark tolerance", "benchmark_slo": "Service-level objectives",
    "benchmark_search": "Search the highest concurrency meeting the objectives",
    "benchmark_gpu_hour_cost": "Price per GPU-hour (dollars)", "benchmark_compare": "Compare with an earlier run",
    "rollout_serial": "Rollout batch size",
    "autoscaling": "Autoscaling (Dynamo planner or KEDA)", "autoscaling_min_replicas": "Fewest replicas per worker component",
    "autoscaling_max_replicas": "Most replicas per worker component", "autoscaling_gpu_budget": "GPU budget of the planner",
    "rollout_benchmark_gate": "Gate each batch on the benchmark",
}

EXTRA_NOTES = {
    "hf_token": "Leave empty to use the inventory's vault-encrypted hf_token.",
    "purge_model_cache": "true DELETES the model cache PVC and its downloaded weights (hundreds of GB); "
                         "it only happens when the confirmation below equals the namespace.",
    "confirm_purge": "Type the namespace to confirm that the model cache and its data are deleted. "
                     "Without it nothing is deleted.",
}

BOOL_CHOICES = ["false", "true"]
# A raw option (e.g. benchmark_concurrency: one value or a sweep list) is asked as text; the role parses it.
AWX_TYPES = {"str": "text", "raw": "text", "int": "integer", "float": "float"}


# Ansible doc markup, classic and semantic: C(x), I(x), O(x), V(x), RV(x), ...
MARKUP = re.compile(r"\b(?:[CIBMLUOVEP]|RV)\(([^)]*)\)")


def _plain(text: str) -> str:
    """Ansible doc markup -> its text; one line."""
    text = " ".join(text) if isinstance(text, list) else str(text)
    return MARKUP.sub(r"\1", " ".join(text.split()))


def load_argument_specs(root: Path = ROOT) -> dict[str, dict]:
    """role name -> main entry point options."""
    specs = {}
    for path in sorted((root / "roles").glob("*/meta/argument_specs.yml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        specs[path.parent.parent.name] = data.get("argument_specs", {}).get("main", {}).get("options", {}) or {}
    return specs


def _spec_for(variable: str, specs: dict[str, dict]) -> tuple[dict, str]:
    order = ["plan", *sorted(r for r in specs if r != "plan")]
    for role in order:
        if variable in specs.get(role, {}):
            return specs[role][variable], f"roles/{role}"
    if variable in SPEC_ALIASES:
        role, option = SPEC_ALIASES[variable]
        if option in specs.get(role, {}):
            return specs[role][option], f"roles/{role}:{option}"
    if variable in FALLBACK:
        return FALLBACK[variable], "fallback"
    raise SystemExit(f"no argument spec (and no fallback) declares '{variable}'")


def data_choices(catalog) -> dict[str, list[str]]:
    """Every choice the data defines: catalog first, then plan.CHOICES for the rest."""
    from_catalog = catalog.choices()
    choices = {k: list(v) for k, v in plan_mod.CHOICES.items()}
    for key in ("model", "sku", "framework", "mode"):
        choices[key] = list(from_catalog[key])
    choices["flavour"] = sorted({f for t in catalog.targets.values() for f in (t.get("flavours") or {})})
    return choices


def _question(variable: str, template: dict, spec: dict, choices: dict, max_context: int) -> dict:
    required = variable in template.get("required", ())
    description = _plain(spec.get("description", ""))
    if variable in EXTRA_NOTES:
        description = f"{description} {EXTRA_NOTES[variable]}".strip()
    if not required and not template.get("use_spec_defaults") and variable in (*SHARED, *WEIGHTS):
        description += " Empty: each cluster's inventory value, else the target's default."
    spec_type = spec.get("type", "str")
    question: dict = {
        "question_name": LABELS.get(variable, variable),
        "question_description": description,
        # survey_<option>: a blank answer arrives as null and would override the inventory under the option's own
        # name; the plan role sets the option from an answered question only (roles/plan/tasks/main.yml)
        "variable": f"{SURVEY_PREFIX}{variable}",
        "required": required,
    }
    default = template.get("defaults", {}).get(variable)
    if default is None and template.get("use_spec_defaults") and spec.get("default") not in (None, ""):
        default = spec["default"]
    if variable in choices or spec.get("choices"):
        data = choices.get(variable)
        declared = [str(c) for c in spec.get("choices") or []]
        if data is not None and declared and sorted(declared) != sorted(data):
            raise SystemExit(f"argument spec choices for '{variable}' {sorted(declared)} differ from the data "
                             f"{sorted(data)}: fix the argument spec")
        question.update(type="multiplechoice", choices=list(data if data is not None else declared))
    elif spec_type == "bool":
        question.update(type="multiplechoice", choices=list(BOOL_CHOICES))
        if default is not None:
            default = str(default).lower()
    elif variable == "hf_token" or spec.get("no_log"):
        question.update(type="password")
    elif spec_type in AWX_TYPES:
        question["type"] = AWX_TYPES[spec_type]
        if spec_type == "int":
            question["min"] = 1
            if variable == "context_length":
                question["max"] = max_context
    else:
        raise SystemExit(f"'{variable}' has type {spec_type}, which a survey cannot ask")
    if default is not None:
        if question["type"] == "integer":
            default = int(default)
        elif question["type"] == "float":
            default = float(default)
        else:
            default = str(default)
        question["default"] = default
    return question


def generate(catalog_dir: str | None = None, root: Path = ROOT) -> dict[str, dict]:
    """template name -> survey spec (dict)."""
    catalog = load_catalog(catalog_dir)
    choices = data_choices(catalog)
    specs = load_argument_specs(root)
    max_context = max(int(m["max_context"]) for m in catalog.models.values())
    surveys = {}
    for name, template in TEMPLATES.items():
        questions = []
        for variable in template["variables"]:
            spec, _source = _spec_for(variable, specs)
            questions.append(_question(variable, template, spec, choices, max_context))
        surveys[name] = {
            "name": f"inferops.dynamo {name}",
            "description": f"{template['description']} Generated by tools/generate_awx_surveys.py; do not edit.",
            "spec": questions,
        }
    return surveys


def render(survey: dict) -> str:
    return json.dumps(survey, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the files differ from the generated ones")
    parser.add_argument("--catalog", help="catalog directory (default: catalog/, or $INFEROPS_DYNAMO_CATALOG)")
    parser.add_argument("--output-dir", type=Path, default=SURVEY_DIR, help="where the surveys are (default: awx/surveys)")
    args = parser.parse_args(argv)

    surveys = generate(args.catalog)
    stale = []
    for name, survey in surveys.items():
        path = args.output_dir / f"{name}.json"
        text = render(survey)
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current == text:
            continue
        stale.append(path)
        if args.check:
            diff = difflib.unified_diff(current.splitlines(True), text.splitlines(True),
                                        f"{path} (committed)", f"{path} (generated)", n=1)
            sys.stdout.writelines(diff)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    extra = sorted(p for p in args.output_dir.glob("*.json") if p.stem not in surveys)
    if args.check:
        for path in extra:
            print(f"{path}: no template generates it")
        if stale or extra:
            print("AWX surveys are out of date: run python tools/generate_awx_surveys.py", file=sys.stderr)
            return 1
        print(f"{len(surveys)} AWX surveys up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The AWX surveys: valid under AWX's own rules, generated from the data, referenced by the templates.

AWX validates a survey server-side in ``JobTemplateSurveySpec._validate_spec_data``
(awx/api/views/__init__.py): ``SURVEY_SCHEMA`` below is those rules as JSON Schema, and
``awx_rule_errors`` the ones a schema cannot express (unique variables, defaults within choices,
one default for multiplechoice).
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
SURVEYS = REPO / "awx" / "surveys"
TEMPLATES_FILE = REPO / "awx" / "job_templates.yml"
GENERATOR = REPO / "tools" / "generate_awx_surveys.py"
SURVEY_NAMES = ("plan", "deploy", "benchmark", "teardown", "rollout")

DEFAULT_TYPES = {  # AWX JobTemplateSurveySpec.ALLOWED_TYPES
    "text": {"type": "string"}, "textarea": {"type": "string"}, "password": {"type": "string"},
    "multiplechoice": {"type": "string"}, "multiselect": {"type": "string"},
    "integer": {"type": "integer"}, "float": {"type": "number"},
}
SURVEY_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["name", "description", "spec"],
    "properties": {
        "name": {"type": "string"},
        "description": {"type": "string"},
        "spec": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/question"}},
    },
    "$defs": {
        "question": {
            "type": "object",
            "required": ["type", "question_name", "variable", "required"],
            "properties": {
                "type": {"enum": sorted(DEFAULT_TYPES)},
                "question_name": {"type": "string", "minLength": 1},
                "question_description": {"type": "string"},
                "variable": {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_]*$"},
                "required": {"type": "boolean"},
                "min": {"type": ["integer", "null"]},
                "max": {"type": ["integer", "null"]},
                "choices": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
            },
            "allOf": [
                *({"if": {"properties": {"type": {"const": t}}},
                   "then": {"properties": {"default": {"anyOf": [{"const": ""}, schema]}}}}
                  for t, schema in DEFAULT_TYPES.items()),
                {"if": {"properties": {"type": {"enum": ["multiplechoice", "multiselect"]}}},
                 "then": {"required": ["choices"]}},
            ],
        },
    },
}


def awx_rule_errors(survey: dict) -> list[str]:
    """What the schema cannot say; ``survey`` must already pass the schema."""
    errors, seen = [], set()
    for idx, q in enumerate(survey["spec"]):
        if q["variable"] in seen:
            errors.append(f"'variable' '{q['variable']}' duplicated in survey question {idx}")
        seen.add(q["variable"])
        if q["type"] in ("multiplechoice", "multiselect") and "default" in q:
            choices = q["choices"].splitlines() if isinstance(q["choices"], str) else q["choices"]
            default = q["default"]
            defaults = [d for d in default.splitlines() if d.strip()] if isinstance(default, str) else default
            if q["type"] == "multiplechoice" and len(defaults) > 1:
                errors.append(f"question {idx}: Multiple Choice (Single Select) can only have one default value")
            if any(d not in choices for d in defaults):
                errors.append(f"question {idx}: Default choice must be answered from the choices listed")
        if "min" in q and "max" in q and None not in (q["min"], q["max"]) and q["min"] > q["max"]:
            errors.append(f"question {idx}: min > max")
    return errors


def validate(survey: dict) -> list[str]:
    validator = jsonschema.Draft202012Validator(SURVEY_SCHEMA)
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(survey)]
    return errors or awx_rule_errors(survey)


def load(name: str) -> dict:
    return json.loads((SURVEYS / f"{name}.json").read_text(encoding="utf-8"))


def questions(name: str) -> dict[str, dict]:
    """The questions by the option each sets (a question's variable is survey_<option>)."""
    return {q["variable"].removeprefix("survey_"): q for q in load(name)["spec"]}


@pytest.mark.parametrize("name", SURVEY_NAMES)
def test_every_question_has_a_name_of_its_own(name):
    """A blank answer arrives as null: under the option's own name it would override the inventory's value."""
    assert all(q["variable"].startswith("survey_") for q in load(name)["spec"])


def test_one_survey_per_template_and_nothing_else():
    assert sorted(p.stem for p in SURVEYS.glob("*.json")) == sorted(SURVEY_NAMES)


@pytest.mark.parametrize("name", SURVEY_NAMES)
def test_survey_is_valid_for_awx(name):
    assert validate(load(name)) == []


@pytest.mark.parametrize("broken, message", [
    (lambda s: s.pop("description"), "'description' is a required property"),
    (lambda s: s.update(spec=[]), "should be non-empty"),
    (lambda s: s["spec"][0].pop("required"), "'required' is a required property"),
    (lambda s: s["spec"][0].update(type="checkbox"), "is not one of"),
    (lambda s: s["spec"][0].pop("choices"), "'choices' is a required property"),
    (lambda s: s["spec"].append(copy.deepcopy(s["spec"][0])), "duplicated"),
    (lambda s: s["spec"][0].update(default="h100"), "Default choice must be answered from the choices"),
    (lambda s: s["spec"][0].update(default="gb200\ngb300"), "only have one default"),
    (lambda s: next(q for q in s["spec"] if q["type"] == "integer").update(default="8"), "is not valid under any of the given schemas"),
    (lambda s: next(q for q in s["spec"] if q["type"] == "integer").update(min="1"), "is not of type 'integer'"),
])
def test_the_rules_reject_what_awx_rejects(broken, message):
    survey = load("deploy")
    assert survey["spec"][0]["variable"] == "survey_sku"
    broken(survey)
    assert any(message in e for e in validate(survey)), validate(survey)


def test_committed_surveys_equal_the_generated_ones():
    run = subprocess.run([sys.executable, str(GENERATOR), "--check"], capture_output=True, text=True,
                         cwd=REPO, check=False)
    assert run.returncode == 0, run.stdout + run.stderr


def _check_with_catalog(tmp_path, edit) -> subprocess.CompletedProcess:
    """Run ``generate_awx_surveys.py --check`` against an edited copy of the catalog."""
    catalog = tmp_path / "catalog"
    shutil.copytree(REPO / "catalog", catalog)
    edit(catalog)
    env = {**os.environ, "INFEROPS_DYNAMO_CATALOG": str(catalog)}
    return subprocess.run([sys.executable, str(GENERATOR), "--check"], capture_output=True, text=True,
                          cwd=REPO, env=env, check=False)


def _edit_yaml(path, change):
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_check_fails_when_a_target_gains_a_flavour(tmp_path):
    run = _check_with_catalog(tmp_path, lambda c: _edit_yaml(
        c / "targets.yml", lambda d: d["targets"]["vllm-agg-mi355x"]["flavours"].update(batch={"concurrency": 64})))
    assert run.returncode == 1
    assert '+        "batch",' in run.stdout  # the diff of the survey that would change
    assert "out of date" in run.stderr


def test_a_new_sku_fails_until_the_plan_argument_spec_lists_it(tmp_path):
    def add_b300(catalog):
        _edit_yaml(catalog / "skus.yml", lambda d: d["skus"].update(b300={**d["skus"]["b200"], "display_name": "B300"}))
    run = _check_with_catalog(tmp_path, add_b300)
    assert run.returncode == 1
    assert "argument spec choices for 'sku'" in run.stderr and "b300" in run.stderr


def test_choices_come_from_the_catalog_and_plan():
    from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import CHOICES
    from ansible_collections.inferops.dynamo.plugins.module_utils.plan.catalog import load_catalog

    catalog = load_catalog()
    expected = {**{k: list(v) for k, v in CHOICES.items()},
                **{k: catalog.choices()[k] for k in ("model", "sku", "framework", "mode")},
                "flavour": sorted({f for t in catalog.targets.values() for f in t.get("flavours", {})})}
    checked = set()
    for name in SURVEY_NAMES:
        for variable, q in questions(name).items():
            if variable in expected:
                assert q["type"] == "multiplechoice", (name, variable)
                assert q["choices"] == expected[variable], (name, variable)
                checked.add(variable)
    assert {"sku", "mode", "framework"} <= checked, checked        # the surveys do ask for them


def test_choices_match_the_plan_role_argument_spec():
    spec = yaml.safe_load((REPO / "roles/plan/meta/argument_specs.yml").read_text())
    options = spec["argument_specs"]["main"]["options"]
    checked = set()
    for name in SURVEY_NAMES:
        for variable, q in questions(name).items():
            if options.get(variable, {}).get("choices"):
                assert sorted(q["choices"]) == sorted(options[variable]["choices"]), (name, variable)
                checked.add(variable)
    assert checked, "no survey question has choices in the plan role's argument spec"


def test_required_and_defaults():
    plan = questions("plan")
    assert {v for v, q in plan.items() if q["required"]} == {"sku", "mode"}
    for name in ("deploy", "benchmark", "teardown", "rollout"):
        qs = questions(name)
        # cluster templates: the inventory sets sku/mode per cluster, a survey answer would override all
        assert not any(q["required"] for q in qs.values()), name
        assert {v for v, q in qs.items() if "default" in q} <= {"purge_model_cache"}, name


def test_hf_token_is_a_password_without_default():
    for name in ("deploy", "rollout"):
        q = questions(name)["hf_token"]
        assert q["type"] == "password" and "default" not in q and not q["required"]
    assert "hf_token" not in questions("plan")


def test_teardown_purge_questions_say_they_delete_data():
    qs = questions("teardown")
    purge, confirm = qs["purge_model_cache"], qs["confirm_purge"]
    assert purge["type"] == "multiplechoice" and purge["choices"] == ["false", "true"]
    assert purge["default"] == "false" and not purge["required"]
    assert "DELETES" in purge["question_description"] and "deleted" in confirm["question_description"]
    assert confirm["type"] == "text" and "default" not in confirm


def test_template_specific_questions():
    assert {"benchmark_concurrency", "benchmark_tolerance", "benchmark_request_count"} <= set(questions("benchmark"))
    assert {"rollout_serial", "rollout_benchmark_gate"} <= set(questions("rollout"))
    assert questions("plan")["context_length"]["max"] == 1048576


def test_the_weights_pins_are_asked_where_the_weights_are_downloaded():
    pins = {"checkpoint_revision", "draft_revision", "allow_unpinned_weights"}
    for name in ("plan", "deploy", "rollout"):
        qs = questions(name)
        assert pins <= set(qs), name
        assert qs["checkpoint_revision"]["type"] == "text" and "default" not in qs["checkpoint_revision"]
        assert qs["allow_unpinned_weights"]["choices"] == ["false", "true"]
    # the plan takes the spec's default (the secure one); a cluster template leaves it to the inventory
    assert questions("plan")["allow_unpinned_weights"]["default"] == "false"
    assert "default" not in questions("deploy")["allow_unpinned_weights"]
    for name in ("benchmark", "teardown"):       # they download nothing
        assert not pins & set(questions(name)), name


def test_job_templates_reference_existing_playbooks_and_surveys():
    templates = yaml.safe_load(TEMPLATES_FILE.read_text())["controller_templates"]
    assert sorted(t["playbook"] for t in templates) == sorted(f"playbooks/{n}.yml" for n in SURVEY_NAMES)
    for t in templates:
        assert {"name", "job_type", "inventory", "project", "playbook", "credentials", "survey_enabled",
                "survey_file"} <= set(t), t["name"]
        assert t["survey_enabled"] is True
        survey = REPO / t["survey_file"]
        assert survey.is_file(), t["survey_file"]
        assert validate(json.loads(survey.read_text())) == []
        assert (REPO / t["playbook"]).is_file(), f"{t['name']}: {t['playbook']} does not exist"


def test_job_template_names_match_awx_configure_defaults():
    loader = type("Loader", (yaml.SafeLoader,), {})
    loader.add_constructor("!unsafe", lambda ldr, node: ldr.construct_scalar(node))
    play = yaml.load((REPO / "playbooks/awx_configure.yml").read_text(), Loader=loader)[0]
    templates = yaml.safe_load(TEMPLATES_FILE.read_text())["controller_templates"]
    for t in templates:
        assert t["project"] == play["vars"]["awx_project_name"]
        assert t["inventory"] == play["vars"]["awx_inventory_name"]


def test_no_ansible_doc_markup_reaches_an_awx_user():
    """Descriptions come from the argument specs, written in Ansible's markup (C(), O(), V(), ...); AWX shows text."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("generate_awx_surveys", GENERATOR)
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    assert generator._plain(["See O(autoscaling_gpu_budget) at V(16),", "C(max_gpu_budget) and RV(rc)."]) == \
        "See autoscaling_gpu_budget at 16, max_gpu_budget and rc."
    for name in SURVEY_NAMES:
        for variable, q in questions(name).items():
            assert not generator.MARKUP.search(q.get("question_description", "")), (name, variable)

"""Weights are downloaded at a pinned revision (the user's, else the catalog's) or not at all: a plan for a run that
downloads them refuses an unpinned checkpoint (and draft model) with the rest of the request's broken rules, unless
allow_unpinned_weights=true accepts the main branch. A plan for a run that downloads nothing is never refused for
it (a restore, a teardown, a benchmark; an adopted claim; a bucket copied as it is)."""

import shutil
from pathlib import Path

import pytest
import yaml

from ansible_collections.inferops.dynamo.plugins.module_utils.plan import deploy_inputs
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.catalog import load_catalog
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.errors import PlanError, PlanRefused
from ansible_collections.inferops.dynamo.plugins.module_utils.render.model_transfer import download_specs

from plan_requests import DRAFT_REPO, MXFP4_REPO

REPO = Path(__file__).resolve().parents[4]
NVFP4 = "meta-models/Muse-Spark-Open-816B-A42B-NVFP4"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
DRAFT_COMMIT = "89abcdef0123456789abcdef0123456789abcdef"
CATALOG_COMMIT = "fedcba9876543210fedcba9876543210fedcba98"
GB300 = {"sku": "gb300", "mode": "agg"}
B200 = {"sku": "b200", "mode": "agg", "framework": "vllm", "draft_repo": DRAFT_REPO}   # DSpark by default


def refused(request, catalog=None) -> PlanRefused:
    with pytest.raises(PlanRefused) as info:
        build_plan(request, catalog, downloads_weights=True)
    return info.value


def the(err: PlanRefused, rule: str) -> PlanError:
    (error,) = [e for e in err.errors if e.rule == rule]
    return error


def test_an_unpinned_checkpoint_is_refused_naming_the_input_and_the_fix():
    err = refused(GB300)
    assert [e.rule for e in err.errors] == ["unpinned-weights"]
    assert str(err).startswith("[unpinned-weights] the checkpoint nvfp4 (meta-models/Muse-Spark-Open-816B-A42B-NVFP4) "
                               "would be downloaded from the head of its main branch")
    assert err.valid == ["checkpoint_revision=<40-character commit id>", "allow_unpinned_weights=true"]
    assert "Valid: checkpoint_revision=<40-character commit id>, allow_unpinned_weights=true." in str(err)
    assert err.inputs == {"checkpoint_revision", "allow_unpinned_weights"}


def test_a_speculative_target_needs_the_draft_model_pinned_too():
    err = the(refused(B200), "unpinned-weights")
    assert f"the checkpoint nvfp4 ({NVFP4}) and the DSpark draft model ({DRAFT_REPO}) would each be" in err.message
    assert err.valid == ["checkpoint_revision=<40-character commit id>", "draft_revision=<40-character commit id>",
                         "allow_unpinned_weights=true"]
    only_draft = the(refused({**B200, "checkpoint_revision": COMMIT}), "unpinned-weights")
    assert only_draft.valid == ["draft_revision=<40-character commit id>", "allow_unpinned_weights=true"]
    assert "checkpoint" not in only_draft.message.split(" would ")[0]
    plan = build_plan({**B200, "checkpoint_revision": COMMIT, "draft_revision": DRAFT_COMMIT}, downloads_weights=True)
    assert plan["model_cache"]["revisions"] == {NVFP4: COMMIT, DRAFT_REPO: DRAFT_COMMIT}
    # without speculative decoding there is no draft model to download, hence none to pin
    build_plan({**B200, "speculative": "none", "checkpoint_revision": COMMIT}, downloads_weights=True)


def test_the_refusal_comes_with_every_other_broken_rule():
    err = refused({"sku": "gb200", "mode": "agg", "checkpoint": "bf16", "checkpoint_repo": "example-org/bf16",
                   "concurrency": "-3"})
    assert [e.rule for e in err.errors] == ["invalid-concurrency", "unpinned-weights", "weights-exceed-hbm"]
    assert str(err).startswith("3 rules broken: invalid-concurrency, unpinned-weights, weights-exceed-hbm.")


@pytest.mark.parametrize("request_, rules", [
    # a malformed pin is refused by its grammar, once: not again as a missing one
    ({**GB300, "checkpoint_revision": "main"}, ["invalid-checkpoint-revision"]),
    ({**GB300, "allow_unpinned_weights": "maybe"}, ["invalid-allow-unpinned-weights"]),
    # a commit is a named repository's: naming it comes first
    ({"sku": "mi355x", "mode": "agg"}, ["placeholder-checkpoint"]),
    ({**B200, "draft_repo": None, "checkpoint_revision": COMMIT}, ["placeholder-draft"]),
    # remote code at an unpinned revision has its own rule, which names the same fix
    ({**GB300, "trust_remote_code": True}, ["remote-code-unpinned"]),
])
def test_a_pin_is_not_asked_twice_nor_of_an_unnamed_repository(request_, rules):
    assert [e.rule for e in refused(request_).errors] == rules


def test_allow_unpinned_weights_keeps_the_download_at_the_branch_with_a_warning():
    plan = build_plan({**B200, "allow_unpinned_weights": "true"}, downloads_weights=True)
    assert plan["model_cache"]["revisions"] == {}
    assert download_specs(plan) == [NVFP4, DRAFT_REPO]      # each at its main branch, as before
    (warning,) = [w for w in plan["warnings"] if "main branch" in w]
    assert warning.startswith(f"allow_unpinned_weights=true: {NVFP4}, {DRAFT_REPO} will be downloaded from its "
                              "main branch")


def test_a_plan_that_downloads_nothing_is_not_refused():
    # a restore, a teardown, a benchmark (build_plan's default), and an adopted claim, read as it is
    assert build_plan(GB300)["model_cache"]["revisions"] == {}
    adopted = build_plan({**GB300, "cache_claim": "weights-we-made"}, downloads_weights=True)
    assert adopted["model_cache"]["adopted"]


@pytest.mark.parametrize("source, downloads", [
    (None, True), ("", True), ({}, True), ("hub", True), ({"type": "hub"}, True),
    ({"type": "mirror", "endpoint": "https://hf.corp"}, True), ({"type": "unknown"}, True),
    ({"type": "s3", "bucket": "s3://b/p", "secret": "s3"}, False), ("s3", False),
    ({"type": "pvc", "claim": "weights"}, False),
])
def test_only_a_hub_or_a_hub_mirror_downloads_at_a_revision(source, downloads):
    assert deploy_inputs.fetches_from_hub(source) is downloads


def test_the_catalog_has_an_empty_revision_per_repository_as_the_sources_publish_none():
    model = load_catalog().models["muse-spark-open-816b-a42b"]
    entries = {**model["checkpoints"], **model["draft_models"]}
    assert {key: entry.get("revision") for key, entry in entries.items()} == dict.fromkeys(entries, "")
    text = (REPO / "catalog" / "models.yml").read_text()
    assert "The sources publish no commit for any of these" in text


def _catalog(tmp_path, **revisions) -> Path:
    """A copy of the catalog with ``revisions`` (checkpoint or draft key -> commit) pinned."""
    catalog = tmp_path / "catalog"
    shutil.copytree(REPO / "catalog", catalog)
    data = yaml.safe_load((catalog / "models.yml").read_text())
    model = data["models"]["muse-spark-open-816b-a42b"]
    for key, commit in revisions.items():
        (model["checkpoints"].get(key) or model["draft_models"][key])["revision"] = commit
    (catalog / "models.yml").write_text(yaml.safe_dump(data, sort_keys=False))
    return catalog


def test_the_catalogs_pin_is_used_when_the_user_gives_none(tmp_path):
    catalog = load_catalog(_catalog(tmp_path, nvfp4=CATALOG_COMMIT, dspark=DRAFT_COMMIT))
    plan = build_plan(GB300, catalog, downloads_weights=True)
    assert plan["checkpoint"]["revision"] == CATALOG_COMMIT
    assert download_specs(plan) == [f"{NVFP4}@{CATALOG_COMMIT}"]
    args = plan["workers"][0]["args"]
    assert args[args.index("--revision") + 1] == CATALOG_COMMIT
    assert not [w for w in plan["warnings"] if "main branch" in w]
    # the user's pin wins over it
    mine = build_plan({**GB300, "checkpoint_revision": COMMIT}, catalog, downloads_weights=True)
    assert mine["model_cache"]["revisions"] == {NVFP4: COMMIT}
    # the catalog's pin is its repository's: another repository must be pinned on its own
    other = refused({**GB300, "checkpoint_repo": "example-org/nvfp4"}, catalog)
    assert [e.rule for e in other.errors] == ["unpinned-weights"]


def test_the_catalogs_draft_pin_is_used_for_its_repository(tmp_path):
    catalog_dir = _catalog(tmp_path, nvfp4=CATALOG_COMMIT, dspark=DRAFT_COMMIT)
    data = yaml.safe_load((catalog_dir / "models.yml").read_text())
    data["models"]["muse-spark-open-816b-a42b"]["draft_models"]["dspark"]["hf_id"] = DRAFT_REPO  # as if published
    (catalog_dir / "models.yml").write_text(yaml.safe_dump(data, sort_keys=False))
    plan = build_plan({"sku": "b200", "mode": "agg", "framework": "vllm"}, load_catalog(catalog_dir),
                      downloads_weights=True)
    assert plan["model_cache"]["revisions"] == {NVFP4: CATALOG_COMMIT, DRAFT_REPO: DRAFT_COMMIT}


@pytest.mark.parametrize("revision", ["main", "v1.0", "0123456789abcdef", "0123456789ABCDEF0123456789ABCDEF01234567"])
def test_the_catalog_pins_only_to_a_commit_id(tmp_path, revision):
    with pytest.raises(PlanError) as info:
        load_catalog(_catalog(tmp_path, nvfp4=revision))
    assert info.value.rule == "catalog-invalid" and "a full 40-character commit id" in str(info.value)


def test_the_rehearsal_pins_every_repository_it_downloads():
    """The rehearsal deploys on the secure path: its inventory pins both repositories (any commit id will do there)."""
    settings = yaml.safe_load((REPO / "inventories/local/group_vars/dynamo_clusters/rehearsal.yml").read_text())
    assert "allow_unpinned_weights" not in settings
    build_plan({**B200, **{k: settings[k] for k in ("checkpoint_revision", "draft_revision")}}, downloads_weights=True)
    build_plan({"sku": "mi355x", "mode": "agg", "checkpoint_repo": MXFP4_REPO,
                "checkpoint_revision": settings["checkpoint_revision"]}, downloads_weights=True)

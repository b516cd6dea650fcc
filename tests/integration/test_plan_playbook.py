"""playbooks/plan.yml: no cluster, readable plan, files on request, refusals before anything else."""

import json

import pytest
import yaml

# The plan is the deploy's preview, so it refuses weights with no pinned revision: the tests that are about
# something else pin the checkpoint (any commit id plans; only a download would look it up).
PIN = ["-e", "checkpoint_revision=0123456789abcdef0123456789abcdef01234567"]


def test_plan_prints_and_writes_plan_and_manifests(playbook, tmp_path):
    run = playbook("plan.yml", "-e", "sku=gb300", "-e", "mode=agg", *PIN, "-e", f"render_dir={tmp_path}")
    assert run.rc == 0, run.output
    assert "muse-spark-sglang-aggregate-gb300" in run.stdout
    assert "Expected   635.8 tok/s" in run.stdout
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert plan["target"]["key"] == "sglang-agg-gb300"
    docs = list(yaml.safe_load_all((tmp_path / "manifests.yaml").read_text()))
    kinds = [d["kind"] for d in docs]
    assert kinds == ["Namespace", "Secret", "PersistentVolumeClaim", "Job", "NetworkPolicy", "NetworkPolicy",
                     "DynamoGraphDeployment"]
    again = playbook("plan.yml", "-e", "sku=gb300", "-e", "mode=agg", *PIN, "-e", f"render_dir={tmp_path}")
    assert again.recap("localhost")["changed"] == 0


def test_plan_for_amd_renders_a_deployment_and_service(playbook, tmp_path):
    run = playbook("plan.yml", "-e", "sku=mi355x", "-e", "framework=vllm", "-e", "mode=agg",
                   "-e", "checkpoint_repo=example-org/mxfp4", "-e", "flavour=long-context", *PIN,
                   "-e", f"render_dir={tmp_path}")
    assert run.rc == 0, run.output
    kinds = [d["kind"] for d in yaml.safe_load_all((tmp_path / "manifests.yaml").read_text())]
    assert kinds[-2:] == ["Deployment", "Service"]


def test_gb200_disagg_renders_a_compute_domain(playbook, tmp_path):
    run = playbook("plan.yml", "-e", "sku=gb200", "-e", "mode=disagg", "-e", "rdma_provider=infiniband", *PIN,
                   "-e", f"render_dir={tmp_path}")
    assert run.rc == 0, run.output
    kinds = [d["kind"] for d in yaml.safe_load_all((tmp_path / "manifests.yaml").read_text())]
    assert "ComputeDomain" in kinds


@pytest.mark.parametrize("args, expected", [
    (["-e", "sku=h100", "-e", "mode=agg"], "[unknown-sku] unknown sku 'h100'. Valid: b200, gb200, gb300, mi350x, mi355x."),
    (["-e", "sku=gb300", "-e", "mode=pd"], "[invalid-mode] mode='pd' is not valid. Valid: agg, disagg, kv-router."),
    (["-e", "sku=gb300", "-e", "mode=agg", "-e", "framework=trtllm"], "[invalid-framework]"),
    (["-e", "sku=gb300", "-e", "mode=agg", "-e", "concurrency=abc"], "concurrency"),
    (["-e", "sku=gb300", "-e", "mode=agg", "-e", "concurrency=-3"], "concurrency must be a positive whole number"),
    (["-e", "sku=mi355x", "-e", "mode=disagg"], "[amd-no-disagg]"),
    (["-e", "sku=mi355x", "-e", "mode=agg"], "[placeholder-checkpoint]"),
    (["-e", "sku=gb200", "-e", "mode=agg", "-e", "checkpoint=bf16", "-e", "checkpoint_repo=x/y"],
     "[weights-exceed-hbm]"),
    (["-e", "mode=agg"], "sku"),
])
def test_bad_input_fails_in_plan_with_the_valid_values(playbook, tmp_path, args, expected):
    run = playbook("plan.yml", *args, "-e", f"render_dir={tmp_path / 'out'}")
    assert run.rc != 0
    assert expected in run.output
    assert not (tmp_path / "out").exists()


def test_every_broken_rule_in_the_first_answer(playbook, tmp_path):
    """BF16 on GB200: the repository is unnamed AND the weights do not fit 4 GPUs; both at once, the
    missing name first. Naming the repository then leaves the fit alone."""
    run = playbook("plan.yml", "-e", "sku=gb200", "-e", "mode=agg", "-e", "checkpoint=bf16",
                   "-e", f"render_dir={tmp_path / 'out'}")
    assert run.rc != 0
    assert "Plan refused: 2 rules broken: placeholder-checkpoint, weights-exceed-hbm." in run.output
    first, second = run.output.index("1. [placeholder-checkpoint]"), run.output.index("2. [weights-exceed-hbm]")
    assert first < second
    assert "Valid: checkpoint_repo=<org/name>" in run.output and "It needs at least 10 GPUs" in run.output
    assert not (tmp_path / "out").exists()

    # (pinned: a named repository is also one whose commit can be asked for)
    named = playbook("plan.yml", "-e", "sku=gb200", "-e", "mode=agg", "-e", "checkpoint=bf16",
                     "-e", "checkpoint_repo=example-org/bf16", *PIN)
    assert named.rc != 0
    assert "Plan refused: [weights-exceed-hbm]" in named.output and "placeholder-checkpoint" not in named.output


def test_bad_choices_and_bad_numbers_together(playbook):
    run = playbook("plan.yml", "-e", "sku=h100 mode=pd concurrency=-3")
    assert run.rc != 0
    assert "Plan refused: 3 rules broken: unknown-sku, invalid-mode, invalid-concurrency." in run.output


def test_unpinned_weights_are_refused_before_anything_else(playbook, tmp_path):
    """No pinned revision, no acceptance of the main branch: the plan refuses, with every other broken rule, and
    names the inputs that fix it; nothing is written."""
    run = playbook("plan.yml", "-e", "sku=gb300", "-e", "mode=agg", "-e", f"render_dir={tmp_path / 'out'}")
    assert run.rc != 0
    assert "Plan refused: [unpinned-weights] the checkpoint nvfp4 (meta-models/Muse-Spark-Open-816B-A42B-NVFP4) " \
           "would be downloaded from the head of its main branch" in run.output
    assert "Valid: checkpoint_revision=<40-character commit id>, allow_unpinned_weights=true." in run.output
    assert run.recap("localhost")["failed"] == 1 and run.recap("localhost")["ok"] == 0
    assert not (tmp_path / "out").exists()

    together = playbook("plan.yml", "-e", "sku=b200", "-e", "mode=agg", "-e", "framework=vllm", "-e", "concurrency=-3",
                        "-e", "draft_repo=example-org/draft")
    assert together.rc != 0
    assert "Plan refused: 2 rules broken: invalid-concurrency, unpinned-weights." in together.output
    assert "Valid: checkpoint_revision=<40-character commit id>, draft_revision=<40-character commit id>, " \
           "allow_unpinned_weights=true." in together.output


def test_allow_unpinned_weights_plans_the_main_branch_with_a_warning(playbook, tmp_path):
    run = playbook("plan.yml", "-e", "sku=gb300", "-e", "mode=agg", "-e", "allow_unpinned_weights=true",
                   "-e", f"render_dir={tmp_path}")
    assert run.rc == 0, run.output[-3000:]
    assert "WARNING    allow_unpinned_weights=true: meta-models/Muse-Spark-Open-816B-A42B-NVFP4" in run.output
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert [w for w in plan["warnings"] if w.startswith("allow_unpinned_weights=true: meta-models/Muse-Spark-Open-"
                                                       "816B-A42B-NVFP4 will be downloaded from its main branch")]
    assert plan["model_cache"]["revisions"] == {}
    (job,) = [d for d in yaml.safe_load_all((tmp_path / "manifests.yaml").read_text()) if d["kind"] == "Job"]
    assert job["spec"]["template"]["spec"]["containers"][0]["args"] == ["meta-models/Muse-Spark-Open-816B-A42B-NVFP4"]


def test_a_pinned_plan_downloads_and_serves_that_commit(playbook, tmp_path):
    run = playbook("plan.yml", "-e", "sku=gb300", "-e", "mode=agg", *PIN, "-e", f"render_dir={tmp_path}")
    assert run.rc == 0, run.output[-3000:]
    assert "will be downloaded from its main branch" not in run.output
    docs = list(yaml.safe_load_all((tmp_path / "manifests.yaml").read_text()))
    (job,) = [d for d in docs if d["kind"] == "Job"]
    commit = PIN[1].split("=", 1)[1]
    assert job["spec"]["template"]["spec"]["containers"][0]["args"] == [
        f"meta-models/Muse-Spark-Open-816B-A42B-NVFP4@{commit}"]
    (graph,) = [d for d in docs if d["kind"] == "DynamoGraphDeployment"]
    assert f'"--revision", "{commit}"' in json.dumps(graph)     # the engines load that snapshot


@pytest.mark.parametrize("source, refused", [
    ({"type": "mirror", "endpoint": "https://hf.corp.example"}, True),   # a Hub mirror resolves branches too
    ({"type": "s3", "bucket": "s3://weights/muse", "secret": "s3-creds"}, False),   # copied as it is
    ({"type": "pvc", "claim": "weights-we-made"}, False),                  # adopted as it is
], ids=["mirror", "s3", "pvc"])
def test_only_a_download_from_a_hub_asks_for_a_pin(playbook, source, refused):
    run = playbook("plan.yml", "-e", "sku=gb300", "-e", "mode=agg", "-e", json.dumps({"model_cache_source": source}))
    assert (run.rc != 0) is refused, run.output[-3000:]
    assert ("[unpinned-weights]" in run.output) is refused

"""playbooks/plan.yml: no cluster, readable plan, files on request, refusals before anything else."""

import json

import pytest
import yaml


def test_plan_prints_and_writes_plan_and_manifests(playbook, tmp_path):
    run = playbook("plan.yml", "-e", "sku=gb300", "-e", "mode=agg", "-e", f"render_dir={tmp_path}")
    assert run.rc == 0, run.output
    assert "muse-spark-sglang-aggregate-gb300" in run.stdout
    assert "Expected   635.8 tok/s" in run.stdout
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert plan["target"]["key"] == "sglang-agg-gb300"
    docs = list(yaml.safe_load_all((tmp_path / "manifests.yaml").read_text()))
    kinds = [d["kind"] for d in docs]
    assert kinds == ["Namespace", "Secret", "PersistentVolumeClaim", "Job", "DynamoGraphDeployment"]
    again = playbook("plan.yml", "-e", "sku=gb300", "-e", "mode=agg", "-e", f"render_dir={tmp_path}")
    assert again.recap("localhost")["changed"] == 0


def test_plan_for_amd_renders_a_deployment_and_service(playbook, tmp_path):
    run = playbook("plan.yml", "-e", "sku=mi355x", "-e", "framework=vllm", "-e", "mode=agg",
                   "-e", "checkpoint_repo=example-org/mxfp4", "-e", "flavour=long-context", "-e", f"render_dir={tmp_path}")
    assert run.rc == 0, run.output
    kinds = [d["kind"] for d in yaml.safe_load_all((tmp_path / "manifests.yaml").read_text())]
    assert kinds[-2:] == ["Deployment", "Service"]


def test_gb200_disagg_renders_a_compute_domain(playbook, tmp_path):
    run = playbook("plan.yml", "-e", "sku=gb200", "-e", "mode=disagg", "-e", "rdma_provider=infiniband",
                   "-e", f"render_dir={tmp_path}")
    assert run.rc == 0, run.output
    kinds = [d["kind"] for d in yaml.safe_load_all((tmp_path / "manifests.yaml").read_text())]
    assert "ComputeDomain" in kinds


@pytest.mark.parametrize("args, expected", [
    (["-e", "sku=h100", "-e", "mode=agg"], "value of sku must be one of: b200, gb200, gb300, mi350x, mi355x"),
    (["-e", "sku=gb300", "-e", "mode=pd"], "value of mode must be one of: agg, disagg, kv-router"),
    (["-e", "sku=gb300", "-e", "mode=agg", "-e", "framework=trtllm"], "value of framework must be one of"),
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

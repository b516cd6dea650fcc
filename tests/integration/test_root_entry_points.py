"""The design card's command, typed at the checkout's root: `ansible-playbook deploy.yml -e "sku=gb300 mode=agg"`."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from deploy_helpers import get, rehearsal_pins

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def at_root(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1",
           "PATH": f"{BIN}:{os.environ.get('PATH', '')}"}
    return subprocess.run([str(BIN / "ansible-playbook"), *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600, check=False)


def test_plan_at_the_root(tmp_path):
    run = at_root("plan.yml", "-e", "sku=gb300 mode=agg", *rehearsal_pins(), "-e", f"render_dir={tmp_path}")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr
    assert "muse-spark-sglang-aggregate-gb300" in run.stdout
    assert (tmp_path / "plan.json").is_file()


@pytest.mark.cluster
def test_deploy_at_the_root(deploy_env):
    env = deploy_env(prefix="root")
    run = at_root("-i", str(env.inventory), "deploy.yml", "-e", "sku=gb300 mode=agg")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr
    assert "Smoke test passed" in run.stdout
    assert get(env.dyn, "nvidia.com/v1beta1", "DynamoGraphDeployment", "muse-spark-sglang-aggregate-gb300",
               env.namespace)

"""`ansible-galaxy collection build` gives an installable tarball whose plugins are documented and whose
playbooks run by name (``ansible-playbook inferops.dynamo.deploy``) from the installed copy alone."""

import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from deploy_helpers import rehearsal_pins

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
ENTRY_POINTS = ("plan.yml", "deploy.yml", "benchmark.yml", "teardown.yml", "rollout.yml")


def run(*cmd, cwd, env=None, timeout=300):
    return subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, check=False,
                          env={**os.environ, **(env or {})}, timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(tarball member names, environment, work dir) of the collection built and installed in a temporary
    collections path. Isolated from the project's ansible.cfg (which `make test` exports): through it
    the checkout is already an installed inferops.dynamo, and ansible-galaxy would skip the install."""
    tmp = tmp_path_factory.mktemp("installed")
    dest = tmp / "collections"
    env = {"ANSIBLE_CONFIG": str(tmp / "none.cfg"), "ANSIBLE_COLLECTIONS_PATH": str(dest), "ANSIBLE_NOCOLOR": "1",
           "PATH": f"{BIN}:{os.environ.get('PATH', '')}"}
    built = run(BIN / "ansible-galaxy", "collection", "build", REPO, "--output-path", tmp, "--force", cwd=tmp, env=env)
    assert built.returncode == 0, built.stderr
    tarball = next(tmp.glob("inferops-dynamo-*.tar.gz"))
    with tarfile.open(tarball) as tar:
        names = tar.getnames()
    done = run(BIN / "ansible-galaxy", "collection", "install", "--offline", "--no-deps", "--force", tarball,
               "-p", dest, cwd=tmp, env=env)
    assert done.returncode == 0, done.stderr
    assert (dest / "ansible_collections" / "inferops" / "dynamo" / "MANIFEST.json").exists()
    return names, env, tmp


def test_the_tarball_holds_the_collection_and_nothing_of_the_checkout(installed):
    names, _, _ = installed
    assert "catalog/targets.yml" in names and "plugins/module_utils/plan/build.py" in names
    assert "roles/engine/meta/argument_specs.yml" in names
    assert {"playbooks/deploy.yml", "playbooks/plan.yml"} <= set(names)
    assert not [n for n in names if n.startswith(("kubesim/", "tests/", "collections/", "."))], \
        "nothing of the checkout: no emulator, tests or hidden directory (virtualenvs, caches)"
    assert not set(ENTRY_POINTS) & set(names), "the root entry points are for the checkout only"


def test_ansible_doc_from_the_installed_copy(installed):
    _, env, tmp = installed
    # From the installed copy only: the checkout's symlink is not on the path.
    doc = run(BIN / "ansible-doc", "-t", "module", "inferops.dynamo.aiperf_results", cwd=tmp, env=env)
    assert doc.returncode == 0, doc.stderr
    assert env["ANSIBLE_COLLECTIONS_PATH"] in doc.stdout and "AIPerf" in doc.stdout
    filt = run(BIN / "ansible-doc", "-t", "filter", "inferops.dynamo.serving_objects", cwd=tmp, env=env)
    assert filt.returncode == 0 and "DynamoGraphDeployment" in filt.stdout


def test_plan_by_name_from_the_installed_copy(installed, tmp_path):
    _, env, tmp = installed
    out = tmp_path / "render"
    plan = run(BIN / "ansible-playbook", "inferops.dynamo.plan", "-e", "sku=gb300 mode=agg", *rehearsal_pins(),
               "-e", f"render_dir={out}", cwd=tmp, env=env)
    assert plan.returncode == 0, plan.stdout[-3000:] + plan.stderr
    assert "muse-spark-sglang-aggregate-gb300" in plan.stdout
    assert "DynamoGraphDeployment" in (out / "manifests.yaml").read_text()


@pytest.mark.cluster
def test_deploy_by_name_from_the_installed_copy(installed, deploy_env):
    """The README's installed form, `ansible-playbook inferops.dynamo.deploy -e ...`, on the rehearsal cluster."""
    _, env, tmp = installed
    target = deploy_env(prefix="fqcn")
    deploy = run(BIN / "ansible-playbook", "-i", target.inventory, "inferops.dynamo.deploy",
                 "-e", "sku=gb300 mode=agg", cwd=tmp, env=env, timeout=600)
    assert deploy.returncode == 0, deploy.stdout[-4000:] + deploy.stderr
    assert "Smoke test passed" in deploy.stdout
    # Nothing else could have served inferops.dynamo: no project ansible.cfg, a temporary working
    # directory, and the temporary collections path only.
    dgd = target.dyn.resources.get(api_version="nvidia.com/v1beta1", kind="DynamoGraphDeployment").get(
        name="muse-spark-sglang-aggregate-gb300", namespace=target.namespace).to_dict()
    assert dgd["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "inferops.dynamo"

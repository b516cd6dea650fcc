"""`ansible-galaxy collection build` gives an installable tarball whose plugins are documented."""

import os
import subprocess
import sys
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def run(*cmd, cwd, env=None):
    return subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, check=False,
                          env={**os.environ, **(env or {})}, timeout=300)


def test_build_install_and_ansible_doc_from_the_installed_copy(tmp_path):
    # Isolated from the project's ansible.cfg (which `make test` exports): through it the checkout is
    # already an installed inferops.dynamo, and ansible-galaxy would skip the install as done.
    dest = tmp_path / "collections"
    env = {"ANSIBLE_CONFIG": str(tmp_path / "none.cfg"), "ANSIBLE_COLLECTIONS_PATH": str(dest)}
    built = run(BIN / "ansible-galaxy", "collection", "build", REPO, "--output-path", tmp_path, "--force",
                cwd=tmp_path, env=env)
    assert built.returncode == 0, built.stderr
    tarball = next(tmp_path.glob("inferops-dynamo-*.tar.gz"))
    with tarfile.open(tarball) as tar:
        names = tar.getnames()
    assert "catalog/targets.yml" in names and "plugins/module_utils/plan.py" in names
    assert "roles/engine/meta/argument_specs.yml" in names
    assert not [n for n in names if n.startswith(("kubesim/", "tests/", "collections/", ".venv/"))]

    installed = run(BIN / "ansible-galaxy", "collection", "install", "--offline", "--no-deps", "--force", tarball,
                    "-p", dest, cwd=tmp_path, env=env)
    assert installed.returncode == 0, installed.stderr
    assert (dest / "ansible_collections" / "inferops" / "dynamo" / "MANIFEST.json").exists()

    # From the installed copy only: the checkout's symlink is not on the path.
    doc = run(BIN / "ansible-doc", "-t", "module", "inferops.dynamo.aiperf_results", cwd=tmp_path, env=env)
    assert doc.returncode == 0, doc.stderr
    assert str(dest) in doc.stdout and "AIPerf" in doc.stdout
    filt = run(BIN / "ansible-doc", "-t", "filter", "inferops.dynamo.serving_objects", cwd=tmp_path, env=env)
    assert filt.returncode == 0 and "DynamoGraphDeployment" in filt.stdout

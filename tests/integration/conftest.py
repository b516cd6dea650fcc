"""Helpers to run the collection's playbooks the way a user does."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


@dataclass
class PlaybookRun:
    rc: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def recap(self, host: str) -> dict:
        match = re.search(rf"^{re.escape(host)}\s*:\s*(.*)$", self.stdout, re.M)
        assert match, f"no PLAY RECAP line for {host}:\n{self.stdout[-2000:]}"
        return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", match.group(1))}


def run_playbook(playbook: str | Path, *args: str, extra_env: dict | None = None, timeout: int = 600) -> PlaybookRun:
    """Run ``playbooks/<playbook>`` (or any playbook given as a Path) with the project's ansible.cfg."""
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_FORCE_COLOR": "0", "PATH": f"{BIN}:{os.environ.get('PATH', '')}", **(extra_env or {})}
    path = playbook if isinstance(playbook, Path) else REPO / "playbooks" / playbook
    proc = subprocess.run([str(BIN / "ansible-playbook"), str(path), *args],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=timeout, check=False)
    return PlaybookRun(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def playbook():
    return run_playbook


@pytest.fixture
def playbook_at():
    """Run a playbook file outside playbooks/ (a test's own) the same way."""
    return run_playbook


# ---------------------------------------------------------------------------- deploy fixtures
@dataclass
class DeployEnv:
    """One namespace on one kubesim cluster, with a temporary inventory pointing at it."""

    cluster: object
    namespace: str
    inventory: Path
    dyn: object

    def run(self, playbook_name: str, *args: str, timeout: int = 600, extra_env: dict | None = None) -> PlaybookRun:
        return run_playbook(playbook_name, "-i", str(self.inventory), *args, timeout=timeout, extra_env=extra_env)


@pytest.fixture(scope="session")
def kubesim_factory(tmp_path_factory):
    """Extra kubesim daemons with their own node inventory / storage classes / CRDs (cached per config)."""
    import kubesim

    started: dict = {}

    def make(nodes: str | None = None, storage_classes: str | None = None, crd_dir: str | None = "default",
             rdma: bool = True):
        key = (nodes, storage_classes, crd_dir, rdma)
        if key not in started:
            real = REPO.parent / "shared" / "crds"
            crds = (str(real) if real.is_dir() else None) if crd_dir == "default" else crd_dir
            state = tmp_path_factory.mktemp("kubesim-extra")
            started[key] = kubesim.start(1, state_dir=state, nodes=nodes, storage_classes=storage_classes,
                                         crd_dir=crds, rdma=rdma, ready_seconds=1.0, download_seconds=1.0)
        return started[key][0]

    yield make
    for cs in started.values():
        cs.stop()


@pytest.fixture
def deploy_env(kubesim_cluster, tmp_path):
    """``deploy_env()`` -> a DeployEnv on the session cluster (or ``cluster=``) in a fresh namespace,
    deleted (and waited for) when the test ends. Extra keyword arguments become inventory variables."""
    from deploy_helpers import delete_namespace, new_namespace, write_inventory

    made: list[DeployEnv] = []

    def make(cluster=None, prefix: str = "d", **overrides) -> DeployEnv:
        c = cluster or kubesim_cluster
        ns = new_namespace(prefix)
        inv = write_inventory(tmp_path / f"inventory-{ns}.yml", c.kubeconfig, c.context, ns, **overrides)
        env = DeployEnv(c, ns, inv, c.dynamic())
        made.append(env)
        return env

    yield make
    for env in made:
        try:
            env.cluster.clear_faults()
        except Exception:
            pass
        delete_namespace(env.dyn, env.namespace)


# ---------------------------------------------------------------------------- the real control plane
# real_clusterset, real_cluster and backend_cluster live in tests/conftest.py (tests/kubesim uses them too).
@pytest.fixture(scope="session")
def real_dyn(real_cluster):
    return real_cluster.dynamic()


@pytest.fixture(scope="session")
def team_dyn(real_cluster):
    """The namespace-scoped deployer's view (ServiceAccount token bound to `edit` in team-a)."""
    from kubernetes import config
    from kubernetes.dynamic import DynamicClient

    return DynamicClient(config.new_client_from_config(config_file=real_cluster.kubeconfig,
                                                       context=real_cluster.team_context))

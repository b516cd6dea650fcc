"""Fixtures to run the collection's playbooks the way a user does (the runners live in deploy_helpers)."""

from __future__ import annotations

import uuid

import pytest
from deploy_helpers import DeployEnv, run_playbook


@pytest.fixture
def playbook():
    return run_playbook


@pytest.fixture
def playbook_at():
    """Run a playbook file outside playbooks/ (a test's own) the same way."""
    return run_playbook


# ---------------------------------------------------------------------------- deploy fixtures
@pytest.fixture(scope="session")
def kubesim_factory(tmp_path_factory):
    """Extra kubesim daemons with their own node inventory / storage classes / CRDs (cached per config)."""
    from kubesim.rehearsal import QUICK, start_rehearsal

    started: dict = {}

    def make(nodes: str | None = None, storage_classes: str | None = None, crd_dir: str | None = "default",
             rdma: bool = True, monitoring_crds: bool = True):
        key = (nodes, storage_classes, crd_dir, rdma, monitoring_crds)
        if key not in started:
            crds = {} if crd_dir == "default" else {"crd_dir": crd_dir}
            started[key] = start_rehearsal(1, state_dir=tmp_path_factory.mktemp("kubesim-extra"), nodes=nodes,
                                           storage_classes=storage_classes, rdma=rdma,
                                           monitoring_crds=monitoring_crds, **crds, **QUICK)
        return started[key][0]

    yield make
    for cs in started.values():
        cs.stop()


@pytest.fixture
def deploy_env(kubesim_cluster, tmp_path):
    """``deploy_env()`` -> a DeployEnv on the session cluster (or ``cluster=``) in a fresh namespace,
    released when the test ends (deleted, its pods waited for). Extra keyword arguments become inventory variables."""
    from deploy_helpers import new_namespace, release_namespaces, write_inventory

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
        release_namespaces(env.dyn, env.namespace)


# ---------------------------------------------------------------------------- the real Dynamo runtime
@pytest.fixture
def runtime_cluster(tmp_path):
    """``runtime_cluster(prefix, backend="real", scrape_s=None, nodes=None)`` -> (cluster, dynamic client, namespace,
    inventory): a rehearsal cluster of the test's own (its serving pods run the real Dynamo runtime, as every
    rehearsal's do), on either backend; on the real one with a Prometheus scraping every ``scrape_s`` seconds when
    asked."""
    from deploy_helpers import write_inventory

    from kubesim.rehearsal import QUICK, start_rehearsal

    started = []

    def start(prefix: str, backend: str = "real", scrape_s: float | None = None, nodes: str | None = None):
        extra = {**({"prometheus": scrape_s} if scrape_s else {}), **({"nodes": nodes} if nodes else {})}
        cs = start_rehearsal(1, backend=backend, state_dir=tmp_path / "cluster", **extra, **QUICK)
        started.append(cs)
        cluster = cs[0]
        ns = f"{prefix}-{uuid.uuid4().hex[:8]}"
        return cluster, cluster.dynamic(), ns, write_inventory(tmp_path / "inv.yml", cluster.kubeconfig,
                                                               cluster.context, ns)

    yield start
    for cs in started:
        cs.stop()


# ---------------------------------------------------------------------------- the real control plane
# real_clusterset, real_cluster and backend_cluster live in tests/conftest.py (tests/kubesim uses them too).
@pytest.fixture(scope="session")
def real_dyn(real_cluster):
    return real_cluster.dynamic()


@pytest.fixture(scope="session")
def team_dyn(real_cluster):
    """The namespace-scoped deployer's view (ServiceAccount token bound to `edit` in team-a)."""
    from kubernetes import config

    return real_cluster.dynamic(config.new_client_from_config(config_file=real_cluster.kubeconfig,
                                                              context=real_cluster.team_context))

"""A real control plane (kubesim.control_plane: kube-apiserver, etcd, controller-manager, scheduler and
kwok) for the tests that must hold against the real API server, started once per session.

The binaries are built by `make control-plane` (a `make test` prerequisite); a missing build is built
here rather than skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def real_clusterset(tmp_path_factory):
    import kubesim
    from kubesim.control_plane import build

    build.build()
    crds = REPO.parent / "shared" / "crds"
    cs = kubesim.start(1, backend="real", state_dir=tmp_path_factory.mktemp("real"),
                       crd_dir=str(crds) if crds.is_dir() else None)
    try:
        yield cs
    finally:
        cs.stop()


@pytest.fixture(scope="session")
def real_cluster(real_clusterset):
    return real_clusterset[0]


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

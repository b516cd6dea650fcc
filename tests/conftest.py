"""Shared pytest fixtures: a rehearsal cluster (kubesim) started once per test session.

Fixtures:
* ``kubesim_cluster`` (session): a ``kubesim.Cluster`` handle -- ``.kubeconfig``, ``.context``,
  ``.port``, ``.base_url``, ``.fault(kind, **args)``, ``.clear_faults()``, ``.api_client()``,
  ``.dynamic()``. Faults are cleared after every test that uses ``kubesim_faults``.
  Uses the real Dynamo CRDs from ``../shared/crds`` when that directory exists
  (``KUBESIM_CRD_DIR=<dir>|none`` overrides).
* ``kubesim_faults``: the same handle; clears all faults when the test ends.
* ``k8s_client``: a ``kubernetes.client.ApiClient`` for the cluster.
* ``k8s_dynamic``: a ``kubernetes.dynamic.DynamicClient``.
* ``k8s_namespace``: a fresh namespace (deleted afterwards).
* ``noting_interpreter``: ``(python, log)``, an interpreter that notes in ``log`` each module process Ansible starts
  with it (set as ``ansible_python_interpreter``), to tell a module process from a task run in the controller.
* ``real_clusterset``/``real_cluster`` (session): the real control plane backend, started when a test
  asks for it; ``backend_cluster``: a test parametrised over both backends.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# kubesim, and the collection's own Python (render a target's objects the way the playbooks do)
for _path in (REPO / "collections", REPO):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))


@pytest.fixture(scope="session")
def kubesim_clusterset(tmp_path_factory):
    from kubesim.rehearsal import QUICK, start_rehearsal

    # the real Dynamo CRDs when present (as CI passes them), else kubesim's minimal ones;
    # KUBESIM_CRD_DIR overrides ("none" for the minimal ones only)
    cs = start_rehearsal(1, state_dir=tmp_path_factory.mktemp("kubesim"), **QUICK)
    try:
        yield cs
    finally:
        cs.stop()


@pytest.fixture(scope="session")
def kubesim_cluster(kubesim_clusterset):
    return kubesim_clusterset[0]


def without_faults(cluster):
    """``cluster`` with no fault set before and after the test."""
    cluster.clear_faults()
    yield cluster
    cluster.clear_faults()


def fresh_namespace(dyn):
    """A namespace of its own for one test, deleted after it."""
    name = "t-" + uuid.uuid4().hex[:8]
    ns = dyn.resources.get(api_version="v1", kind="Namespace")
    ns.create(body={"metadata": {"name": name}})
    yield name
    try:
        ns.delete(name=name)
    except Exception:
        pass


@pytest.fixture
def kubesim_faults(kubesim_cluster):
    yield from without_faults(kubesim_cluster)


@pytest.fixture(scope="session")
def k8s_client(kubesim_cluster):
    return kubesim_cluster.api_client()


@pytest.fixture(scope="session")
def k8s_dynamic(kubesim_cluster, k8s_client):
    return kubesim_cluster.dynamic(k8s_client)


@pytest.fixture
def k8s_namespace(k8s_dynamic):
    yield from fresh_namespace(k8s_dynamic)


# ---------------------------------------------------------------------------- the real control plane
# kube-apiserver, etcd, controller-manager, scheduler and kwok (kubesim.control_plane), started once per
# session when a test asks for it. `make test` builds the binaries first; a missing build is built here
# rather than skipped. KUBESIM_REAL_STATE_DIR=<state dir> uses a real backend already running there
# (`python -m kubesim start --backend real --state-dir DIR`) and leaves it running.
@pytest.fixture(scope="session")
def real_clusterset(tmp_path_factory):
    import kubesim
    from kubesim.rehearsal import QUICK, start_rehearsal

    if os.environ.get("KUBESIM_REAL_STATE_DIR"):
        yield kubesim.attach(os.environ["KUBESIM_REAL_STATE_DIR"])
        return
    cs = start_rehearsal(1, backend="real", state_dir=tmp_path_factory.mktemp("real"), **QUICK)
    try:
        yield cs
    finally:
        cs.stop()


@pytest.fixture(scope="session")
def real_cluster(real_clusterset):
    return real_clusterset[0]


@pytest.fixture(scope="session", params=["kubesim", "real"])
def backend_cluster(request):
    """The same test on kubesim and on the real control plane."""
    return request.getfixturevalue("kubesim_cluster" if request.param == "kubesim" else "real_cluster")



@pytest.fixture
def backend_faults(backend_cluster):
    yield from without_faults(backend_cluster)


@pytest.fixture(scope="session")
def backend_client(backend_cluster):
    return backend_cluster.api_client()


@pytest.fixture(scope="session")
def backend_dynamic(backend_cluster, backend_client):
    return backend_cluster.dynamic(backend_client)


@pytest.fixture
def backend_namespace(backend_dynamic):
    yield from fresh_namespace(backend_dynamic)


@pytest.fixture
def noting_interpreter(tmp_path) -> tuple[Path, Path]:
    started = tmp_path / "module-processes.log"
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\necho "$@" >> {started}\nexec {sys.executable} "$@"\n')
    python.chmod(0o755)
    return python, started


# ---------------------------------------------------------------------------- parallel runs (pytest-xdist)
# which tests share a worker: tests/parallel_groups.py (a hook imported here is registered as this conftest's)
from parallel_groups import pytest_collection_modifyitems  # noqa: E402, F401

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
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


@pytest.fixture(scope="session")
def kubesim_clusterset(tmp_path_factory):
    import kubesim

    state = tmp_path_factory.mktemp("kubesim")
    # the real Dynamo CRDs when present (as CI passes them), else kubesim's minimal ones;
    # KUBESIM_CRD_DIR overrides ("none" for the minimal ones only)
    real = REPO.parent / "shared" / "crds"
    crd_dir = os.environ.get("KUBESIM_CRD_DIR") or (str(real) if real.is_dir() else None)
    if crd_dir == "none":
        crd_dir = None
    cs = kubesim.start(1, state_dir=state, ready_seconds=1.0, download_seconds=1.0, crd_dir=crd_dir)
    try:
        yield cs
    finally:
        cs.stop()


@pytest.fixture(scope="session")
def kubesim_cluster(kubesim_clusterset):
    return kubesim_clusterset[0]


@pytest.fixture
def kubesim_faults(kubesim_cluster):
    kubesim_cluster.clear_faults()
    yield kubesim_cluster
    kubesim_cluster.clear_faults()


@pytest.fixture(scope="session")
def k8s_client(kubesim_cluster):
    return kubesim_cluster.api_client()


@pytest.fixture(scope="session")
def k8s_dynamic(k8s_client):
    from kubernetes.dynamic import DynamicClient

    return DynamicClient(k8s_client)


@pytest.fixture
def k8s_namespace(k8s_dynamic):
    name = "t-" + uuid.uuid4().hex[:8]
    ns = k8s_dynamic.resources.get(api_version="v1", kind="Namespace")
    ns.create(body={"metadata": {"name": name}})
    yield name
    try:
        ns.delete(name=name)
    except Exception:
        pass

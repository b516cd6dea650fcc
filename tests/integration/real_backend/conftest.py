"""Tests against the real control plane: most fixtures live in tests/integration/conftest.py; here, the cluster of
their own that the tests serving with the real Dynamo runtime start."""

from __future__ import annotations

import uuid

import pytest
from deploy_helpers import write_inventory


@pytest.fixture
def runtime_cluster(tmp_path, monkeypatch):
    """``runtime_cluster(prefix, scrape_s, nodes=None)`` -> (cluster, dynamic client, namespace, inventory): a real
    control plane of the test's own whose serving pods run the real Dynamo runtime (KUBESIM_MODEL_SERVERS=dynamo,
    not the default yet: docs/dynamo-runtime.md), with a Prometheus scraping every ``scrape_s`` seconds."""
    from kubesim.control_plane.cluster import MODEL_SERVERS_ENV
    from kubesim.rehearsal import QUICK, start_rehearsal

    started = []

    def start(prefix: str, scrape_s: float, nodes: str | None = None):
        monkeypatch.setenv(MODEL_SERVERS_ENV, "dynamo")
        cs = start_rehearsal(1, backend="real", state_dir=tmp_path / "cluster", prometheus=scrape_s,
                             **({"nodes": nodes} if nodes else {}), **QUICK)
        started.append(cs)
        cluster = cs[0]
        ns = f"{prefix}-{uuid.uuid4().hex[:8]}"
        return cluster, cluster.dynamic(), ns, write_inventory(tmp_path / "inv.yml", cluster.kubeconfig,
                                                               cluster.context, ns)

    yield start
    for cs in started:
        cs.stop()

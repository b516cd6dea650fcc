"""The rehearsal keeps the kubernetes client's discovery cache with the cluster, on both backends: left to its
default, every client wrote one file per API server address to the host's temporary directory, and a rehearsal
cluster gets a new port each time it starts, so each cluster of each run left a file there for good."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import pytest

from kubesim.dynamic_client import discovery_cache_file

pytestmark = pytest.mark.cluster

# before the session's clusters start: their stand-ins discover them while they start up
COLLECTED_AT = time.time()


def test_discovery_is_cached_beside_the_clusters_kubeconfig_and_not_in_the_hosts_temporary_directory(
        backend_cluster):
    kubeconfig = Path(backend_cluster.kubeconfig)
    dyn = backend_cluster.dynamic()
    assert dyn.resources.get(api_version="v1", kind="Pod")
    assert discovery_cache_file(dyn.client.configuration.host, kubeconfig.parent).is_file()
    if backend_cluster.server:
        # the real backend's own clients (its bootstrap and its stand-ins, which share a file) discovered it as it
        # started: their cache is in the cluster's state directory
        assert discovery_cache_file(dyn.client.configuration.host, kubeconfig.parent / str(backend_cluster.index)
                                    ).is_file()
    # nothing discovered it into the host's temporary directory (a file already there from before this change
    # is read, not written, so only new ones are counted)
    left = [p.name for p in Path(tempfile.gettempdir()).glob("osrcp-*.json") if p.stat().st_mtime >= COLLECTED_AT]
    assert not left, left

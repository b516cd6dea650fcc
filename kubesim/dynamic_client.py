"""The kubernetes client's DynamicClient for the rehearsal, with its discovery cache kept with the cluster.

Left to its default, the client caches discovery in the host's temporary directory, one file per API server
address. A rehearsal cluster listens on a new port each time it starts, so every cluster of every test run left
a file behind there for good (567 on the development machine after a few days). Kept in the cluster's state
directory, the cache goes with the cluster; keyed by address as the client does it, so the clusters of a set
that share a directory do not read each other's."""

from __future__ import annotations

import hashlib
from pathlib import Path


def discovery_cache_file(host: str, cache_dir: str | Path) -> Path:
    return Path(cache_dir) / f"discovery-{hashlib.sha256(host.encode()).hexdigest()[:16]}.json"


def dynamic_client(api_client, cache_dir: str | Path):
    from kubernetes.dynamic import DynamicClient

    return DynamicClient(api_client, cache_file=str(discovery_cache_file(api_client.configuration.host, cache_dir)))

"""The real backend's build and lifecycle: stamped versions, a no-op second build, N clusters in their
own network namespaces, and no process or namespace left behind by a restart or a stop."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kubesim.control_plane import build

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def _recorded_pids(state: Path) -> list[int]:
    return [pid for f in state.glob("*/pids.json") for pid in json.loads(f.read_text()).values()]


def test_servers_and_kubectl_report_the_pinned_release(real_cluster):
    v = build.versions()
    from kubernetes import client

    assert client.VersionApi(real_cluster.api_client()).get_code().git_version == v.kubernetes
    out = subprocess.run([str(build.binaries()["kubectl"]), "--kubeconfig", real_cluster.kubeconfig,
                          "--context", real_cluster.context, "version", "-o", "json"],
                         capture_output=True, text=True, check=True).stdout
    versions = json.loads(out)
    assert versions["clientVersion"]["gitVersion"] == v.kubernetes
    assert versions["serverVersion"]["gitVersion"] == v.kubernetes


def test_the_replace_list_is_what_the_pinned_release_replaces():
    v = build.versions()
    upstream = build.parse_staging_replaces(build.kubernetes_gomod(v.kubernetes))
    ours = re.findall(r"^\t(\S+) => \S+ v\S+$", (build.GOMOD_DIR / "go.mod").read_text(), re.M)
    assert sorted(ours) == upstream
    assert {"k8s.io/api", "k8s.io/apimachinery", "k8s.io/streaming", "k8s.io/cri-streaming"} <= set(ours)


def test_a_second_build_does_nothing_and_says_so():
    out = subprocess.run([sys.executable, "-m", "kubesim.control_plane", "build"], cwd=REPO, capture_output=True,
                         text=True, timeout=60, check=True).stdout
    assert "already built" in out and "nothing to do" in out


def test_three_clusters_restart_and_stop_without_orphans(tmp_path):
    import kubesim

    state = tmp_path / "three"
    cs = kubesim.start(3, backend="real", state_dir=state)
    assert [c.context for c in cs] == ["kubesim-0", "kubesim-1", "kubesim-2"]
    assert len({c.base_url for c in cs}) == 3
    first = _recorded_pids(state)
    assert len(first) == 15 and all(_alive(p) for p in first)       # etcd, 3 control-plane servers, kwok each
    spaces = [c["netns"] for c in cs.info["clusters"]]
    for name in spaces:
        inside = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True, check=True).stdout
        # the same five and the Dynamo operator (its pod's process)
        assert len(inside.split()) == 6
    nodes = cs[1].dynamic().resources.get(api_version="v1", kind="Node").get().to_dict()["items"]
    assert all(any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"]["conditions"]) for n in nodes)

    again = kubesim.start(3, backend="real", state_dir=state)
    assert not any(_alive(p) for p in first), "the first start left processes behind"
    second = _recorded_pids(state)
    again.stop()
    assert not any(_alive(p) for p in second)
    assert not any(os.path.exists(f"/run/netns/{n}") for n in spaces)
    assert not (state / "kubesim.pid").exists()

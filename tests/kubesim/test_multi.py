"""Several clusters in one daemon; start/stop/status from the command line; restart without orphans."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from kubernetes import config
from kubernetes.client import CoreV1Api

pytestmark = pytest.mark.cluster
REPO = Path(__file__).resolve().parents[2]


def cli(*args, state):
    return subprocess.run([sys.executable, "-m", "kubesim", *args, "--state-dir", str(state)], cwd=REPO,
                          capture_output=True, text=True, timeout=90)


def test_three_clusters_cli(tmp_path):
    state = tmp_path / "ks"
    out = cli("start", "--clusters", "3", "--nodes", "gb300:2,gb200:2,mi355x:1,b200:1",
              "--storage-classes", "shared-rwx:RWX", state=state)
    assert out.returncode == 0, out.stderr
    try:
        kc = yaml.safe_load((state / "kubeconfig").read_text())
        assert kc["current-context"] == "kubesim-0"
        assert [c["name"] for c in kc["contexts"]] == ["kubesim-0", "kubesim-1", "kubesim-2"]
        servers = [c["cluster"]["server"] for c in kc["clusters"]]
        assert all(s.startswith("http://127.0.0.1:") for s in servers) and len(set(servers)) == 3
        assert kc["users"][0]["user"]["token"]
        pid1 = int((state / "kubesim.pid").read_text())
        for i in range(3):
            core = CoreV1Api(config.new_client_from_config(config_file=str(state / "kubeconfig"),
                                                           context=f"kubesim-{i}"))
            core.create_namespace({"metadata": {"name": f"only-in-{i}"}})
            names = {n.metadata.name for n in core.list_namespace().items}
            assert f"only-in-{i}" in names and not any(f"only-in-{j}" in names for j in range(3) if j != i)
            assert len(core.list_node().items) == 6
        st = cli("status", state=state)
        assert st.returncode == 0 and st.stdout.count("kubesim-") >= 3
        # starting again replaces the old daemon (no orphan)
        out = cli("start", "--clusters", "1", state=state)
        assert out.returncode == 0, out.stderr
        pid2 = int((state / "kubesim.pid").read_text())
        assert pid2 != pid1
        assert not Path(f"/proc/{pid1}").exists() or "Z" in Path(f"/proc/{pid1}/stat").read_text().split(")")[-1][:3]
    finally:
        cli("stop", state=state)
    assert not (state / "kubesim.pid").exists()
    assert cli("status", state=state).returncode == 3


def test_python_api_and_crd_dir(tmp_path):
    import kubesim
    from kubesim.rehearsal import SHARED_CRDS

    crd_dir = os.environ.get("KUBESIM_REAL_CRDS", str(SHARED_CRDS))
    if not Path(crd_dir).is_dir():
        pytest.skip(f"the real Dynamo CRDs are not beside the project ({crd_dir})")
    with kubesim.start(2, state_dir=tmp_path / "ks", crd_dir=crd_dir, nodes="b200:1", rdma=False) as cs:
        assert len(cs) == 2 and cs[1].context == "kubesim-1"
        dyn = cs[1].dynamic()
        dgd = dyn.resources.get(api_version="nvidia.com/v1beta1", kind="DynamoGraphDeployment")
        from kubernetes.dynamic.exceptions import ApiException

        with pytest.raises(ApiException) as e:  # the real schema: topologyConstraint needs clusterTopologyName
            dgd.create(namespace="default", body={"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
                                                  "metadata": {"name": "x"},
                                                  "spec": {"components": [{"name": "W", "replicas": -1}]}})
        assert e.value.status == 422 and "spec.components[0].replicas" in e.value.body
        dcd = dyn.resources.get(api_version="nvidia.com/v1beta1", kind="DynamoComponentDeployment")
        assert dcd.get(namespace="default").items == []
        node = CoreV1Api(cs[0].api_client()).list_node().items[0]
        assert "rdma/ib" not in node.status.allocatable

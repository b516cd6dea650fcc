"""The Hugging Face token never shows: not at -vvv, not in the API server's (kubesim daemon) log."""

import base64
import uuid
from pathlib import Path

import pytest
from deploy_helpers import get

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


def test_hf_token_never_appears_at_vvv(deploy_env):
    token = f"hf_SENTINEL{uuid.uuid4().hex}"
    env = deploy_env(hf_token=token)
    run = env.run("deploy.yml", "-vvv", "-e", "sku=gb300", "-e", "mode=agg")
    assert run.rc == 0, run.output[-3000:]
    # really verbose (the collection's modules run in the controller's worker: no connection is established
    # for them, so the connection's own -vvv line may not appear)
    assert "ansible-playbook [core" in run.output and "task path:" in run.output
    assert token not in run.stdout
    assert token not in run.stderr
    assert base64.b64encode(token.encode()).decode() not in run.output
    # the token did reach the cluster (so the test can fail)
    secret = get(env.dyn, "v1", "Secret", "hf-token-secret", env.namespace)
    assert base64.b64decode(secret["data"]["HF_TOKEN"]).decode() == token
    state = Path(env.cluster.kubeconfig).parent
    daemon_log = (state / "daemon.log").read_text(errors="replace")
    assert daemon_log, "empty daemon log"
    assert token not in daemon_log
    for f in (state / "0" / "logs").rglob("*"):
        if f.is_file():
            assert token not in f.read_text(errors="replace"), f"token in {f}"

"""Hostile input is refused by the plan before anything renders, and an inline kubeconfig's secrets never print.

The first tests are the security review's own probes (shared/reference/security-review.md, findings 1, 2 and 12):
they need no cluster, since the plan refuses before one is reached. The unreachable-cluster tests point an inline
kubeconfig (the fleet and AWX pattern) at a closed port of 127.0.0.1, and look for its token and key everywhere a
user or AWX would see them: stdout and stderr at -vvv, and every file the run wrote under results/.
"""

import base64
import json
import socket
import uuid

import pytest
import yaml

# The weights pinned (a deploy of unpinned ones is refused by the plan, before any cluster is reached)
PIN = ["-e", "checkpoint_revision=0123456789abcdef0123456789abcdef01234567"]


def test_the_reviews_injections_are_all_refused_at_once(playbook, tmp_path):
    run = playbook("plan.yml", "-e", "sku=gb300", "-e", "mode=agg", "-e", f"render_dir={tmp_path / 'out'}",
                   "-e", json.dumps({"checkpoint_repo": "a/b; touch /tmp/x #", "draft_repo": "x/$(id)",
                                     "k8s_namespace": "Bad Name;x", "engine_image": "nvcr.io/x:1 $(id)",
                                     "storage_class": "rwx;id",
                                     "model_cache_source": {"type": "s3", "bucket": "s3://b$(touch /model/pwned)",
                                                            "secret": "s3-creds"},
                                     "benchmark_aiperf_extra_args": "--foo; id"}))
    assert run.rc != 0
    for rule in ("invalid-checkpoint-repo", "invalid-draft-repo", "invalid-image", "invalid-k8s-namespace",
                 "invalid-storage-class", "invalid-model-cache-source", "invalid-benchmark-aiperf-extra-args"):
        assert f"[{rule}]" in run.output, rule
    assert "Plan refused: 7 rules broken" in run.output
    assert "Valid: a Hub repository id org/name" in run.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", ["org/name", "meta-models/Muse-Spark-Open-816B-A42B-NVFP4", "a.b/c_d-1"])
def test_well_formed_repositories_plan(playbook, value):
    run = playbook("plan.yml", "-e", "sku=gb300", "-e", "mode=agg", "-e", f"checkpoint_repo={value}", *PIN)
    assert run.rc == 0, run.output[-2000:]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def unreachable_inventory(tmp_path):
    """An inventory of one cluster whose inline kubeconfig holds a token and a client key, pointing at a port
    nothing listens on; the secrets, and their base64 forms, to look for."""
    token = f"tok-SENTINEL-{uuid.uuid4().hex}"
    key = f"KEY-SENTINEL-{uuid.uuid4().hex}"
    key_data = base64.b64encode(key.encode()).decode()
    kubeconfig = {
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": f"https://127.0.0.1:{_closed_port()}",
                                               "insecure-skip-tls-verify": True}}],
        "users": [{"name": "u", "user": {"token": token, "client-key-data": key_data}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
    }
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {"dynamo_clusters": {"hosts": {"far-away": {
        "ansible_connection": "local", "cluster_kubeconfig": kubeconfig, "cluster_context": "c",
        "k8s_namespace": "muse"}}}}}}))
    return inventory, [token, key, key_data]


@pytest.mark.parametrize("name, extra", [
    ("deploy.yml", ["-e", "sku=gb300", "-e", "mode=agg", *PIN]),
    ("status.yml", []),
    ("rollout.yml", ["-e", "sku=gb300", "-e", "mode=agg", *PIN]),
])
def test_an_unreachable_cluster_never_prints_its_inline_kubeconfig(playbook, unreachable_inventory, tmp_path,
                                                                   name, extra):
    inventory, secrets = unreachable_inventory
    results = tmp_path / "results"
    run = playbook(name, "-vvv", "-i", str(inventory), *extra, "-e", f"rollout_results_dir={results}",
                   "-e", f"release_results_dir={results}", "-e", f"benchmark_results_dir={results}")
    # status reports an unreachable cluster as a row and succeeds; deploy and rollout fail
    assert (run.rc == 0) == (name == "status.yml"), run.output[-3000:]
    # it did reach for the cluster and failed there (so the secrets were in play)
    assert "Connection refused" in run.output
    written = [p for p in results.rglob("*") if p.is_file()] if results.exists() else []
    for secret in secrets:
        assert secret not in run.stdout and secret not in run.stderr, name
        for path in written:
            assert secret not in path.read_text(errors="replace"), path
    if name == "deploy.yml":
        assert "unreachable or refused the credentials" in run.output
        assert "an inline kubeconfig (its content is not shown)" in run.output
    if name == "rollout.yml":
        assert written, "the rollout writes its summary even when a cluster fails"

"""inventories/example: loads offline, every cluster is reachable by name and plans to a valid target."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import KNOWN, build_plan
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.errors import PlanError

REPO = Path(__file__).resolve().parents[2]
INVENTORY = REPO / "inventories" / "example"
BIN = Path(sys.executable).parent
# What the example leaves to its user (commented out in group_vars/sku_*): the repositories the sources do not name,
# and the commit of the weights to download (the sources publish none; a deploy refuses unpinned weights).
PLACEHOLDER_REPOS = {"placeholder-checkpoint": ("checkpoint_repo", "example-org/checkpoint"),
                     "placeholder-draft": ("draft_repo", "example-org/draft"),
                     "unpinned-weights": ("checkpoint_revision", "0123456789abcdef0123456789abcdef01234567")}


def ansible_inventory(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1"}
    return subprocess.run([str(BIN / "ansible-inventory"), "-i", str(INVENTORY), *args], capture_output=True,
                          text=True, env=env, cwd=REPO, timeout=120, check=False)


@pytest.fixture(scope="module")
def inventory() -> dict:
    run = ansible_inventory("--list")
    assert run.returncode == 0, run.stderr
    assert "WARNING" not in run.stderr, run.stderr
    return json.loads(run.stdout)


def group_hosts(inv: dict, group: str) -> set[str]:
    hosts = set(inv.get(group, {}).get("hosts", []))
    for child in inv.get(group, {}).get("children", []):
        hosts |= group_hosts(inv, child)
    return hosts


def clusters(inv: dict) -> list[str]:
    return sorted(group_hosts(inv, "dynamo_clusters"))


def test_graph_works_offline():
    run = ansible_inventory("--graph")
    assert run.returncode == 0, run.stderr
    assert "@dynamo_clusters" in run.stdout and "@canary" in run.stdout


def test_one_site_and_one_sku_group_per_cluster(inventory):
    hosts = clusters(inventory)
    assert hosts == ["gb200-iad-2", "gb300-iad-1", "mi355x-ord-1"]
    children = inventory["dynamo_clusters"]["children"]
    for host in hosts:
        sites = [g for g in children if g.startswith("site_") and host in group_hosts(inventory, g)]
        skus = [g for g in children if g.startswith("sku_") and host in group_hosts(inventory, g)]
        assert len(sites) == 1 and len(skus) == 1, (host, sites, skus)
        assert inventory["_meta"]["hostvars"][host]["sku"] == skus[0].removeprefix("sku_")
    assert group_hosts(inventory, "canary") and group_hosts(inventory, "canary") <= set(hosts)


def test_every_cluster_has_a_kubeconfig_and_context(inventory):
    for host in clusters(inventory):
        hostvars = inventory["_meta"]["hostvars"][host]
        assert hostvars.get("cluster_kubeconfig"), host
        assert hostvars.get("cluster_context") == host
        assert hostvars["ansible_connection"] == "local"


def test_hf_token_comes_from_the_vault_file(inventory):
    vault = (INVENTORY / "group_vars" / "dynamo_clusters" / "vault.yml").read_text()
    assert "ansible-vault encrypt" in vault
    assert yaml.safe_load(vault)["vault_hf_token"].startswith("hf_REPLACE_ME")
    for host in clusters(inventory):
        assert inventory["_meta"]["hostvars"][host]["hf_token"] == "{{ vault_hf_token }}"


def plan_for(hostvars: dict) -> dict:
    """build_plan as a deploy plans (it downloads the weights) with the host's plan inputs, naming placeholder
    repositories where the catalog has none and pinning the weights, as the example's comments ask."""
    request = {k: v for k, v in hostvars.items() if k in KNOWN}
    for _ in PLACEHOLDER_REPOS:
        try:
            return build_plan(request, downloads_weights=True)
        except PlanError as exc:
            if exc.rule not in PLACEHOLDER_REPOS or PLACEHOLDER_REPOS[exc.rule][0] in request:
                raise
            key, value = PLACEHOLDER_REPOS[exc.rule]
            request[key] = value
    return build_plan(request, downloads_weights=True)


@pytest.mark.parametrize("host", ["gb300-iad-1", "gb200-iad-2", "mi355x-ord-1"])
def test_every_cluster_plans_to_a_target(inventory, host):
    hostvars = inventory["_meta"]["hostvars"][host]
    plan = plan_for(hostvars)
    target = plan["target"]
    assert (target["sku"], target["mode"]) == (hostvars["sku"], hostvars["mode"])
    assert target["framework"] == hostvars["framework"]

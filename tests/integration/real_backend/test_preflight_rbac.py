"""Preflight against real RBAC: a namespace-scoped deployer (the built-in `edit` role in team-a, plus
read access to nodes and storage classes) learns exactly what it lacks, from the real API server's
SelfSubjectAccessReviews, and nothing is created; cluster-admin credentials pass."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from deploy_helpers import TARGET_ARGS, write_inventory

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
PREFLIGHT_VARS = yaml.safe_load((REPO / "roles" / "preflight" / "vars" / "main.yml").read_text())
PREFLIGHT_ONLY = Path(__file__).with_name("preflight_only.yml")
NAMESPACED_KINDS = [("v1", "Secret"), ("v1", "PersistentVolumeClaim"), ("batch/v1", "Job"), ("v1", "Pod"),
                    ("v1", "Service"), ("nvidia.com/v1beta1", "DynamoGraphDeployment")]


def _checks(runtime: str, compute_domain: bool) -> list[dict]:
    checks = PREFLIGHT_VARS["preflight_access_namespace"] + PREFLIGHT_VARS["preflight_access_common"] + PREFLIGHT_VARS[
        "preflight_access_dynamo" if runtime == "dynamo" else "preflight_access_standalone"]
    return checks + (PREFLIGHT_VARS["preflight_access_compute_domain"] if compute_domain else [])


def _denied_by_the_api_server(team_dyn, namespace: str, checks: list[dict]) -> list[str]:
    """Ask the real API server, as the deployer, each question the preflight asks."""
    ssar = team_dyn.resources.get(api_version="authorization.k8s.io/v1", kind="SelfSubjectAccessReview")
    denied = []
    for c in checks:
        attrs = {"namespace": c.get("namespace", namespace), "verb": c["verb"], "group": c["group"],
                 "resource": c["resource"], **({"subresource": c["subresource"]} if c.get("subresource") else {})}
        answer = ssar.create(body={"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                                   "spec": {"resourceAttributes": attrs}}).to_dict()
        if not answer["status"]["allowed"]:
            res = c["resource"] + (f"/{c['subresource']}" if c.get("subresource") else "")
            denied.append(f"{c['verb']} {res}" + (f".{c['group']}" if c["group"] else ""))
    return denied


def _snapshot(dyn, namespace: str) -> dict:
    return {kind: sorted(o["metadata"]["name"] for o in dyn.resources.get(api_version=av, kind=kind)
                         .get(namespace=namespace).to_dict()["items"])
            for av, kind in NAMESPACED_KINDS}


@pytest.mark.parametrize(("target", "compute_domain"), [("sglang-agg-gb300", False), ("sglang-disagg-gb200", True)])
def test_namespace_scoped_user_learns_exactly_what_it_lacks(real_cluster, real_dyn, team_dyn, tmp_path, playbook,
                                                            target, compute_domain):
    ns = "team-a"
    # team-a exists (the platform team made it): creating namespaces is not needed, so not asked for.
    expected = [d for d in _denied_by_the_api_server(team_dyn, ns, _checks("dynamo", compute_domain))
                if d != "create namespaces"]
    assert expected
    before = _snapshot(real_dyn, ns)
    inv = write_inventory(tmp_path / "team.yml", real_cluster.kubeconfig, real_cluster.team_context, ns,
                          hf_token="hf_rehearsal_not_a_token")
    run = playbook("deploy.yml", "-i", str(inv), *TARGET_ARGS[target])

    assert run.rc != 0
    assert f"These credentials may not {', '.join(expected)} in namespace {ns}" in " ".join(run.stdout.split()), \
        run.stdout[-3000:]
    assert run.recap("rehearsal")["changed"] == 0
    assert _snapshot(real_dyn, ns) == before, "preflight created or removed something"


def test_namespace_scoped_user_is_told_why_a_namespace_outside_its_roles_fails(real_cluster, tmp_path, playbook_at):
    """The real API server answers 403 (not 404) for a namespace the user holds no Role in."""
    inv = write_inventory(tmp_path / "team.yml", real_cluster.kubeconfig, real_cluster.team_context, "team-b")
    run = playbook_at(PREFLIGHT_ONLY, "-i", str(inv), *TARGET_ARGS["sglang-agg-gb300"])
    assert run.rc != 0
    out = " ".join(run.stdout.split())
    assert "These credentials may not read namespace team-b on rehearsal" in out
    assert "ask a cluster admin to create team-b and bind a Role there granting: create secrets" in out
    assert "create dynamographdeployments.nvidia.com" in out
    assert "is unreachable or refused the credentials" not in out


def test_namespace_scoped_user_passes_preflight_for_kinds_edit_covers(real_cluster, tmp_path, playbook_at):
    """Standalone vLLM needs only core kinds, Jobs and Deployments: `edit` in an existing namespace is enough."""
    inv = write_inventory(tmp_path / "team.yml", real_cluster.kubeconfig, real_cluster.team_context, "team-a")
    run = playbook_at(PREFLIGHT_ONLY, "-i", str(inv), *TARGET_ARGS["vllm-agg-b200"])
    assert run.rc == 0, run.output[-4000:]
    assert run.recap("rehearsal")["changed"] == 0


def test_dynamo_kinds_are_what_edit_lacks(team_dyn):
    """The facts the test above relies on, stated: `edit` covers the core kinds, not the Dynamo ones."""
    denied = _denied_by_the_api_server(team_dyn, "team-a", _checks("dynamo", True))
    assert denied == ["create namespaces", "create dynamographdeployments.nvidia.com",
                      "patch dynamographdeployments.nvidia.com", "create computedomains.resource.nvidia.com"]


def test_cluster_admin_passes_preflight(real_cluster, real_dyn, tmp_path, playbook_at):
    ns = "preflight-admin"
    inv = write_inventory(tmp_path / "admin.yml", real_cluster.kubeconfig, real_cluster.context, ns)
    run = playbook_at(PREFLIGHT_ONLY, "-i", str(inv), "-e", "sku=gb200", "-e", "mode=disagg",
                      "-e", "rdma_provider=infiniband")
    assert run.rc == 0, run.output[-4000:]
    assert run.recap("rehearsal")["changed"] == 0


def test_autoscaling_asks_for_the_planners_role_which_edit_does_not_grant(real_cluster, tmp_path, playbook_at):
    """The planner's Role and RoleBinding are RBAC objects: `edit` may not write them (escalation), so a
    namespace-scoped deployer learns it before anything is applied; its ServiceAccount `edit` may create."""
    inv = write_inventory(tmp_path / "team.yml", real_cluster.kubeconfig, real_cluster.team_context, "team-a")
    run = playbook_at(PREFLIGHT_ONLY, "-i", str(inv), *TARGET_ARGS["sglang-agg-gb300"], "-e", "autoscaling=advisory")
    assert run.rc != 0
    out = " ".join(run.stdout.split())
    for denied in ("create roles.rbac.authorization.k8s.io", "patch roles.rbac.authorization.k8s.io",
                   "create rolebindings.rbac.authorization.k8s.io"):
        assert denied in out, out[-3000:]
    assert "serviceaccounts" not in out.split("These credentials may not")[1].split("in namespace")[0]

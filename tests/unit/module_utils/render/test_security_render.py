"""What the rendered objects let in and run as: NetworkPolicies, the workers' user and mounts, the benchmark Job's
placement and options (the real API server's verdict on Pod Security is tests/integration/real_backend)."""

import os
import subprocess
from pathlib import Path

import yaml

from ansible_collections.inferops.dynamo.plugins.module_utils import naming
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.summary import plan_report
from ansible_collections.inferops.dynamo.plugins.module_utils.render import objects as render

REPO = Path(__file__).resolve().parents[4]


def _policies(plan):
    return {p["metadata"]["name"].removeprefix(plan["name"] + "-"): p["spec"]
            for p in render.serving_objects(plan, "muse") if p["kind"] == "NetworkPolicy"}


def _worker(plan):
    graph = render.dynamo_graph_deployment(plan, "muse")
    return next(c for c in graph["spec"]["components"] if c["name"] == "Worker")["podTemplate"]["spec"]


def test_the_endpoint_admits_its_namespace_the_named_clients_and_monitoring_and_workers_only_their_graph():
    plan = build_plan({"sku": "gb300", "mode": "agg", "autoscaling": "advisory", "monitoring_namespace": "obs",
                       "network_policy_clients": [{"namespace": "apps"}, {"pod_labels": {"role": "client"}}]})
    policies = _policies(plan)
    assert set(policies) == {"frontend", "workers", "planner"}
    frontend = policies["frontend"]
    assert frontend["podSelector"]["matchLabels"] == {naming.DGD_LABEL: plan["name"],
                                                      naming.COMPONENT_TYPE_LABEL: "frontend"}
    assert frontend["ingress"][0]["from"] == [
        {"podSelector": {}},
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "apps"}}},
        {"podSelector": {"matchLabels": {"role": "client"}}},
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "obs"}}}]
    workers = policies["workers"]
    assert workers["ingress"][0]["from"][0] == {"podSelector": {"matchLabels": {naming.DGD_LABEL: plan["name"]}}}
    assert all("podSelector" not in peer or peer["podSelector"]["matchLabels"] == {naming.DGD_LABEL: plan["name"]}
               for peer in workers["ingress"][0]["from"])
    assert policies["planner"]["ingress"] == [
        {"from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "obs"}}}]}]
    assert all(p["policyTypes"] == ["Ingress"] for p in policies.values())


def test_network_policies_can_be_turned_off_and_the_plan_says_what_is_open():
    plan = build_plan({"sku": "gb300", "mode": "agg", "network_policy": False})
    assert _policies(plan) == {}
    assert any("no NetworkPolicy" in line for line in plan_report(plan))


def test_workers_run_as_root_by_default_without_the_token_and_read_the_weights_read_only():
    plan = build_plan({"sku": "gb300", "mode": "agg"})
    main = _worker(plan)["containers"][0]
    assert main["securityContext"]["runAsUser"] == 0 and "runAsNonRoot" not in main["securityContext"]
    assert "envFrom" not in main
    weights, compile_cache = main["volumeMounts"]
    assert weights == {"name": "model-cache", "mountPath": "/model", "readOnly": True}
    assert compile_cache == {"name": "model-cache", "mountPath": "/compile-cache", "subPath": "compile-cache"}
    assert plan["pod_security"]["workers"] == "baseline (runs as root)"

    as_1000 = build_plan({"sku": "gb300", "mode": "agg", "worker_run_as_user": 1000})
    context = _worker(as_1000)["containers"][0]["securityContext"]
    assert (context["runAsUser"], context["runAsGroup"], context["runAsNonRoot"]) == (1000, 1000, True)
    assert as_1000["pod_security"]["workers"] == "baseline (runs as uid 1000)"


def _aiperf(plan):
    return render.aiperf_job(plan, "muse", run_id="r", concurrency=4, request_count=8, image="aiperf:0.13.0",
                             deadline_s=600)


def test_the_benchmark_runs_beside_the_frontend_with_http_traces_and_open_files():
    for request, labels in (({"sku": "gb300", "mode": "agg"}, {naming.COMPONENT_TYPE_LABEL: "frontend"}),
                            ({"sku": "mi355x", "mode": "agg", "checkpoint_repo": "o/m"}, {})):
        plan = build_plan(request)
        pod = _aiperf(plan)["spec"]["template"]["spec"]
        term = pod["affinity"]["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"]
        assert term["topologyKey"] == "kubernetes.io/hostname"
        assert labels.items() <= term["labelSelector"]["matchLabels"].items()
        assert plan["name"] in term["labelSelector"]["matchLabels"].values()
    script = _aiperf(build_plan({"sku": "gb300", "mode": "agg"}))["spec"]["template"]["spec"]["containers"][0]
    # per-request HTTP timings, as upstream's perf Jobs: the benchmark role's default extra argument
    defaults = yaml.safe_load((REPO / "roles" / "benchmark" / "defaults" / "main.yml").read_text())
    assert defaults["benchmark_aiperf_extra_args"] == ["--export-http-trace"]
    # the open-file limit is raised as far as the container allows, and a refusal does not stop the Job
    ulimit = next(line for line in script["command"][2].splitlines() if line.startswith("ulimit -n"))
    done = subprocess.run(["sh", "-c", f"{ulimit}; ulimit -n; ulimit -Hn"], capture_output=True, text=True,
                          check=True, env={"PATH": os.environ["PATH"]})
    soft, hard = done.stdout.split()
    assert soft == hard


def test_the_tokenizer_trusts_remote_code_only_with_the_workers():
    commit = "0123456789abcdef0123456789abcdef01234567"
    trusting = build_plan({"sku": "gb300", "mode": "agg", "trust_remote_code": True, "checkpoint_revision": commit})
    env = {e["name"] for e in _aiperf(trusting)["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert "TOKENIZER_TRUST_REMOTE_CODE" in env and "--trust-remote-code" in trusting["workers"][0]["args"]
    plain = build_plan({"sku": "gb300", "mode": "agg"})
    env = {e["name"] for e in _aiperf(plain)["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert "TOKENIZER_TRUST_REMOTE_CODE" not in env and "--trust-remote-code" not in plain["workers"][0]["args"]

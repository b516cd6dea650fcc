"""The AIPerf Job follows the recipe and validates as a Kubernetes Job."""

import os
import subprocess

import kubernetes_validate

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan
from ansible_collections.inferops.dynamo.plugins.module_utils.render import objects as render


def job(**overrides):
    plan = build_plan({"sku": "gb300", "mode": "kv-router"})
    args = {"run_id": "20261129T120000Z-c20", "concurrency": 20, "request_count": 3541,
            "image": "nvcr.io/nvidia/ai-dynamo/aiperf:0.13.0", "deadline_s": 4200, **overrides}
    return plan, render.aiperf_job(plan, "muse", **args)


def env(j):
    return {e["name"]: e["value"] for e in j["spec"]["template"]["spec"]["containers"][0]["env"]}


def test_job_replays_the_trace_like_the_recipe():
    plan, j = job()
    kubernetes_validate.validate(j, "1.33.0", strict=True)
    assert j["metadata"]["name"] == plan["benchmark"]["job"] == f"{plan['name']}-aiperf"
    assert j["spec"]["activeDeadlineSeconds"] == 4200
    script = j["spec"]["template"]["spec"]["containers"][0]["command"][2]
    assert "--custom-dataset-type mooncake_trace" in script
    assert "--streaming" in script
    assert '--concurrency "$CONCURRENCY"' in script
    assert '--request-count "$WARMUP_REQUESTS"' in script and "--concurrency 1" in script
    assert "=== AIPERF SUMMARY BEGIN ===" in script
    e = env(j)
    assert e["ENDPOINT"] == "muse-spark-sglang-aggregate-gb300-kv-frontend:8000"
    assert e["TRACE_FILE"] == "/model-cache/agentic.jsonl"
    assert e["TARGET_MODEL"] == plan["model"]["served_model_name"]
    assert (e["CONCURRENCY"], e["REQUEST_COUNT"], e["WARMUP_REQUESTS"]) == ("20", "3541", "5")
    assert e["HF_HOME"] == "/model-cache" and e["HF_HUB_OFFLINE"] == "1"
    mounts = j["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]
    assert mounts == [{"name": "model-cache", "mountPath": "/model-cache"}]


def test_artifacts_go_to_a_per_run_directory_and_extra_args_pass_through():
    _, j = job(extra_args=["--no-gpu-telemetry", "--extra-inputs", "a b; id"], workers_max=2)
    e = env(j)
    assert e["RUN_ID"] == "20261129T120000Z-c20" and e["ROOT_ARTIFACT_DIR"] == "/model-cache/perf"
    assert e["WORKERS_MAX"] == "2"
    # each extra argument stays one argument of both runs, never shell text
    assert "--no-gpu-telemetry" not in j["spec"]["template"]["spec"]["containers"][0]["command"][2]
    for args in _aiperf_arguments(j):
        assert args[-4:-1] == ["--no-gpu-telemetry", "--extra-inputs", "a b; id"]


def test_each_target_has_its_own_job():
    _, a = job()
    plan_b = build_plan({"sku": "gb300", "mode": "agg"})
    b = render.aiperf_job(plan_b, "muse", run_id="r", concurrency=1, request_count=1, image="i", deadline_s=60)
    assert a["metadata"]["name"] != b["metadata"]["name"]


def _aiperf_arguments(j):
    """What each ``aiperf profile`` line of the Job's script passes, expanded by sh with the Job's environment."""
    container = j["spec"]["template"]["spec"]["containers"][0]
    lines = [line for line in container["command"][2].splitlines() if line.startswith("aiperf profile")]
    environment = {"PATH": os.environ["PATH"], **env(j), "RUN_DIR": "/run"}
    return [subprocess.run(["sh", "-c", line.replace("aiperf profile", "printf '%s\\n'", 1).split(" || ")[0],
                            *container["command"][3:], *container.get("args", [])],
                           env=environment, capture_output=True, text=True, check=True).stdout.split("\n")
            for line in lines]


def test_a_request_rate_ceiling_reaches_the_warm_up_and_the_replay_and_none_leaves_the_recipe_alone():
    with_ceiling = _aiperf_arguments(job(request_rate_ceiling=200)[1])
    assert len(with_ceiling) == 2
    for args in with_ceiling:
        at = args.index("--request-rate")
        assert args[at + 1] == "200" and args[args.index("--arrival-pattern") + 1] == "constant"
    for args in _aiperf_arguments(job()[1]):
        assert "--request-rate" not in args and "--arrival-pattern" not in args
        assert "--concurrency" in args

"""Request migration on the rehearsal's real Dynamo frontend: a worker killed in the middle of a benchmark (the
crashloop fault: its engine process dies at once, with the streams it was serving) costs no failed request where
another worker can take them over, and the benchmark report counts what the frontend moved and what it could not
save.

sglang-kv-router-gb300 serves with two workers. The benchmark replays the trace; once requests stream, one worker
pod is crash-looped for a few seconds. With the plan's migration limit (3) the frontend resumes each cut stream on
the other worker: AIPerf sees every request succeed and the report counts the migrations. With migration_limit=0
the same kill fails the requests the worker held, and the report names them as lost with a worker.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from deploy_helpers import items

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

TARGET = ["-e", "sku=gb300", "-e", "mode=kv-router"]
FRONTEND = "muse-spark-sglang-aggregate-gb300-kv-frontend"
BENCH = ["-e", "benchmark_warmup_requests=0", "-e", "benchmark_request_count=60", "-e", "benchmark_tolerance=10"]


def _words(text: str) -> str:
    """The output with its line wrapping undone (the callback folds long lines)."""
    return " ".join(text.split())


def _frontend_metrics(dyn, ns: str) -> str:
    from kubernetes import client

    return client.CoreV1Api(dyn.client).connect_get_namespaced_service_proxy_with_path(f"{FRONTEND}:8000", ns,
                                                                                        "metrics")


def _sum(metrics: str, name: str, *matchers: str) -> float:
    """The sum of a series' samples (all label sets carrying ``matchers``)."""
    return sum(float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
               if (line.startswith(name + "{") or line.startswith(name + " ")) and all(m in line for m in matchers))


def _migrations(env) -> dict[str, float]:
    """The frontend's own count of migrations by outcome, since it started."""
    metrics = _frontend_metrics(env.dyn, env.namespace)
    return {o: _sum(metrics, "dynamo_frontend_model_migration_duration_seconds_count", f'outcome="{o}"')
            for o in ("success", "failure")}


def _kill_one_worker_mid_run(env, run: dict, seconds: float = 4.0) -> str:
    """Once requests stream, crash-loop one worker pod for ``seconds`` (its engine dies at once); the pod's name."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and "done" not in run:
        try:
            streaming = _sum(_frontend_metrics(env.dyn, env.namespace), "dynamo_frontend_inflight_requests")
        except Exception:
            streaming = 0
        if streaming >= 4:
            break
        time.sleep(0.5)
    assert "done" not in run, "the benchmark ended before any request streamed"
    time.sleep(2)          # the streams run a few tokens: the cut ones have output to resume from
    workers = sorted(p["metadata"]["name"] for p in items(env.dyn, "v1", "Pod", env.namespace,
                                                          "nvidia.com/dynamo-component-type=worker"))
    assert len(workers) == 2, workers
    env.cluster.fault("crashloop", pattern=workers[0])
    time.sleep(seconds)
    env.cluster.clear_faults()
    return workers[0]


def _benchmark_with_a_killed_worker(env, results: Path) -> tuple[dict, str, dict]:
    """(summary.json, report.md, the frontend's migrations by outcome during the run) of a benchmark during which
    one worker is killed."""
    run: dict = {}
    before = _migrations(env)

    def bench():
        run["result"] = env.run("benchmark.yml", *TARGET, *BENCH, "-e", f"benchmark_results_dir={results}",
                                timeout=1200)
        run["done"] = True

    thread = threading.Thread(target=bench)
    thread.start()
    try:
        _kill_one_worker_mid_run(env, run)
    finally:
        thread.join()
    after = _migrations(env)
    (summary_file,) = list(results.rglob("summary.json"))
    return (json.loads(summary_file.read_text()), (summary_file.parent / "report.md").read_text(),
            {o: after[o] - before[o] for o in after})


def test_a_worker_killed_mid_benchmark_costs_no_request_the_frontend_can_move(deploy_env, kubesim_factory, tmp_path):
    env = deploy_env(cluster=kubesim_factory(nodes="gb300:2"), prefix="mig")
    deploy = env.run("deploy.yml", *TARGET)
    assert deploy.rc == 0, deploy.output[-4000:]
    assert "--migration-limit 3" in _words(deploy.output)

    summary, report, migrations = _benchmark_with_a_killed_worker(env, tmp_path / "migrated")
    metrics, failures = summary["metrics"], summary["failures"]
    # the kill cut streams in flight (the frontend moved them) and not one request was lost
    assert migrations["success"] > 0 and migrations["failure"] == 0, migrations
    assert metrics["requests_failing"] == 0 and failures["cut_short"] == 0, (metrics, failures)
    assert f"None: all {metrics['requests_total']:.0f} requests succeeded." in report

    # the same kill without migration: every request the frontend could not move is in the report
    off = env.run("deploy.yml", *TARGET, "-e", "migration_limit=0")
    assert off.rc == 0, off.output[-4000:]
    assert "no request migration" in _words(off.output)
    summary, report, migrations = _benchmark_with_a_killed_worker(env, tmp_path / "unsaved")
    failures = summary["failures"]
    unsaved = failures["count"] + failures["cut_short"]
    assert migrations["success"] == 0 and migrations["failure"] > 0, migrations
    assert unsaved == migrations["failure"], (failures, migrations)
    assert "were cut short" in report or "requests failed" in report, report
    assert not summary["gate"]["passed"]             # the error budget counts them

"""The rendered rules pass ``promtool check rules``, and ``promtool test rules`` proves each burn-rate alert fires
on series that break its objective and stays silent on healthy ones (promtool from the Go module proxy)."""

from __future__ import annotations

import subprocess

import pytest
import yaml

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan
from ansible_collections.inferops.dynamo.plugins.module_utils.render import monitoring as mon
from kubesim.control_plane import build

NS = "muse"
TARGETS = {
    "sglang-agg-gb300": {"sku": "gb300", "mode": "agg"},
    "sglang-disagg-gb200": {"sku": "gb200", "mode": "disagg"},
    "vllm-agg-gb300": {"sku": "gb300", "mode": "agg", "framework": "vllm"},
    "vllm-agg-b200": {"sku": "b200", "mode": "agg", "framework": "vllm", "speculative": "none"},
}
MINUTES = 90          # of series before the evaluation: longer than the 1h window


@pytest.fixture(scope="module")
def promtool() -> str:
    return str(build.prometheus_binaries()["promtool"])


def _rule_file(tmp_path, plan, objective):
    rule = mon.prometheus_rule(plan, NS, objective)
    path = tmp_path / "rules.yml"
    path.write_text(yaml.safe_dump({"groups": rule["spec"]["groups"]}, sort_keys=False))
    return rule, path


def _histogram(metric: str, buckets: tuple, per_minute: int, latency_s, extra: str = "") -> list[dict]:
    """Cumulative bucket counters of ``per_minute`` requests a minute that all took ``latency_s``, or that took
    each latency of a list of (requests a minute, latency) pairs."""
    mix = latency_s if isinstance(latency_s, list) else [(per_minute, latency_s)]
    labels = f'namespace="{NS}"' + (f",{extra}" if extra else "")
    series = []
    for le in [*buckets, "+Inf"]:
        inside = sum(n for n, lat in mix if le == "+Inf" or lat <= le)
        le_text = le if le == "+Inf" else f"{le:g}"
        series.append({"series": f'{metric}_bucket{{{labels},le="{le_text}"}}', "values": f"0+{inside}x{MINUTES}"})
    series.append({"series": f"{metric}_count{{{labels}}}", "values": f"0+{sum(n for n, _ in mix)}x{MINUTES}"})
    return series


def _traffic(plan, objective, *, ttft_s, itl_s, error_share) -> list[dict]:
    names = mon.metric_names(plan)
    series = _histogram(names["ttft"], names["ttft_buckets"], 60, ttft_s)
    series += _histogram(names["itl"], names["itl_buckets"], 60, itl_s)
    errors = round(100 * error_share)
    if mon._is_dynamo(plan):
        series += [{"series": f'dynamo_frontend_requests_total{{namespace="{NS}",status="success"}}',
                    "values": f"0+{100 - errors}x{MINUTES}"},
                   {"series": f'dynamo_frontend_requests_total{{namespace="{NS}",status="error"}}',
                    "values": f"0+{errors}x{MINUTES}"}]
    else:
        series += [{"series": f'http_requests_total{{namespace="{NS}",status="2xx"}}', "values": f"0+{100 - errors}x{MINUTES}"},
                   {"series": f'http_requests_total{{namespace="{NS}",status="5xx"}}', "values": f"0+{errors}x{MINUTES}"}]
    return series


def _run_test(promtool, tmp_path, rule_path, series, alerts_firing: dict[str, list[dict]]):
    test = {"rule_files": [str(rule_path)], "evaluation_interval": "30s", "tests": [{
        "interval": "1m", "input_series": series,
        "alert_rule_test": [{"eval_time": f"{MINUTES - 1}m", "alertname": name, "exp_alerts": exp}
                            for name, exp in alerts_firing.items()],
    }]}
    path = tmp_path / "test.yml"
    path.write_text(yaml.safe_dump(test, sort_keys=False))
    return subprocess.run([promtool, "test", "rules", str(path)], capture_output=True, text=True, check=False)


def _expected(rule, name):
    alert = next(r for g in rule["spec"]["groups"] for r in g["rules"] if r.get("alert") == name)
    return [{"exp_labels": alert["labels"], "exp_annotations": alert["annotations"]}]


@pytest.mark.parametrize("key", sorted(TARGETS))
def test_promtool_accepts_the_rules_of_every_target(promtool, tmp_path, key):
    plan = build_plan(TARGETS[key])
    _, path = _rule_file(tmp_path, plan, mon.objectives(plan, {"ttft_ms": 500, "itl_ms": 40}))
    out = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("key", sorted(TARGETS))
def test_each_burn_rate_alert_fires_on_a_broken_objective_and_not_on_a_healthy_service(promtool, tmp_path, key):
    plan = build_plan(TARGETS[key])
    objective = mon.objectives(plan, {"ttft_ms": 500, "itl_ms": 40})
    rule, path = _rule_file(tmp_path, plan, objective)
    title = next(r["alert"] for g in rule["spec"]["groups"] for r in g["rules"] if "alert" in r).split("TTFT")[0]
    burn = [f"{title}{s}Budget{w}" for s in ("TTFT", "ITL", "Error") for w in ("FastBurn", "SlowBurn")]
    healthy = _traffic(plan, objective, ttft_s=0.05, itl_s=0.005, error_share=0.0)
    out = _run_test(promtool, tmp_path, path, healthy, {name: [] for name in burn})
    assert out.returncode == 0, out.stdout + out.stderr
    cases = {"TTFT": {"ttft_s": 5.0, "itl_s": 0.005, "error_share": 0.0},
             "ITL": {"ttft_s": 0.05, "itl_s": 1.0, "error_share": 0.0},
             "Error": {"ttft_s": 0.05, "itl_s": 0.005, "error_share": 0.5}}
    for signal, traffic in cases.items():
        firing = {name: (_expected(rule, name) if name.startswith(f"{title}{signal}Budget") else []) for name in burn}
        out = _run_test(promtool, tmp_path, path, _traffic(plan, objective, **traffic), firing)
        assert out.returncode == 0, f"{signal}: {out.stdout}{out.stderr}"


@pytest.mark.parametrize(("share_over", "firing"), [(0.4, ()), (0.6, ("SlowBurn",)), (0.85, ("SlowBurn", "FastBurn"))])
def test_an_objective_from_the_published_median_tickets_once_half_the_requests_miss_it_and_pages_at_three_in_four(
        promtool, tmp_path, share_over, firing):
    """Without benchmark_slo the TTFT objective is the published median + tolerance (gb300 agg: 196 ms, counted at
    the 220 ms bucket): a healthy service with 40% of its requests slower (a queue's tail) stays silent."""
    plan = build_plan(TARGETS["sglang-agg-gb300"])
    objective = mon.objectives(plan)
    rule, path = _rule_file(tmp_path, plan, objective)
    over = round(60 * share_over)
    traffic = _traffic(plan, objective, ttft_s=[(60 - over, 0.15), (over, 0.4)], itl_s=0.015, error_share=0.0)
    names = [f"SglangAggGb300TTFTBudget{w}" for w in ("FastBurn", "SlowBurn")]
    out = _run_test(promtool, tmp_path, path, traffic,
                    {n: (_expected(rule, n) if n.endswith(firing) else []) for n in names})
    assert out.returncode == 0, out.stdout + out.stderr

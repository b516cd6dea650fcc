"""benchmark_options: the role's objectives, price, comparison and search options, every problem at once."""

from ansible_collections.inferops.dynamo.plugins.filter.benchmark import (
    benchmark_options,
    benchmark_search_next,
)

BASE = {"slo": {}, "slo_attainment": 0.95, "goodput_min": 0, "gpu_hour_cost": None, "compare": "",
        "compare_gate": False, "search": False, "search_min": 1, "search_max": None, "search_max_runs": 6,
        "search_precision": 0.1, "published_concurrency": 16, "points": [16]}


def test_defaults_change_nothing():
    out = benchmark_options(BASE)
    assert out == {"errors": [], "slo": {}, "goodput_arg": None, "slo_attainment": 0.95, "goodput_min": 0.0,
                   "gpu_hour_cost": None, "compare": "", "search": None, "request_rate_ceiling": 0.0}


def test_every_problem_at_once():
    out = benchmark_options({**BASE, "slo": {"ttft": 1}, "slo_attainment": 0, "gpu_hour_cost": "cheap",
                             "compare": "last week", "compare_gate": True, "search": True, "search_max": 1,
                             "search_max_runs": 0, "request_rate_ceiling": "fast"})
    text = " | ".join(out["errors"])
    for part in ("unknown objective 'ttft'", "benchmark_slo_attainment must be in (0, 1]", "benchmark_gpu_hour_cost",
                 "benchmark_compare must be 'previous'", "benchmark_search_max_runs must be >= 1",
                 "benchmark_search needs benchmark_slo", "benchmark_search_min < benchmark_search_max",
                 "benchmark_request_rate_ceiling (requests/s, 0 for none) must be a number"):
        assert part in text, part
    assert "benchmark_compare_gate needs benchmark_compare" in benchmark_options({**BASE, "compare_gate": True})["errors"][0]


def test_search_over_a_list_or_a_range():
    out = benchmark_options({**BASE, "slo": {"itl_ms": 22}, "search": True, "points": [8, 16, 32, 64],
                             "search_max_runs": 3})
    assert out["errors"] == [] and out["goodput_arg"] == "inter_token_latency:22"
    assert out["search"] == {"candidates": [8, 16, 32, 64], "start": 16, "max_runs": 3, "precision": 0.1}
    ranged = benchmark_options({**BASE, "slo": {"itl_ms": 22}, "search": True})["search"]
    assert ranged["candidates"] == list(range(1, 65))  # four times the published concurrency
    points = [{"concurrency": 16, "slo": {"met": True}}, {"concurrency": 32, "slo": {"met": False}}]
    step = benchmark_search_next(points, out["search"])
    assert step["done"] and step["reason"] == "precision_reached" and step["feasible_max"] == 16
    capped = benchmark_search_next(points, {**ranged, "max_runs": 2})
    assert capped["done"] and capped["reason"] == "max_runs"
    assert benchmark_search_next([], out["search"])["next"] == 16


def test_blank_answers_mean_the_default():
    out = benchmark_options({**BASE, "compare": "None", "goodput_min": "", "gpu_hour_cost": ""})
    assert out["errors"] == [] and out["compare"] == "" and out["goodput_min"] is None and out["gpu_hour_cost"] is None
    assert benchmark_options({**BASE, "compare": False})["compare"] == ""

"""next_probe: start at the published point, double or halve, then bisect; stops with a reason."""

from ansible_collections.inferops.dynamo.plugins.module_utils.bench.search import next_probe, summary


def run(boundary, cands, start, max_runs=10, precision=0.1):
    """Drive the search against a deployment that meets the objectives up to ``boundary``."""
    history = []
    while len(history) < max_runs:
        step = next_probe(history, cands, start, precision)
        if step["done"]:
            return history, step
        history.append((step["next"], step["next"] <= boundary))
    return history, next_probe(history, cands, start, precision)


def test_candidate_list_probes_the_published_point_then_doubles():
    history, step = run(20, [8, 16, 24, 32, 64], start=16)
    assert [c for c, _ in history] == [16, 32, 24]
    assert step["reason"] == "precision_reached" and step["feasible_max"] == 16 and step["infeasible_min"] == 24


def test_integer_range_converges_within_the_precision():
    history, step = run(21, list(range(1, 65)), start=16)
    assert [c for c, _ in history] == [16, 32, 24, 20, 22]
    assert (step["feasible_max"], step["infeasible_min"]) == (20, 22) and len(history) <= 6


def test_halves_when_the_start_misses_and_reports_no_pass():
    history, step = run(5, list(range(1, 65)), start=16)
    assert [c for c, _ in history][:3] == [16, 8, 4]
    history, step = run(0, [4, 8, 16], start=8)
    assert [c for c, _ in history] == [8, 4] and step["reason"] == "no_pass_in_range"


def test_everything_passes():
    history, step = run(1000, [8, 16, 32, 64], start=16)
    assert [c for c, _ in history] == [16, 32, 64] and step["reason"] == "no_failure_in_range"


def test_middle_candidate_without_a_start_and_a_noisy_history():
    assert next_probe([], [1, 2, 3, 4, 5])["next"] == 3
    # a pass above a miss: trust the lower miss
    step = next_probe([(16, True), (32, False), (24, True), (20, False)], list(range(1, 65)), 16)
    assert (step["feasible_max"], step["infeasible_min"]) == (16, 20)


def test_summary_says_max_runs_when_cut_short():
    history = [(16, True), (32, False)]
    s = summary(history, list(range(1, 65)), max_runs=2, start=16)
    assert s["reason"] == "max_runs" and s["runs"] == 2 and s["range"] == [1, 64] and s["candidates"] is None
    assert s["probes"] == [{"concurrency": 16, "met": True}, {"concurrency": 32, "met": False}]

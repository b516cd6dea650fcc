"""recommend: the highest concurrency that met the objectives, the boundary and the evidence."""

from ansible_collections.inferops.dynamo.plugins.module_utils.bench.slo import recommend


def point(c, met, goodput=1.0):
    return {"concurrency": c, "run_id": f"r-c{c}", "metrics": {"output_tokens_per_s": 10.0 * c},
            "slo": {"met": met, "good_fraction": 1.0 if met else 0.2, "goodput_per_s": goodput, "failed": []},
            "cost": {"per_million_output_tokens": 1.0 / c}}


def test_highest_meeting_point_and_the_first_miss_above():
    rec = recommend([point(32, False), point(8, True), point(16, True, 2.0)])
    assert rec["concurrency"] == 16 and rec["run_id"] == "r-c16" and rec["goodput_per_s"] == 2.0
    assert rec["boundary"] == 32 and rec["non_monotonic"] is False
    assert rec["cost"] == {"per_million_output_tokens": 1.0 / 16}
    assert [e["concurrency"] for e in rec["evidence"]] == [8, 16, 32]
    assert "16 is the highest tried that met the objectives; 32 missed them" in rec["reason"]


def test_none_met_and_noisy_points():
    rec = recommend([point(8, False), point(16, False)])
    assert rec["concurrency"] is None and "no concurrency tried (8, 16)" in rec["reason"]
    rec = recommend([point(8, False), point(16, True)])
    assert rec["concurrency"] == 16 and rec["non_monotonic"] is True and rec["boundary"] is None


def test_without_objectives():
    assert recommend([{"concurrency": 8, "metrics": {}}]) is None

"""scan finds runs and sweeps newest first; pick_previous chooses what to compare with."""

import json

from ansible_collections.inferops.dynamo.plugins.module_utils.bench.index import (
    index_markdown,
    pick_previous,
    scan,
)


def write(root, cluster, target, run, concurrency, tps, **extra):
    d = root / cluster / target / run
    d.mkdir(parents=True)
    (d / "summary.json").write_text(json.dumps({
        "context": {"cluster": cluster, "target": target, "run_id": run, "concurrency": concurrency, "date": run[:8]},
        "metrics": {"output_tokens_per_s": tps}, "gate": {"gated": True, "passed": True}, **extra}))


def tree(tmp_path):
    write(tmp_path, "lab-a", "t1", "20261201T100000Z-c16", 16, 800.0)
    write(tmp_path, "lab-a", "t1", "20261201T110000Z-c8", 8, 400.0)
    write(tmp_path, "lab-a", "t1", "20261201T120000Z-c16", 16, 790.0, slo={"met": True, "good_fraction": 1.0})
    write(tmp_path, "lab-b", "t1", "20261201T090000Z-c16", 16, 700.0)
    sweep = tmp_path / "lab-a" / "t1" / "sweep-20261201T110000Z-c8"
    sweep.mkdir()
    (sweep / "sweep.json").write_text(json.dumps({"points": [{"concurrency": 8}, {"concurrency": 16}],
                                                  "recommendation": {"concurrency": 16, "goodput_per_s": 2.0}}))
    (tmp_path / "rollout" / "r1").mkdir(parents=True)  # not a benchmark run
    (tmp_path / "lab-a" / "t1" / "junk").mkdir()
    return scan(str(tmp_path))


def test_scan_newest_first(tmp_path):
    s = tree(tmp_path)
    assert [r["run_id"] for r in s["runs"]] == ["20261201T120000Z-c16", "20261201T110000Z-c8",
                                                "20261201T100000Z-c16", "20261201T090000Z-c16"]
    assert [x["run_id"] for x in s["sweeps"]] == ["sweep-20261201T110000Z-c8"]
    md = index_markdown(s)
    assert "4 run(s) and 1 sweep(s)" in md
    assert "[20261201T120000Z-c16](lab-a/t1/20261201T120000Z-c16/report.md)" in md and "| met |" in md
    assert "| lab-a | t1 | [sweep-20261201T110000Z-c8](lab-a/t1/sweep-20261201T110000Z-c8/sweep.md) | sweep | 8, 16 | 16 |" in md


def test_previous_is_the_newest_earlier_run_at_the_same_concurrency(tmp_path):
    runs = tree(tmp_path)["runs"]
    current = {"cluster": "lab-a", "target": "t1", "run_id": "20261201T130000Z-c16", "concurrency": 16}
    prev, note = pick_previous(runs, current, "previous")
    assert prev["run_id"] == "20261201T120000Z-c16" and note is None
    prev, note = pick_previous(runs, {**current, "concurrency": 32}, "previous")
    assert prev is None and "at concurrency 32" in note and "earlier runs: 16, 8" in note
    prev, note = pick_previous(runs, {**current, "cluster": "lab-c"}, "previous")
    assert prev is None and "no earlier run of t1 on lab-c" in note


def test_by_run_id_or_path(tmp_path):
    runs = tree(tmp_path)["runs"]
    current = {"cluster": "lab-a", "target": "t1", "run_id": "20261201T130000Z-c16", "concurrency": 16}
    assert pick_previous(runs, current, "20261201T090000Z-c16")[0]["cluster"] == "lab-b"  # another cluster
    assert pick_previous(runs, current, "lab-a/t1/20261201T100000Z-c16")[0]["summary"]["metrics"] == {
        "output_tokens_per_s": 800.0}
    prev, note = pick_previous(runs, current, "nope")
    assert prev is None and "run nope not found" in note

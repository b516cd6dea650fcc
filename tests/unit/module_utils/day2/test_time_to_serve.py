"""The time-to-serve report: phases from the objects' timestamps, and what a rerun did not do."""

from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import time_to_serve as tts

T0 = 1_780_000_000.0  # the play's start


def iso(offset: float) -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(T0 + offset))


def job(start: float, end: float) -> dict:
    return {"status": {"startTime": iso(start), "completionTime": iso(end)}}


def pod(scheduled: float, started: float, ready: float, kind: str = "worker") -> dict:
    return {"metadata": {"labels": {"nvidia.com/dynamo-component-type": kind}, "creationTimestamp": iso(scheduled)},
            "status": {"phase": "Running",
                       "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": iso(scheduled)},
                                      {"type": "Ready", "status": "True", "lastTransitionTime": iso(ready)}],
                       "containerStatuses": [{"state": {"running": {"startedAt": iso(started)}}}]}}


def test_overlapped_run_reports_each_phase_and_the_sequential_sum():
    data = tts.report(T0, T0 + 187, download_job=job(5, 125), trace_job=job(6, 11), prepull_job=job(7, 67),
                      pods=[pod(126, 127, 187), pod(126, 126, 130, "frontend")], smoke_seconds=0.5)
    assert data["phases"] == {"download": 120, "trace": 5, "pull": 60, "load": 60, "smoke": 0.5}
    assert data["ready_s"] == 187 and data["first_answer_s"] == 187
    assert data["sequential_s"] == 245.5 and data["longest_phase"] == "download"
    assert data["floor_s"] == 180                       # the download as it ran, then the load
    assert "  no ordering beats: 180.0 s (the longest transfer, then the load)" in tts.lines(data)
    assert data["load_seconds"] == 60
    assert any("pre-pull" in n for n in data["notes"])


def test_without_a_prepull_the_workers_pull_time_counts():
    data = tts.report(T0, T0 + 200, download_job=job(1, 100), pods=[pod(101, 141, 200)], overlap=False)
    assert data["phases"]["pull"] == 40 and data["phases"]["load"] == 59
    assert "in sequence" in tts.lines(data)[0]


def test_a_rerun_says_what_it_did_not_do():
    data = tts.report(T0, T0 + 20, download_job=job(-900, -600), trace_job=job(-899, -890),
                      pods=[pod(-500, -480, -400)], smoke_seconds=0.2)
    assert data["phases"]["download"] is None and data["phases"]["trace"] is None
    assert data["phases"]["load"] is None and data["ready_s"] is None
    assert "download: complete before this run (not run again)" in data["notes"]
    assert "Ready: the workload was already serving before this run" in data["notes"]
    assert data["sequential_s"] == 0.2
    assert data["floor_s"] is None and not any("no ordering beats" in line for line in tts.lines(data))

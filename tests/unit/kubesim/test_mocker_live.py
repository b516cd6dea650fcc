"""Calibration replays the trace with the AIPerf settings the rehearsal's benchmark Job uses."""

from pathlib import Path

import yaml

from kubesim.standins import mocker_live


def test_the_live_measure_uses_the_rehearsal_inventorys_aiperf_settings():
    settings = yaml.safe_load(mocker_live.REHEARSAL_SETTINGS.read_text(encoding="utf-8"))
    args = mocker_live.aiperf_args("served", "tok", Path("/t.jsonl"), 16, 36, Path("/out"))
    assert args[args.index("--workers-max") + 1] == str(settings["benchmark_workers_max"])
    assert float(args[args.index("--request-rate") + 1]) == float(settings["benchmark_request_rate_ceiling"]) > 0
    assert args[args.index("--arrival-pattern") + 1] == "constant"
    assert args[args.index("--concurrency") + 1] == "16" and args[args.index("--request-count") + 1] == "36"
    assert all(extra in args for extra in settings["benchmark_aiperf_extra_args"])

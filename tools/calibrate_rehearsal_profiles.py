#!/usr/bin/env python3
"""Calibrate the mocker profile of every rehearsal target before anything is served with it.

A rehearsal cluster that serves with the real Dynamo runtime calibrates a target's profile the first time one of its
workloads is deployed, in the background while its pods wait. In a test run that would happen under the load of
every other test (slow, and a profile measured beside other work is tuned to that load, then cached for the quiet
timing pass). This tool renders each target the way `deploy.yml` does (the collection's plan and render, with the
rehearsal inventory's settings, which change no engine argument) and makes its profile now, one at a time, on the
machine as it is; a cached profile costs nothing. `make test` runs it before its passes.

    .venv/bin/python tools/calibrate_rehearsal_profiles.py [--targets sglang-agg-gb300,...] [--level live|replay]

Prints one line per target: whether the profile was cached or made, how long it took, and the calibrated scales.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "collections")]

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan  # noqa: E402
from ansible_collections.inferops.dynamo.plugins.module_utils.render import objects as render  # noqa: E402
from kubesim.rehearsal import TARGETS  # noqa: E402
from kubesim.standins import mocker_calibration as mc  # noqa: E402
from kubesim.standins.mocker_profile import ProfileError, PublishedFigures  # noqa: E402
from kubesim.standins.model_servers import runtime_unavailable  # noqa: E402
from kubesim.standins.served_model import served_model_name  # noqa: E402
from kubesim.standins.served_profiles import (  # noqa: E402
    CALIBRATION_ENV,
    CALIBRATION_LEVELS,
    rehearsal_profiles,
)

SERVED_KINDS = ("DynamoGraphDeployment", "Deployment")


def workload(request: dict) -> dict:
    """The object whose pods serve the target, as deploy.yml renders it."""
    objects = render.serving_objects(build_plan(request), "calibration")
    return next(o for o in objects if o.get("kind") in SERVED_KINDS)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", default=",".join(TARGETS), help="comma-separated; default: every rehearsal target")
    ap.add_argument("--level", choices=CALIBRATION_LEVELS, default=None,
                    help=f"how far to calibrate (default: {CALIBRATION_ENV}, else live)")
    args = ap.parse_args(argv)
    names = [t for t in args.targets.split(",") if t]
    unknown = sorted(set(names) - set(TARGETS))
    if unknown:
        ap.error(f"unknown targets {', '.join(unknown)}; choose from {', '.join(TARGETS)}")
    problem = runtime_unavailable()
    if problem:
        print(f"cannot calibrate: the rehearsal's runtime cannot run here: {problem}", file=sys.stderr)
        return 2
    profiles = rehearsal_profiles(**({"live": args.level == "live"} if args.level else {}))
    started = time.monotonic()
    for name in names:
        wl = workload(TARGETS[name])
        try:
            figures = PublishedFigures.from_annotations(wl["metadata"].get("annotations") or {})
        except ProfileError:
            print(f"{name:<24} no published figures: serves on the mocker's own timings", flush=True)
            continue
        key = mc.cache_key(figures, profiles.trace_path, profiles.engines(wl), profiles.live_requests)
        cached = (profiles.cache_dir / f"{key}.json").is_file()
        t0 = time.monotonic()
        path = profiles.make(wl, served_model_name(wl))
        record = json.loads(path.with_suffix(".json").read_text())
        scales = record.get("scales") or {}
        stages = record.get("stages") or {}
        last = stages.get("live") or stages.get("replay") or {}
        print(f"{name:<24} {'live' if profiles.live else 'replay'} {'cached' if cached else 'made'} in {time.monotonic() - t0:5.1f} s  "
              f"prefill x{scales.get('prefill', float('nan')):.3f} decode x{scales.get('decode', float('nan')):.3f}"
              f"{'' if last.get('converged', True) else '  (not converged: serves on its closest round)'}",
              flush=True)
    print(f"{len(names)} targets in {time.monotonic() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

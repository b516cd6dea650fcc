"""python -m kubesim start|stop|status|fault ..."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import launcher
from .inventory import DEFAULT_NODES, DEFAULT_STORAGE, ClusterConfig
from .standins.runner import RUNNABLE_IMAGES


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--clusters", type=int, default=1, help="number of clusters (one port each)")
    p.add_argument("--nodes", default=DEFAULT_NODES, help="node inventory, SKU:count list (SKUs from catalog/skus.yml)")
    p.add_argument("--rdma", dest="rdma", action="store_true", default=True, help="rdma/ib: 8 on NVIDIA nodes (default)")
    p.add_argument("--no-rdma", dest="rdma", action="store_false")
    p.add_argument("--storage-classes", default=DEFAULT_STORAGE,
                   help="name:RWX|RWO list, first is default; 'none' for no StorageClass")
    p.add_argument("--crd-dir", default=None, help="directory of extra/real CRD files (e.g. ../shared/crds)")
    p.add_argument("--no-monitoring-crds", dest="monitoring_crds", action="store_false", default=True,
                   help="leave out the prometheus-operator's CRDs (PodMonitor, PrometheusRule, ServiceMonitor)")
    p.add_argument("--state-dir", default=launcher.DEFAULT_STATE_DIR)
    p.add_argument("--runnable-images", default=",".join(RUNNABLE_IMAGES),
                   help="comma list of image substrings whose Job pods are executed locally")
    p.add_argument("--download-seconds", type=float, default=3.0)
    p.add_argument("--ready-seconds", type=float, default=2.0, help="a worker's model load, from start to Ready")
    p.add_argument("--image-pull-seconds", type=float, default=0.0,
                   help="first pull of an engine image on a node (utility images pull at once)")
    p.add_argument("--trace-seconds", type=float, default=0.0, help="the benchmark trace staging Job's fetch")
    p.add_argument("--speed-factor", type=float, default=1.0)
    p.add_argument("--prometheus", type=float, default=0.0, metavar="SECONDS",
                   help="real backend: run a real Prometheus in each cluster (built by make control-plane), scraping "
                        "what the PodMonitors select and evaluating the PrometheusRules every SECONDS")
    p.add_argument("--grove", action="store_true",
                   help="real backend: the Dynamo operator's Grove gate on (global.grove.enabled) and Grove's CRDs "
                        "installed; DGDs become PodCliqueSets (no Grove operator runs them here)")
    p.add_argument("--backend", choices=launcher.BACKENDS, default="kubesim",
                   help="kubesim (the emulator, default) or real (kube-apiserver, etcd, controllers, kwok)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kubesim", description="local Kubernetes API emulator")
    sub = ap.add_subparsers(dest="cmd", required=True)
    _common(sub.add_parser("start", help="start N clusters in a background daemon"))
    _common(sub.add_parser("_daemon", help=argparse.SUPPRESS))
    p = sub.add_parser("stop", help="stop the daemon")
    p.add_argument("--state-dir", default=launcher.DEFAULT_STATE_DIR)
    p = sub.add_parser("status", help="print the running clusters")
    p.add_argument("--state-dir", default=launcher.DEFAULT_STATE_DIR)
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("fault", help="inject or clear a fault: fault <cluster> <kind> [args] | fault <cluster> clear")
    p.add_argument("--state-dir", default=launcher.DEFAULT_STATE_DIR)
    p.add_argument("cluster", type=int)
    p.add_argument("fault", help="api-down, job-fail, download-fail, never-ready, slow-download, frontend-errors, frontend-speed, "
                                 "image-pull, crashloop, unschedulable, forbid, clear, clear-<kind>")
    p.add_argument("args", nargs="*", help="positional values or key=value")
    a = ap.parse_args(argv)

    if a.cmd == "_daemon" and a.backend == "real":
        from .control_plane.backend import RealBackend
        from .control_plane.cluster import RealConfig
        from .daemon import run_daemon

        state = Path(a.state_dir).resolve()
        return run_daemon(RealBackend(a.clusters, state, RealConfig(
            nodes=a.nodes, rdma=a.rdma, storage_classes=a.storage_classes, crd_dir=a.crd_dir,
            monitoring_crds=a.monitoring_crds, ready_seconds=a.ready_seconds, download_seconds=a.download_seconds, speed_factor=a.speed_factor,
            image_pull_seconds=a.image_pull_seconds, trace_seconds=a.trace_seconds, prometheus_interval=a.prometheus,
            grove=a.grove)), state)
    if a.cmd == "_daemon":
        from .daemon import run_daemon
        from .emulator import EmulatorBackend

        cfg = ClusterConfig(nodes=a.nodes, rdma=a.rdma, storage_classes=a.storage_classes, crd_dir=a.crd_dir,
                            monitoring_crds=a.monitoring_crds,
                            state_dir=a.state_dir, runnable_images=tuple(x for x in a.runnable_images.split(",") if x),
                            download_seconds=a.download_seconds, ready_seconds=a.ready_seconds,
                            speed_factor=a.speed_factor, image_pull_seconds=a.image_pull_seconds,
                            trace_seconds=a.trace_seconds)
        return run_daemon(EmulatorBackend(a.clusters, cfg), a.state_dir)
    if a.cmd == "start":
        try:
            cs = launcher.start(a.clusters, nodes=a.nodes, rdma=a.rdma, storage_classes=a.storage_classes,
                           crd_dir=a.crd_dir, monitoring_crds=a.monitoring_crds, state_dir=a.state_dir,
                           runnable_images=a.runnable_images,
                           download_seconds=a.download_seconds, ready_seconds=a.ready_seconds,
                           speed_factor=a.speed_factor, backend=a.backend,
                           image_pull_seconds=a.image_pull_seconds, trace_seconds=a.trace_seconds,
                           prometheus=a.prometheus, grove=a.grove)
        except (RuntimeError, TimeoutError) as exc:
            print(f"kubesim: {exc}", file=sys.stderr)
            return 1
        info = cs.info
        took = f" in {info['start_seconds']} s" if "start_seconds" in info else ""
        print(f"{cs.backend} backend pid {cs.pid}{took}; kubeconfig {cs.kubeconfig}")
        for c, ci in zip(cs, info["clusters"], strict=True):
            extra = f" (namespace-scoped: {c.team_context}, {ci['start_seconds']} s)" if c.team_context else ""
            print(f"  {c.context}: {c.base_url}{extra}" + (f"; Prometheus {c.prometheus_url}" if c.prometheus_url else ""))
        return 0
    if a.cmd == "stop":
        print("kubesim stopped" if launcher.stop(a.state_dir) else "kubesim was not running")
        return 0
    if a.cmd == "status":
        info = launcher.status(a.state_dir)
        if info is None:
            print("kubesim is not running")
            return 3
        if a.json:
            print(json.dumps(info, indent=2))
            return 0
        print(f"kubesim daemon pid {info['pid']}; kubeconfig {info['kubeconfig']}; control port {info['control_port']}")
        for c in info["clusters"]:
            faults = ", ".join(c.get("faults") or {}) or "none"
            print(f"  {c['context']}: {c['base_url']} api={'up' if c.get('api_up', True) else 'DOWN'} faults={faults}")
        return 0
    if a.cmd == "fault":
        try:
            cs = launcher.attach(a.state_dir)
        except RuntimeError as exc:
            print(f"kubesim: {exc}", file=sys.stderr)
            return 1
        names = launcher.FAULT_ARGS.get(a.fault, [])
        args: dict = {}
        pos = 0
        for x in a.args:
            if "=" in x:
                k, v = x.split("=", 1)
                args[k] = v
            elif pos < len(names):
                args[names[pos]] = x
                pos += 1
        try:
            out = cs[a.cluster].fault(a.fault, **args)
        except IndexError:
            print(f"kubesim: no cluster {a.cluster}", file=sys.stderr)
            return 2
        except Exception as exc:
            print(f"kubesim: {exc}", file=sys.stderr)
            return 2
        print(json.dumps(out))
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())

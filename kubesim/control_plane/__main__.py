"""python -m kubesim.control_plane gomod|build|bin-dir"""

from __future__ import annotations

import argparse
import sys

from . import build


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kubesim.control_plane")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("gomod", help="regenerate gomod/go.mod (staging replaces) from the pinned k8s.io/kubernetes")
    p = sub.add_parser("build", help="build the binaries into the per-machine cache (no-op when built)")
    p.add_argument("--force", action="store_true")
    sub.add_parser("bin-dir", help="print the cache directory of the pinned binaries")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "gomod":
            print(build.write_gomod())
        elif a.cmd == "build":
            build.build(force=a.force)
            # promtool, the monitoring and KEDA CRDs come from the module proxy too; tests use them offline afterwards
            build.build_prometheus(force=a.force)
            # the real Dynamo operator and the Helm that renders its platform chart into each cluster
            build.build_operator(force=a.force)
            build.build_helm(force=a.force)
            build.monitoring_crd("prometheusrules")
            build.keda_crd("scaledobjects")
        elif a.cmd == "bin-dir":
            print(build.bin_dir())
    except RuntimeError as exc:
        print(f"control plane: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

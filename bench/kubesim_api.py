"""Bench: latency of the kubesim API server on loopback from one keep-alive client.

Starts a rehearsal cluster in a temporary state dir, runs a bounded mixed GET/PATCH load
(default 3000 requests or 20 s, whichever comes first), prints requests/s, p50/p99 latency and
the ratio p50 / 5 ms goal, then stops the cluster. Usage:

    .venv/bin/python bench/kubesim_api.py [--requests N] [--max-seconds S]
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml

import kubesim

GOAL_P50_MS = 5.0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=3000)
    ap.add_argument("--max-seconds", type=float, default=20.0)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="kubesim-bench-") as tmp:
        cs = kubesim.start(1, state_dir=tmp)
        try:
            c = cs[0]
            token = yaml.safe_load(Path(c.kubeconfig).read_text())["users"][0]["user"]["token"]
            conn = http.client.HTTPConnection("127.0.0.1", c.port, timeout=10)
            hdr = {"Authorization": f"Bearer {token}", "Accept": "application/json"}

            def req(method, path, body=None, ctype="application/json"):
                h = dict(hdr)
                data = None
                if body is not None:
                    data = json.dumps(body).encode()
                    h["Content-Type"] = ctype
                conn.request(method, path, body=data, headers=h)
                r = conn.getresponse()
                payload = r.read()
                if r.status >= 400:
                    raise RuntimeError(f"{method} {path}: {r.status} {payload[:200]!r}")
                return payload

            req("POST", "/api/v1/namespaces", {"metadata": {"name": "bench"}})
            base = "/api/v1/namespaces/bench/configmaps"
            req("POST", base, {"metadata": {"name": "cm", "labels": {"app": "bench"}}, "data": {"n": "0"}})
            dep = {"metadata": {"name": "d"}, "spec": {"replicas": 0, "selector": {"matchLabels": {"a": "b"}},
                                                       "template": {"metadata": {"labels": {"a": "b"}},
                                                                    "spec": {"containers": [{"name": "c", "image": "x"}]}}}}
            req("POST", "/apis/apps/v1/namespaces/bench/deployments", dep)
            lat = {"GET": [], "PATCH": []}
            t_start = time.perf_counter()
            deadline = t_start + a.max_seconds
            n = 0
            while n < a.requests and time.perf_counter() < deadline:
                kind = n % 4
                t0 = time.perf_counter()
                if kind == 0:
                    req("GET", f"{base}/cm")
                    lat["GET"].append(time.perf_counter() - t0)
                elif kind == 1:
                    req("PATCH", f"{base}/cm", {"data": {"n": str(n)}}, "application/merge-patch+json")
                    lat["PATCH"].append(time.perf_counter() - t0)
                elif kind == 2:
                    req("GET", "/apis/apps/v1/namespaces/bench/deployments/d")
                    lat["GET"].append(time.perf_counter() - t0)
                else:
                    req("PATCH", "/apis/apps/v1/namespaces/bench/deployments/d",
                        {"metadata": {"annotations": {"n": str(n)}}}, "application/strategic-merge-patch+json")
                    lat["PATCH"].append(time.perf_counter() - t0)
                n += 1
            elapsed = time.perf_counter() - t_start
            conn.close()
        finally:
            cs.stop()
    allv = sorted(lat["GET"] + lat["PATCH"])

    def pct(v, p):
        v = sorted(v)
        return v[min(len(v) - 1, int(len(v) * p))] * 1000 if v else float("nan")
    p50 = statistics.median(allv) * 1000
    print(f"kubesim API bench: {n} requests (GET/PATCH mix) in {elapsed:.2f} s from one keep-alive client")
    print(f"  throughput: {n / elapsed:.0f} req/s")
    for k in ("GET", "PATCH"):
        print(f"  {k:5s}: n={len(lat[k])} p50={pct(lat[k], 0.5):.2f} ms p99={pct(lat[k], 0.99):.2f} ms")
    print(f"  all  : p50={p50:.2f} ms p99={pct(allv, 0.99):.2f} ms")
    print(f"  p50 / {GOAL_P50_MS:.0f} ms goal = {p50 / GOAL_P50_MS:.2f} ({'meets' if p50 <= GOAL_P50_MS else 'misses'} the goal)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

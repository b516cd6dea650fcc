# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What runs where: one row per target and cluster, from the revisions and the live workloads, with the
drift from the last revision field by field. Pure functions (the reads come from cluster_facts)."""

from __future__ import annotations

from ansible_collections.inferops.dynamo.plugins.module_utils import naming
from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import revisions as rv
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import object_diff as od
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import workload_inspect as wi

COLUMNS = ("cluster", "target", "revision", "image", "ready", "replicas", "benchmark", "drift")
HEADERS = {"cluster": "Cluster", "target": "Target", "revision": "Revision", "image": "Image", "ready": "Ready",
           "replicas": "Replicas", "benchmark": "Benchmark", "drift": "Drift"}
WORKLOAD_KINDS = ("DynamoGraphDeployment", "Deployment")
# read name -> kind of what a revision holds (status.yml reads them; the dashboards are ConfigMaps by label)
LIVE_READS = (("dgds", "DynamoGraphDeployment"), ("deployments", "Deployment"), ("services", "Service"),
              ("prometheusrules", "PrometheusRule"), ("podmonitors", "PodMonitor"), ("dashboards", "ConfigMap"),
              # the planner's objects (module_utils/planner), by their component label
              ("planner_configs", "ConfigMap"), ("planner_accounts", "ServiceAccount"), ("planner_roles", "Role"),
              ("planner_bindings", "RoleBinding"), ("scaledobjects", "ScaledObject"))
# what the Dynamo operator creates for each component a planner scales (not the collection's: never drift)
ADAPTERS_READ = "scaling_adapters"


def _resources(read: dict | None) -> list[dict]:
    return list((read or {}).get("resources") or [])


def _replicas(kind: str, obj: dict) -> str:
    status = obj.get("status") or {}
    if kind == "DynamoGraphDeployment":
        comps = (obj.get("spec") or {}).get("components") or []
        want = sum(1 if c.get("replicas") is None else int(c["replicas"]) for c in comps)
        have = sum(int((v or {}).get("readyReplicas") or 0) for v in (status.get("components") or {}).values())
        return f"{have}/{want}"
    spec = obj.get("spec") or {}
    return f"{int(status.get('readyReplicas') or 0)}/{1 if spec.get('replicas') is None else int(spec['replicas'])}"


def scaling(dgd: dict, adapters: list[dict]) -> list[dict]:
    """Each scaled component of ``dgd`` (``scalingAdapter`` set): its ready replicas and the replicas its adapter
    asks for (what the planner last set; None before the operator made the adapter)."""
    name = (dgd.get("metadata") or {}).get("name")
    planned = {}
    for a in adapters:
        ref = (a.get("spec") or {}).get("dgdRef") or {}
        if ref.get("name") == name:
            # v1beta1 names the component ``componentName``; the deprecated v1alpha1 named it ``serviceName``
            planned[ref.get("componentName") or ref.get("serviceName")] = (a.get("spec") or {}).get("replicas")
    status = (dgd.get("status") or {}).get("components") or {}
    return [{"component": c["name"], "current": int((status.get(c["name"]) or {}).get("readyReplicas") or 0),
             "planned": planned.get(c["name"])}
            for c in (dgd.get("spec") or {}).get("components") or [] if c.get("scalingAdapter") is not None]


def target_rows(cluster: str, namespace: str, reads: dict, field_manager: str) -> list[dict]:
    """Rows for one cluster. ``reads`` has ``revisions`` (ConfigMaps), ``dgds`` and ``deployments`` (the
    collection's workloads), ``services`` and, where the cluster serves them, ``prometheusrules``, ``podmonitors``
    and ``dashboards`` (ConfigMaps), each shaped like a k8s_info result. An object of a revision whose kind was not
    read is not compared."""
    live = {}
    read_kinds = set()
    for key, kind in LIVE_READS:
        read = reads.get(key) or {}
        if key not in reads or not read.get("api_found", True) or read.get("error"):
            continue                                # not read here, not served, or refused: nothing to compare with
        read_kinds.add(kind)
        for obj in _resources(reads.get(key)):      # list items carry no kind
            live[(kind, obj["metadata"]["name"])] = {**obj, "kind": kind}
    by_target: dict[str, list[dict]] = {}
    for cm in _resources(reads.get("revisions")):
        target = ((cm.get("metadata") or {}).get("labels") or {}).get(naming.TARGET_LABEL)
        if target:
            by_target.setdefault(target, []).append(cm)
    workloads = {((o.get("metadata") or {}).get("labels") or {}).get(naming.TARGET_LABEL): o
                 for (kind, _), o in live.items() if kind in WORKLOAD_KINDS}
    rows = []
    for target in sorted(set(by_target) | {t for t in workloads if t}):
        revs = rv.parse(by_target.get(target, []))
        latest = revs[-1] if revs else None
        row = {"cluster": cluster, "namespace": namespace, "target": target,
               "revision": latest["number"] if latest else "none", "image": "", "ready": "no", "replicas": "",
               "benchmark": "", "benchmark_at": "", "drift": [], "drift_fields": [], "error": ""}
        if latest and latest.get("benchmark"):
            row["benchmark"] = latest["benchmark"]
            row["benchmark_at"] = latest.get("benchmark-at", "")
        workload = workloads.get(target)
        applied = [o for o in (latest["objects"] if latest else [])]
        if latest:
            for obj in applied:
                if obj.get("kind") not in read_kinds:
                    continue
                now = live.get((obj.get("kind"), obj["metadata"]["name"]))
                adapted = {f"spec.components[{c.get('name')}].replicas"
                           for c in (obj.get("spec") or {}).get("components") or []
                           if isinstance(c, dict) and c.get("scalingAdapter") is not None}
                for d in od.drift(obj, now, field_manager):
                    if d["field"] in adapted:
                        continue            # a scaling adapter owns them: the planner's choice, not drift
                    row["drift"].append(f"{obj['kind']} {obj['metadata']['name']}: {od.drift_text(d)}")
                    row["drift_fields"].append({"object": f"{obj['kind']}/{obj['metadata']['name']}", **d})
                if obj.get("kind") in WORKLOAD_KINDS and now is not None:
                    workload = now
        else:
            row["drift"].append("no revision recorded (deployed before revisions, or by hand): nothing to compare")
        if workload is not None:
            kind = workload.get("kind")
            row["image"] = rv.workload_image([workload]) or (latest or {}).get("image", "")
            row["ready"] = "yes" if wi.readiness(kind, workload) else "no"
            row["replicas"] = _replicas(kind, workload)
            if kind == "DynamoGraphDeployment":
                row["scaling"] = scaling(workload, _resources(reads.get(ADAPTERS_READ)))
        else:
            row["image"] = (latest or {}).get("image", "")
            row["ready"] = "absent"
        rows.append(row)
    return rows


LIVE_COLUMNS = ("live", "alerts")
HEADERS.update({"live": "Live (p90, errors, rate)", "alerts": "Alerts", "scaling": "Scaling (ready/planned)"})


def live_targets(rows: list[dict], catalog_targets: dict) -> list[dict]:
    """What prometheus_status reads for these rows: each known target with its namespace, runtime and framework."""
    return [{"key": r["target"], "namespace": r["namespace"], "runtime": catalog_targets[r["target"]]["runtime"],
             "framework": catalog_targets[r["target"]]["framework"]}
            for r in rows if r.get("target") in catalog_targets and not r.get("error")]


def with_live(rows: list[dict], live: dict) -> list[dict]:
    """The rows with the live figures and alerts prometheus_status returned for their targets."""
    out = []
    for r in rows:
        entry = (live or {}).get(r.get("target"))
        out.append({**r, "live": entry["figures"], "alerts": entry["alerts"], "live_error": entry["error"],
                    "planner": entry.get("planner")} if entry else r)
    return out


def _live_text(row: dict) -> str:
    if row.get("live_error"):
        return f"unreadable: {row['live_error']}"
    f = row.get("live")
    if not f:
        return "-"
    if not f.get("requests_per_s"):
        return f"no requests in {f['window']}"

    def ms(v):
        return "-" if v is None else f"{v * 1000:.0f} ms"

    errors = "-" if f.get("error_ratio") is None else f"{f['error_ratio'] * 100:.2g}%"
    return (f"TTFT {ms(f.get('ttft_p90_s'))}, ITL {ms(f.get('itl_p90_s'))}, errors {errors}, "
            f"{f['requests_per_s']:.3g} req/s ({f['window']})")


def _alerts_text(row: dict) -> str:
    alerts = row.get("alerts") or []
    if row.get("live_error") or "live" not in row:
        return "-"
    if not alerts:
        return "none"
    return ", ".join(f"{a['name']} ({a['state']}, {a['severity']})" for a in alerts)


def _scaling_text(row: dict) -> str:
    """``Decode 1/2, Prefill 1/1; planner: load scale_up, throughput model_not_ready`` (ready/planned)."""
    parts = [f"{s['component']} {s['current']}/{'?' if s['planned'] is None else s['planned']}"
             for s in row.get("scaling") or []]
    decision = row.get("planner")
    if decision:
        asked = ", ".join(f"{k} {v}" for k, v in sorted((decision.get("predicted") or {}).items()))
        parts.append("planner: " + ", ".join(f"{loop} {decision[loop]}" for loop in ("load", "throughput")
                                             if decision.get(loop)) + (f" (asked {asked})" if asked else ""))
    elif row.get("scaling") and "live" in row and not row.get("live_error"):
        parts.append("planner: no decision scraped")
    return "; ".join(parts) or "-"


def _columns(rows: list[dict]) -> tuple:
    scaled = ("scaling",) if any(r.get("scaling") for r in rows) else ()
    return COLUMNS + scaled + (LIVE_COLUMNS if any("live" in r for r in rows) else ())


def unreachable_row(cluster: str, namespace: str, message: str) -> dict:
    return {"cluster": cluster, "namespace": namespace, "target": "?", "revision": "", "image": "", "ready": "?",
            "replicas": "", "benchmark": "", "benchmark_at": "", "drift": [], "drift_fields": [],
            "error": " ".join(str(message).split())[:300]}


def _cell(row: dict, col: str, limit: int) -> str:
    if col == "drift":
        names = sorted({f"{d['field']} ({d['op']})" for d in row["drift_fields"]})
        text = (f"{len(names)} field(s): " + ", ".join(names)) if names else (row["drift"][0] if row["drift"] else "none")
        if row.get("error"):
            text = f"unreachable: {row['error']}"
    elif col == "benchmark":
        text = " ".join(x for x in (row["benchmark"], row.get("benchmark_at", "")) if x) or "-"
    elif col == "live":
        text = _live_text(row)
    elif col == "alerts":
        text = _alerts_text(row)
    elif col == "scaling":
        text = _scaling_text(row)
    else:
        text = str(row.get(col, ""))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def table_lines(rows: list[dict], limit: int = 60) -> list[str]:
    """The table (drift cells list the fields; every drifted field follows under the table, with values)."""
    columns = _columns(rows)
    cells = [[_cell(r, c, 2 * limit if c in ("drift", "live", "alerts", "scaling") else limit) for c in columns]
             for r in rows]
    widths = [max([len(HEADERS[c])] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(HEADERS[c].ljust(widths[i]) for i, c in enumerate(columns)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(row[i].ljust(widths[i]) for i in range(len(columns))).rstrip() for row in cells]
    drifted = [r for r in rows if r["drift_fields"]]
    for r in drifted:
        lines.append(f"Drift of {r['target']} on {r['cluster']} since revision {r['revision']}:")
        lines += [f"  {d}" for d in r["drift"]]
    return lines


def markdown(rows: list[dict], title: str) -> str:
    columns = _columns(rows)
    lines = [f"# {title}", "", "| " + " | ".join(HEADERS[c] for c in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(r, c, 400).replace("|", "\\|") for c in columns) + " |" for r in rows]
    for r in rows:
        if r["drift_fields"]:
            lines += ["", f"## Drift of {r['target']} on {r['cluster']} since revision {r['revision']}", ""]
            lines += [f"- `{d['object']}` `{d['field']}`: {d['op']}"
                      + (f" by {', '.join(d['managers'])}" if d["managers"] else "")
                      + f" (revision: `{od.value_text(d['applied'])}`, live: `{od.value_text(d['live'])}`)"
                      for d in r["drift_fields"]]
    return "\n".join(lines) + "\n"

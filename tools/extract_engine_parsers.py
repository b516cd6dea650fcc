#!/usr/bin/env python3
"""Extract engine CLI facts from the real parsers of pinned engine packages into ``tests/engines/``.

For each engine set: make (or reuse) a throwaway virtualenv under
``${XDG_CACHE_HOME:-~/.cache}/inferops-dynamo/engine-venvs/<set-id>``, ``pip install`` the pinned
packages from PyPI, run ``tools/engine_parsers_probe.py`` with the venv's python (it imports the
packages and captures the argparse parsers their entry points build), and write
``tests/engines/<set-id>.json`` with provenance.  Usage::

    python3 tools/extract_engine_parsers.py [--set SET-ID ...] [--keep-going]     (or: make engine-parsers)

Run it when a runtime image tag (and so its engine versions) changes in catalog/targets.yml: by default
it extracts every set the catalog pins, and refuses when the catalog names one SETS does not define.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# the project's one cache root (XDG_CACHE_HOME honoured), shared with the control plane and the mocker profiles
from kubesim.control_plane.build import cache_root

try:
    from packaging.markers import default_environment
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
except ImportError:  # a bare interpreter still has pip's vendored copy
    from pip._vendor.packaging.markers import default_environment
    from pip._vendor.packaging.requirements import Requirement
    from pip._vendor.packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parent.parent
PROBE = REPO / "tools" / "engine_parsers_probe.py"
OUT_DIR = REPO / "tests" / "engines"
SCHEMA = 1

# The sets are data so the project's catalog can supply them later.
#   requirements: what is pip-installed, exactly as a user would.
#   leave_out:    {distribution: {dependency: reason}}; each distribution named here is installed
#                 with --no-deps and its declared dependencies (extras included) are installed
#                 without the left-out ones.  Used only for NVIDIA "wheel_stub" sdists, which
#                 download from a second index at build time and cannot install from PyPI alone.
#   pins_of:      {distribution: [names]}: record what that distribution's METADATA pins for them.
#   commands:     names understood by the probe.
#   env_from:     distributions whose files are scanned for VLLM_/SGLANG_/DYN_ variables.
SETS: dict[str, dict] = {
    "vllm-0.28.0": {
        "requirements": ["vllm==0.28.0"],
        "leave_out": {},
        "pins_of": {},
        "commands": ["vllm serve"],
        "env_from": ["vllm"],
    },
    "ai-dynamo-1.5.1+vllm-0.28.0": {
        "requirements": ["ai-dynamo[vllm]==1.5.1", "vllm==0.28.0"],
        "leave_out": {
            "ai-dynamo": {"aisimulate": "wheel_stub sdist (fetches from pypi.nvidia.com at build time); "
                          "imported only by dynamo.planner / dynamo.router sweep code"},
        },
        "pins_of": {"ai-dynamo": ["vllm", "ai-dynamo-runtime", "nixl"]},
        "commands": ["dynamo.vllm", "dynamo.frontend"],
        "env_from": ["ai-dynamo", "ai-dynamo-runtime", "vllm"],
    },
    "ai-dynamo-1.5.1+sglang-0.5.18": {
        "requirements": ["ai-dynamo[sglang]==1.5.1", "sglang==0.5.18"],
        "leave_out": {
            "ai-dynamo": {"aisimulate": "wheel_stub sdist (fetches from pypi.nvidia.com at build time); "
                          "imported only by dynamo.planner / dynamo.router sweep code"},
            "sglang": {"cuda-tile": "sglang pins cuda-tile==1.6.0rc5, published only as a wheel_stub sdist "
                       "(fetches from pypi.nvidia.com at build time); a CUDA tile-kernel DSL, not used "
                       "by the argument parser"},
        },
        "pins_of": {"ai-dynamo": ["sglang", "ai-dynamo-runtime", "nixl"]},
        "commands": ["dynamo.sglang", "dynamo.frontend"],
        "env_from": ["ai-dynamo", "ai-dynamo-runtime", "sglang"],
    },
}

# Cheap checks on other versions: read one source file out of the wheel, no install.
SPOT_CHECKS: dict[str, list[dict]] = {
    "vllm-0.28.0": [
        {"package": "vllm", "versions": ["0.24.0", "0.25.0", "0.28.0"],
         "file": "vllm/config/speculative.py", "literal_type": "SpeculativeMethod", "value": "dspark"},
    ],
}

# Environment variables that the probe must not inherit: they would change defaults it records.
ENV_PREFIXES = ("VLLM_", "SGLANG_", "SGL_", "DYN_")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def run(cmd: list[str], *, log_file: Path | None = None, **kw) -> subprocess.CompletedProcess:
    log("$ " + " ".join(cmd))
    if log_file is None:
        return subprocess.run(cmd, check=True, **kw)
    with log_file.open("a") as fh:
        fh.write("\n$ " + " ".join(cmd) + "\n")
        fh.flush()
        proc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, **kw)
    if proc.returncode:
        tail = log_file.read_text(errors="replace").splitlines()[-25:]
        raise RuntimeError(f"command failed ({proc.returncode}): {' '.join(cmd)}\n" + "\n".join(tail))
    return proc


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


_INDEX_CACHE: dict[str, dict[str, str]] = {}


def index_hashes(name: str) -> dict[str, str]:
    """filename -> sha256 from PyPI's simple index (PEP 691 JSON, the API pip itself uses)."""
    canon = canonicalize_name(name)
    if canon not in _INDEX_CACHE:
        req = urllib.request.Request(f"https://pypi.org/simple/{canon}/",
                                     headers={"Accept": "application/vnd.pypi.simple.v1+json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                files = json.load(resp).get("files", [])
        except (OSError, ValueError):
            files = []
        _INDEX_CACHE[canon] = {f["filename"]: f.get("hashes", {}).get("sha256") for f in files}
    return _INDEX_CACHE[canon]


# ---------------------------------------------------------------------------------------------
# installing


class Venv:
    def __init__(self, set_id: str):
        self.root = cache_root() / "engine-venvs" / set_id
        self.python = self.root / "bin" / "python"
        self.wheels = self.root / "wheels"
        self.log_file = self.root / "install.log"

    def ensure(self) -> None:
        if not self.python.exists():
            self.root.parent.mkdir(parents=True, exist_ok=True)
            run([sys.executable, "-m", "venv", str(self.root)])
        self.wheels.mkdir(exist_ok=True)

    def pip(self, *args: str) -> None:
        run([str(self.python), "-m", "pip", "--disable-pip-version-check", *args,
             "--progress-bar", "off"], log_file=self.log_file)

    def install(self, *args: str) -> None:
        self.pip("install", *args)
        # Keep only reports of installs that happened; they are the provenance of the wheels.
        for rep in self.root.glob("pip-report-*.json"):
            try:
                empty = not json.loads(rep.read_text()).get("install")
            except ValueError:
                empty = True
            if empty:
                rep.unlink()

    def next_report(self) -> Path:
        n = 0
        while (self.root / f"pip-report-{n:02d}.json").exists():
            n += 1
        return self.root / f"pip-report-{n:02d}.json"

    def download(self, name: str, version: str) -> Path:
        """The wheel pip picks for ``name==version``, kept beside the venv for reuse and provenance."""
        def find() -> Path | None:
            for whl in sorted(self.wheels.glob("*.whl")):
                parts = whl.name.split("-")
                if canonicalize_name(parts[0]) == canonicalize_name(name) and parts[1] == version:
                    return whl
            return None

        if find() is None:
            self.pip("download", "--no-deps", "--only-binary=:all:", "-d", str(self.wheels), f"{name}=={version}")
        found = find()
        if found is None:
            raise RuntimeError(f"pip download did not produce a wheel for {name}=={version}")
        return found


def pinned_version(req: Requirement) -> str:
    specs = list(req.specifier)
    if len(specs) != 1 or specs[0].operator != "==":
        raise ValueError(f"engine sets pin exact versions; got {req}")
    return specs[0].version


def wheel_metadata(whl: Path) -> str:
    with zipfile.ZipFile(whl) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        return zf.read(name).decode()


def requires_dist(metadata: str, extras: set[str]) -> list[Requirement]:
    env = default_environment()
    out = []
    for line in metadata.splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        req = Requirement(line.split(":", 1)[1].strip())
        if req.marker is not None and not any(req.marker.evaluate({**env, "extra": e}) for e in (extras or {""})):
            continue
        out.append(req)
    return out


def plan_install(venv: Venv, spec: dict) -> tuple[list[str], list[Path], list[str]]:
    """Split the set into (requirements pip resolves, wheels installed with --no-deps, notes).

    A distribution with left-out dependencies is installed with --no-deps and its declared
    dependencies (for the extras asked of it, by the set or by another such distribution)
    join the resolved list, minus the left-out ones.
    """
    leave_out = {canonicalize_name(k): {canonicalize_name(d): why for d, why in v.items()}
                 for k, v in spec.get("leave_out", {}).items()}
    top = {canonicalize_name(Requirement(r).name): Requirement(r) for r in spec["requirements"]}
    if not leave_out:
        return list(spec["requirements"]), [], []
    extras: dict[str, set[str]] = {}
    for name, req in top.items():
        extras.setdefault(name, set()).update(req.extras)
    resolved: list[str] = []
    notes: list[str] = []
    expanded: dict[str, set[str]] = {}
    wheels: dict[str, Path] = {}
    pending = [n for n in top if n in leave_out]
    while pending:
        name = pending.pop(0)
        if expanded.get(name) == extras[name]:
            continue
        expanded[name] = set(extras[name])
        wheels[name] = whl = venv.download(top[name].name, pinned_version(top[name]))
        for dep in requires_dist(wheel_metadata(whl), extras[name]):
            dep_name = canonicalize_name(dep.name)
            if dep_name in leave_out[name]:
                notes.append(f"left out {dep.name}{dep.specifier} declared by {whl.name}: {leave_out[name][dep_name]}")
                continue
            if dep_name in top:
                ok = dep.specifier.contains(pinned_version(top[dep_name]), prereleases=True)
                notes.append(f"{whl.name} declares {dep}; the set pins {top[dep_name]}"
                             + ("" if ok else " (CONFLICT)"))
                if not set(dep.extras) <= extras[dep_name]:
                    extras[dep_name] |= set(dep.extras)
                    if dep_name in leave_out:
                        pending.append(dep_name)
                continue
            dep.marker = None
            resolved.append(str(dep))
    for name, req in top.items():
        if name not in leave_out:
            merged = Requirement(str(req))
            merged.extras = extras[name]
            resolved.append(str(merged))
    return list(dict.fromkeys(resolved)), [wheels[n] for n in sorted(wheels)], sorted(set(notes))


def install(set_id: str, spec: dict) -> tuple[Venv, float, list[str]]:
    venv = Venv(set_id)
    venv.ensure()
    t0 = time.monotonic()
    resolved, no_deps, notes = plan_install(venv, spec)
    log(f"{set_id}: installing {len(resolved)} requirement(s) with dependencies"
        + (f", {len(no_deps)} wheel(s) without" if no_deps else ""))
    venv.install("--report", str(venv.next_report()), *resolved)
    if no_deps:
        venv.install("--no-deps", "--report", str(venv.next_report()), *map(str, no_deps))
    return venv, time.monotonic() - t0, notes


# ---------------------------------------------------------------------------------------------
# provenance


def installed_distributions(venv: Venv) -> dict[str, dict]:
    code = ("import importlib.metadata as m, json\n"
            "print(json.dumps({d.metadata['Name']: {'version': d.version} for d in m.distributions()}))\n")
    res = subprocess.run([str(venv.python), "-I", "-c", code], check=True, capture_output=True, text=True)
    return json.loads(res.stdout)


def report_downloads(venv: Venv) -> dict[str, dict]:
    """Wheel URL and sha256 per distribution, from every ``pip install --report`` of this venv."""
    out: dict[str, dict] = {}
    for rep in sorted(venv.root.glob("pip-report-*.json")):
        try:
            data = json.loads(rep.read_text())
        except ValueError:
            continue
        for item in data.get("install", []):
            info = item.get("download_info", {})
            sha = info.get("archive_info", {}).get("hashes", {}).get("sha256") or \
                info.get("archive_info", {}).get("hash", "").removeprefix("sha256=")
            out[canonicalize_name(item["metadata"]["name"])] = {
                "version": item["metadata"]["version"],
                "wheel": info.get("url", "").rsplit("/", 1)[-1],
                "sha256": sha or None,
            }
    return out


def package_provenance(venv: Venv, spec: dict, dists: dict[str, dict]) -> dict[str, dict]:
    """Wheel file and sha256 of the packages whose code the probe reads (and a few it relies on)."""
    reported = report_downloads(venv)
    core = [Requirement(r).name for r in spec["requirements"]] + list(spec["env_from"])
    core += [n for names in spec.get("pins_of", {}).values() for n in names]
    by_canon = {canonicalize_name(k): (k, v) for k, v in dists.items()}
    out: dict[str, dict] = {}
    for name in dict.fromkeys([*core, "torch", "transformers", "pydantic"]):
        canon = canonicalize_name(name)
        if canon not in by_canon:
            continue
        real_name, info = by_canon[canon]
        rep = reported.get(canon)
        local = [w for w in venv.wheels.glob("*.whl")
                 if canonicalize_name(w.name.split("-")[0]) == canon and w.name.split("-")[1] == info["version"]]
        if local:
            entry = {"wheel": local[0].name, "sha256": sha256_of(local[0]), "source": "pip download --no-deps"}
        elif rep and rep["version"] == info["version"] and rep["wheel"].endswith(".whl"):
            entry = {"wheel": rep["wheel"], "sha256": rep["sha256"], "source": "pip install --report"}
        elif name in core:
            # pip download makes the same wheel choice as the install did (same index, platform, python).
            whl = venv.download(real_name, info["version"])
            entry = {"wheel": whl.name, "sha256": sha256_of(whl), "source": "pip download --no-deps"}
        else:
            continue
        indexed = index_hashes(real_name).get(entry["wheel"])
        entry["index_sha256_matches"] = (indexed == entry["sha256"]) if indexed else None
        out[real_name] = {"version": info["version"], **entry}
    return out


def pins(venv: Venv, spec: dict) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for dist, names in spec.get("pins_of", {}).items():
        req = next(Requirement(r) for r in spec["requirements"]
                   if canonicalize_name(Requirement(r).name) == canonicalize_name(dist))
        whl = venv.download(req.name, pinned_version(req))
        wanted = {canonicalize_name(n) for n in names}
        lines = [line.split(":", 1)[1].strip() for line in wheel_metadata(whl).splitlines()
                 if line.startswith("Requires-Dist:")]
        out[f"{dist} {whl.name}"] = [x for x in lines if canonicalize_name(Requirement(x).name) in wanted]
    return out


# ---------------------------------------------------------------------------------------------
# probing


def probe(venv: Venv, *args: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(ENV_PREFIXES)}
    # No hub access here; a parser that tried to fetch would hang instead of failing.
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONHASHSEED="0", CUDA_VISIBLE_DEVICES="")
    with tempfile.TemporaryDirectory(prefix="engine-probe-") as tmp:
        err_path = Path(tmp) / "stderr.log"
        with err_path.open("w") as err:
            proc = subprocess.run([str(venv.python), "-I", str(PROBE), *args], cwd=tmp, env=env,
                                  stdout=subprocess.PIPE, stderr=err, text=True, timeout=1800)
        stderr = err_path.read_text(errors="replace")
    if proc.returncode:
        raise RuntimeError(f"probe {args} failed ({proc.returncode}):\n" + "\n".join(stderr.splitlines()[-40:]))
    return json.loads(proc.stdout)


def merge_env(static: dict, runtime_reads: list[dict]) -> dict:
    env = dict(static)
    for read in runtime_reads:
        name = read["name"]
        entry = env.setdefault(name, {"package": read["package"], "where": read["where"],
                                      "line": read.get("line"), "method": read["method"], "also": []})
        if entry is not None and entry["method"] != read["method"] and len(entry["also"]) < 6:
            entry["also"].append({k: read[k] for k in ("package", "where", "line", "method") if k in read})
    return dict(sorted(env.items()))


# ---------------------------------------------------------------------------------------------
# spot checks on other versions (source read out of the wheel; nothing installed)


def literal_values(source: str, type_name: str) -> list[str] | None:
    tree = ast.parse(source)
    defs: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            defs[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            defs[node.target.id] = node.value
    if type_name not in defs:
        return None

    def collect(node: ast.AST, depth: int = 0) -> list[str]:
        if depth > 20:
            return []
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.Name):
            return collect(defs[node.id], depth + 1) if node.id in defs else []
        return [v for child in ast.iter_child_nodes(node) for v in collect(child, depth + 1)]

    return sorted(set(collect(defs[type_name])))


def spot_check(check: dict) -> list[dict]:
    results = []
    dest = cache_root() / "wheels"
    dest.mkdir(parents=True, exist_ok=True)
    for version in check["versions"]:
        pkg = check["package"]
        whl = next(iter(sorted(dest.glob(f"{pkg}-{version}-*.whl"))), None)
        if whl is None:
            run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                 "--progress-bar", "off", "-d", str(dest), f"{pkg}=={version}"], stdout=subprocess.DEVNULL)
            whl = next(iter(sorted(dest.glob(f"{pkg}-{version}-*.whl"))))
        with zipfile.ZipFile(whl) as zf:
            try:
                source = zf.read(check["file"]).decode()
            except KeyError:
                source = ""
        values = literal_values(source, check["literal_type"]) if source else None
        lines = [i for i, line in enumerate(source.splitlines(), 1) if f'"{check["value"]}"' in line]
        results.append({
            "package": pkg, "version": version, "wheel": whl.name, "sha256": sha256_of(whl),
            "file": check["file"], "file_present": bool(source), "literal_type": check["literal_type"],
            "values": values, "value": check["value"],
            "present": bool(values) and check["value"] in values,
            "quoted_value_lines": lines[:10],
        })
    return results


# ---------------------------------------------------------------------------------------------
# answers written into provenance.notes, derived from the extracted data


def _opt(doc: dict, cmd: str, opt: str) -> dict | None:
    return doc["commands"].get(cmd, {}).get("options", {}).get(opt)


def _where(entry: dict | None) -> str:
    if not entry:
        return ""
    at = entry.get("defined_at") or entry.get("where")
    line = entry.get("line")
    return f" [{at}{':' + str(line) if line and at and ':' not in at else ''}]" if at else ""


def answer_notes(doc: dict) -> list[str]:
    notes: list[str] = []
    cmds = doc["commands"]

    def option_note(cmd: str, opt: str) -> None:
        e = _opt(doc, cmd, opt)
        if e is None:
            notes.append(f"{cmd}: {opt} is NOT accepted by the parser.")
            return
        bits = [f"dest={e['dest']}", "takes a value" if e["takes_value"] else "flag"]
        if e.get("choices"):
            bits.append(f"argparse choices={e['choices']}")
        if e.get("suggested_values"):
            bits.append(f"suggested values (not enforced by argparse)={e['suggested_values']}")
        ef = e.get("engine_field") or {}
        if ef.get("choices"):
            bits.append(f"{ef['owner']}.{ef['field']} accepts {ef['choices']}")
        if ef.get("enum"):
            bits.append(f"{ef['owner']}.{ef['field']} enum {ef['enum']['class']} names={ef['enum']['names']}")
        if e.get("deprecated"):
            bits.append("deprecated")
        field_at = f"; field {ef['defined_at']}" if ef.get("defined_at") else ""
        notes.append(f"{cmd}: {opt} is accepted ({'; '.join(bits)}) [added at {e.get('defined_at')}{field_at}].")

    def env_note(name: str) -> None:
        e = doc["env"].get(name)
        notes.append(f"env {name}: " + (f"read ({e['package']}, {e['method']}){_where(e)}." if e
                                         else "not found in any installed file of the scanned packages."))

    if "vllm serve" in cmds:
        cmd = "vllm serve"
        spec = cmds[cmd]["json_options"].get("--speculative-config", {})
        method = spec.get("fields", {}).get("method", {})
        notes.append(f"{cmd}: SpeculativeConfig.method choices = {method.get('choices')}; 'dspark' "
                     f"{'IS' if 'dspark' in (method.get('choices') or []) else 'is NOT'} a valid method"
                     f"{_where(method)}.")
        adaptive = {k: v for k, v in spec.get("fields", {}).items() if "adaptive" in k or "dspark" in k}
        notes.append(f"{cmd}: DSpark-related SpeculativeConfig fields: "
                     + ", ".join(f"{k} ({v.get('type')}, default {v.get('default')!r}){_where(v)}"
                                 for k, v in adaptive.items()) + ".")
        notes.append(f"{cmd}: all SpeculativeConfig fields: {list(spec.get('fields', {}))}; "
                     f"unknown keys are {'rejected' if spec.get('forbids_unknown') else 'ignored'} "
                     f"(pydantic extra={spec.get('extra')!r}).")
        guard = cmds[cmd].get("facts", {}).get("adaptive_verification_guard")
        if guard:
            notes.append(f"{cmd}: `{guard['text']}`{_where(guard)} (enable_adaptive_verification needs method "
                         "'dspark').")
        for opt in ("--language-model-only", "--attention-backend", "--enable-chunked-prefill",
                    "--no-enable-prefix-caching", "--quantization"):
            option_note(cmd, opt)
        facts = cmds[cmd].get("facts", {})
        if facts:
            notes.append(f"{cmd}: --quantization is free text for argparse; vLLM checks it against "
                         f"QUANTIZATION_METHODS {facts.get('quantization_methods')}.")
            for check in facts.get("checks", []):
                notes.append(f"{cmd}: ran {check['call']} -> {check['result']}.")
            loader = facts.get("online_quant_loader") or {}
            notes.append(f"{cmd}: online (load-time) quantization shorthands accepted by --quantization: "
                         f"{facts.get('online_quant_shorthands')}{_where(facts.get('online_quant_where'))}; "
                         f"'mxfp4' = {(facts.get('online_quant_specs') or {}).get('mxfp4')}. "
                         "With a checkpoint that has no quantization_config (e.g. BF16), get_quant_config falls "
                         f"through to `{loader.get('text')}`{_where(loader)}, i.e. the weights are converted to "
                         "MXFP4 while loading; an MXFP4 checkpoint instead uses its own Mxfp4Config.")
        for name in ("VLLM_USE_FLASHINFER_MOE_FP4", "VLLM_USE_RUST_FRONTEND", "VLLM_USE_V2_MODEL_RUNNER",
                     "VLLM_ENGINE_READY_TIMEOUT_S", "VLLM_ROCM_USE_AITER"):
            env_note(name)
    if "dynamo.sglang" in cmds:
        cmd = "dynamo.sglang"
        env_note("SGLANG_UNBALANCED_MODEL_LOADING_TIMEOUT_S")
        timeouts = sorted(o for o in cmds[cmd]["options"] if "timeout" in o)
        notes.append(f"{cmd}: options with 'timeout' in their name: {timeouts}; none of them is the timeout of "
                     "(unbalanced) model loading.")
        facts = cmds[cmd].get("facts", {})
        if facts.get("unbalanced_loading_timeout"):
            f = facts["unbalanced_loading_timeout"]
            notes.append(f"{cmd}: sglang's unbalanced-loading timeout is the module constant "
                         f"{f['name']} = {f['value']} s [{f['where']}:{f['line']}] (used at lines "
                         f"{f.get('used_at_lines')}: the monitored_barrier after model loading), not an env var "
                         "or option.")
        kv = cmds[cmd]["json_options"].get("--kv-events-config", {})
        notes.append(f"{cmd}: --kv-events-config parses into {kv.get('class')} ({kv.get('resolved_via')}) with "
                     f"fields {list(kv.get('fields') or {})}; publisher takes "
                     f"{facts.get('kv_events_publishers')}; unknown keys are "
                     f"{'rejected' if kv.get('forbids_unknown') else 'ignored'} (pydantic extra={kv.get('extra')!r}).")
        for opt in ("--disaggregation-mode", "--disaggregation-transfer-backend"):
            option_note(cmd, opt)
        env_note("DYN_SGL_FRONTEND_DECODING")
    if "dynamo.vllm" in cmds:
        env_note("DYN_VLLM_FRONTEND_DECODING")
    if "dynamo.frontend" in cmds:
        for opt in ("--http-port", "--router-mode", "--router-kv-events", "--no-router-kv-events",
                    "--kv-cache-block-size"):
            option_note("dynamo.frontend", opt)
    for check in doc.get("spot_checks", []):
        notes.append(f"spot check {check['package']} {check['version']} ({check['wheel']}, read from the wheel zip): "
                     f"{check['literal_type']} in {check['file']} = {check['values']}; "
                     f"'{check['value']}' {'present' if check['present'] else 'ABSENT'}.")
    return notes


def parser_notes(doc: dict) -> list[str]:
    notes = []
    for name, cmd in doc["commands"].items():
        meta = cmd.get("parser", {})
        notes.append(f"{name}: parser obtained by {meta.get('how')}; class {meta.get('class')}, "
                     f"allow_abbrev={meta.get('allow_abbrev')}, {len(cmd['options'])} option strings, "
                     f"{len(cmd['json_options'])} JSON-valued options.")
    return notes


# ---------------------------------------------------------------------------------------------


def extract(set_id: str, spec: dict) -> Path:
    log(f"=== {set_id}")
    venv, install_s, install_notes = install(set_id, spec)
    log(f"{set_id}: install step took {install_s:.0f}s")
    t0 = time.monotonic()
    commands = {}
    runtime_reads: list[dict] = []
    probe_notes: list[str] = []
    python = None
    for cmd in spec["commands"]:
        log(f"{set_id}: probing {cmd}")
        out = probe(venv, "command", cmd)
        runtime_reads += out.pop("env_reads", [])
        python = out.pop("python", None)
        probe_notes += [f"{cmd}: {n}" for n in out.pop("notes", [])]
        commands[cmd] = out
    log(f"{set_id}: scanning environment variables of {', '.join(spec['env_from'])}")
    env_out = probe(venv, "env", *spec["env_from"])
    probe_notes += env_out.get("notes", [])
    extract_s = time.monotonic() - t0
    dists = installed_distributions(venv)
    check = subprocess.run([str(venv.python), "-m", "pip", "check"], capture_output=True, text=True)
    install_notes += [f"pip check: {line}" for line in check.stdout.splitlines() if line.strip()]
    doc = {
        "schema": SCHEMA,
        "set": set_id,
        "provenance": {
            "tool": "tools/extract_engine_parsers.py",
            "probe": "tools/engine_parsers_probe.py",
            "python": python,
            "extracted": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "requirements": spec["requirements"],
            "left_out": {k: v for k, v in spec.get("leave_out", {}).items()},
            "packages": package_provenance(venv, spec, dists),
            "pins": pins(venv, spec),
            "installed": {k: v["version"] for k, v in sorted(dists.items(), key=lambda kv: kv[0].lower())},
            "timing_s": {"install": round(install_s, 1), "extract": round(extract_s, 1)},
            "notes": [],
        },
        "commands": commands,
        "env": merge_env(env_out["env"], runtime_reads),
        "env_prefixes": env_out.get("prefixes", {}),
    }
    if set_id in SPOT_CHECKS:
        doc["spot_checks"] = [r for check in SPOT_CHECKS[set_id] for r in spot_check(check)]
    doc["provenance"]["notes"] = [
        "Every fact below comes from importing the installed packages and reading the parser objects and "
        "config classes their own entry points build; nothing is hand-listed.",
        *install_notes, *probe_notes, *parser_notes(doc), *answer_notes(doc)]
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    path = OUT_DIR / f"{set_id}.json"
    path.write_text(json.dumps(doc, indent=1, sort_keys=False, ensure_ascii=False) + "\n")
    log(f"{set_id}: wrote {path.relative_to(REPO)} ({path.stat().st_size // 1024} KiB); "
        f"install {install_s:.0f}s, extraction {extract_s:.0f}s")
    return path


def catalog_sets() -> set[str]:
    """The engine sets the catalog's runtime images pin (catalog/targets.yml, runtimes.*.images)."""
    import yaml

    runtimes = yaml.safe_load((REPO / "catalog" / "targets.yml").read_text())["runtimes"]
    out = set()
    for rt in runtimes.values():
        for entry in rt["images"].values():
            engines = entry["engines"]
            order = sorted(engines, key=lambda p: (p != "ai-dynamo", p))
            out.add("+".join(f"{p}-{engines[p]}" for p in order))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", dest="sets", action="append", choices=sorted(SETS),
                        help="engine set to extract (repeatable; default: every set the catalog pins)")
    parser.add_argument("--keep-going", action="store_true", help="continue with the next set after a failure")
    args = parser.parse_args(argv)
    unknown = sorted(catalog_sets() - set(SETS))
    if unknown:
        log(f"the catalog pins engine sets this tool does not define: {', '.join(unknown)}; add them to SETS "
            "(requirements, commands, env_from) and run again")
        return 2
    failed = []
    for set_id in args.sets or sorted(catalog_sets()):
        try:
            extract(set_id, SETS[set_id])
        except Exception as exc:
            log(f"{set_id}: FAILED: {exc}")
            failed.append(set_id)
            if not args.keep_going:
                break
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

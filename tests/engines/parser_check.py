"""Check a rendered engine command line against the facts extracted from the engine's own parser
(tests/engines/<set>.json, written by tools/extract_engine_parsers.py).

Every ``--option`` must be one the parser defines (no abbreviation: each parser treats those
differently), a value must be one of its choices where it has them, a JSON-valued option's keys must
be fields of the config class it is parsed into (SGLang's KVEventsConfig silently drops unknown keys,
which is worse than vLLM refusing them), and every ``VLLM_*``/``SGLANG_*``/``DYN_*`` variable must be
one the installed packages read.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

DATA_DIR = Path(__file__).parent
ENGINE_ENV = re.compile(r"^(VLLM|SGLANG|DYN)_[A-Z0-9_]+$")


def set_id(engines: dict[str, str]) -> str:
    """The data set of an image's engine packages: {"ai-dynamo": "1.5.1", "sglang": "0.5.18"} ->
    "ai-dynamo-1.5.1+sglang-0.5.18" (the orchestrating package first)."""
    order = sorted(engines, key=lambda p: (p != "ai-dynamo", p))
    return "+".join(f"{p}-{engines[p]}" for p in order)


@functools.cache
def load(set_name: str) -> dict:
    path = DATA_DIR / f"{set_name}.json"
    if not path.is_file():
        raise FileNotFoundError(f"no parser data {path.name}: run `python tools/extract_engine_parsers.py` "
                                f"for the image's engine versions")
    return json.loads(path.read_text())


def command_key(command: list[str]) -> tuple[str, list[str]]:
    """("vllm serve" | "dynamo.sglang" | ..., the words after it)."""
    if command[:2] == ["vllm", "serve"]:
        return "vllm serve", command[2:]
    if len(command) >= 3 and command[1] == "-m":
        return command[2], command[3:]
    raise ValueError(f"unknown engine command {command!r}")


def _value_problems(name: str, info: dict, value: str, facts: dict) -> list[str]:
    choices = info.get("choices")
    if choices and value not in [str(c) for c in choices]:
        return [f"{name} {value!r} is not one of its choices {choices}"]
    enum = (info.get("engine_field") or {}).get("enum") or {}
    if enum.get("names") and value.upper() not in enum["names"] and value.lower() != "auto":
        return [f"{name} {value!r} is not one of {enum['names']} (or auto)"]
    if name in ("--quantization", "-q") and facts.get("quantization_methods"):
        known = set(facts["quantization_methods"]) | set(facts.get("online_quant_shorthands") or [])
        if value not in known:
            return [f"{name} {value!r} is not a quantization method of this engine ({sorted(known)})"]
    if info.get("type") == "int":
        try:
            int(value)
        except ValueError:
            return [f"{name} {value!r} is not an integer"]
    return []


def _json_problems(name: str, spec: dict, value: str) -> list[str]:
    try:
        doc = json.loads(value)
    except ValueError as exc:
        return [f"{name} is not valid JSON ({exc})"]
    if not isinstance(doc, dict):
        return [f"{name} must be a JSON object"]
    fields = spec.get("fields") or {}
    out = []
    for key, val in doc.items():
        if key not in fields:
            out.append(f"{name} key {key!r} is not a field of {spec.get('class')} "
                       f"({'refused' if spec.get('forbids_unknown') else 'silently ignored'} by the engine)")
            continue
        choices = fields[key].get("choices")
        if choices and isinstance(val, str | bool | int) and val not in choices and str(val) not in map(str, choices):
            out.append(f"{name} {key}={val!r} is not one of {choices}")
    return out


def check_args(set_name: str, command: list[str], args: list[str]) -> list[str]:
    data = load(set_name)
    key, rest = command_key(command)
    cmd = data["commands"].get(key)
    if cmd is None:
        return [f"{set_name} has no parser for {key!r}"]
    options, json_options, facts = cmd["options"], cmd.get("json_options") or {}, cmd.get("facts") or {}
    words = [*rest, *args]
    problems = []
    positionals = list(cmd.get("positionals") or [])
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if not word.startswith("-"):
            if positionals:
                positionals.pop(0)
                continue
            problems.append(f"unexpected argument {word!r}")
            continue
        name, eq, inline = word.partition("=")
        info = options.get(name)
        if info is None:
            problems.append(f"{name} is not an option of {key} ({set_name})")
            continue
        if not info.get("takes_value"):
            if eq:
                problems.append(f"{name} takes no value")
            continue
        values = [inline] if eq else []
        if not eq:
            nargs = info.get("nargs")
            while i < len(words) and not (words[i].startswith("--") or (words[i].startswith("-") and len(words[i]) == 2)):
                values.append(words[i])
                i += 1
                if nargs not in ("+", "*") and len(values) == (nargs if isinstance(nargs, int) else 1):
                    break
            if not values:
                problems.append(f"{name} needs a value")
                continue
        for v in values:
            problems += _value_problems(name, info, v, facts)
            if name in json_options:
                problems += _json_problems(name, json_options[name], v)
    return problems


# Names the Dynamo runtime (ai-dynamo-runtime, Rust) reads through a figment prefix: the compiled extension holds
# the prefix and the field, never the whole name, so the extractor cannot list them. Each was seen read by the
# runtime of the pinned release (docs/engine-parsers.md, "Runtime configuration"); the check accepts one only
# where the data set records its prefix in that compiled extension.
RUNTIME_CONFIG_ENV = {
    # lib/runtime/src/config.rs: Env::prefixed("DYN_HEALTH_CHECK_") maps REQUEST_TIMEOUT to
    # health_check_request_timeout_secs; ai-dynamo-runtime 1.5.1 logs "health_check_request_timeout_secs=77"
    # for DYN_HEALTH_CHECK_REQUEST_TIMEOUT=77 (default 3)
    "DYN_HEALTH_CHECK_REQUEST_TIMEOUT": "DYN_HEALTH_CHECK_",
}


def _runtime_config_name(data: dict, name: str) -> bool:
    prefix = RUNTIME_CONFIG_ENV.get(name)
    return prefix is not None and any(p.endswith(".so") for p in (data.get("env_prefixes") or {}).get(prefix, []))


def check_env(set_name: str, env: list[dict]) -> list[str]:
    data = load(set_name)
    known = data["env"]
    return [f"environment variable {e['name']} is read by none of {set_name}"
            for e in env if ENGINE_ENV.match(e["name"]) and e["name"] not in known
            and not _runtime_config_name(data, e["name"])]

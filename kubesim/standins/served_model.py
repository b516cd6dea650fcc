"""The model name a served workload answers to, read from its worker container as an engine would."""

from __future__ import annotations

import re

from . import operator_rules as operator
from . import pod_env
from .pod_env import Lookup


def served_model_name(wl: dict, configmap: Lookup | None = None) -> str:
    """The model name a workload serves, read from its worker container: ``--served-model-name``,
    else ``--model``/``--model-path``, else the first argument after ``serve``; also looked up in
    an engine ``--config`` file coming from a ConfigMap volume (read with ``configmap``, (namespace, name) ->
    object), and in MODEL-style env vars. The same on both backends."""
    pairs: list[tuple[dict, dict]] = []
    if wl.get("kind") == "DynamoGraphDeployment":
        comps = operator.components(wl)
        comps.sort(key=lambda c: 0 if c.type in ("worker", "decode") else 1 if c.type == "prefill" else 2)
        for comp in comps:
            spec = comp.template["spec"]
            pairs += [(spec, c) for c in spec.get("containers") or []]
    else:
        spec = ((wl.get("spec") or {}).get("template") or {}).get("spec", {})
        pairs = [(spec, c) for c in spec.get("containers") or []]
    flags = ("--served-model-name", "--model", "--model-path")
    for spec, c in pairs:
        env = {e["name"]: str(e.get("value", "")) for e in c.get("env") or [] if "value" in e}
        words = [re.sub(r"\$\{?(\w+)\}?", lambda mm, env=env: env.get(mm.group(1), mm.group(0)), w)
                 for w in pod_env.command_words(c)]
        for flag in flags:
            for i, w in enumerate(words):
                if w == flag and i + 1 < len(words):
                    return words[i + 1]
                if w.startswith(flag + "="):
                    return w.split("=", 1)[1]
        if "serve" in words:
            i = words.index("serve")
            if i + 1 < len(words) and not words[i + 1].startswith("-"):
                return words[i + 1]
        if configmap is not None and "--config" in words and words.index("--config") + 1 < len(words):
            found = _model_from_config(configmap, wl["metadata"].get("namespace", ""), spec, c,
                                       words[words.index("--config") + 1])
            if found:
                return found
        for k in ("SERVED_MODEL_NAME", "MODEL_NAME", "MODEL"):
            if env.get(k):
                return env[k]
    return wl["metadata"]["name"]


def _model_from_config(configmap: Lookup, ns: str, spec: dict, c: dict, path: str) -> str | None:
    import yaml

    vols = {v.get("name"): v for v in spec.get("volumes") or []}
    for vm in c.get("volumeMounts") or []:
        mp = (vm.get("mountPath") or "").rstrip("/")
        cm_ref = (vols.get(vm.get("name")) or {}).get("configMap")
        if not cm_ref or not mp or not path.startswith(mp + "/"):
            continue
        cm = configmap(ns, cm_ref.get("name", "")) or {}
        text = (cm.get("data") or {}).get(vm.get("subPath") or path[len(mp) + 1:])
        try:
            conf = yaml.safe_load(text) if text else None
        except yaml.YAMLError:
            conf = None
        if isinstance(conf, dict):
            for k in ("served-model-name", "served_model_name", "model", "model-path", "model_path"):
                if conf.get(k):
                    return str(conf[k])
    return None

"""Runs inside an engine virtualenv: capture the real argparse parsers and config classes, print JSON.

Started by ``tools/extract_engine_parsers.py`` with the venv's python (``python -I``), one process per
command so that module state of one entry point cannot leak into the next::

    python -I engine_parsers_probe.py command "vllm serve"
    python -I engine_parsers_probe.py env vllm

Only the standard library is imported here; everything else is the installed engine code.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import enum
import importlib
import importlib.metadata as md
import inspect
import io
import json
import os
import re
import runpy
import sys
import types
import typing
from pathlib import Path

ENV_RE = re.compile(r"^(VLLM|SGLANG|SGL|DYN)_[A-Z0-9_]*[A-Z0-9]$")
ENV_PREFIX_RE = re.compile(r"^(VLLM|SGLANG|SGL|DYN)_[A-Z0-9_]*_$|^(VLLM|SGLANG|SGL|DYN)_$")
HELP_ENV_RE = re.compile(r"env var:\s*([A-Z][A-Z0-9_]+)")
SITE = Path(next(p for p in sys.path if p.endswith("site-packages")))
MAX_DEPTH = 2


def rel(path: str | None) -> str | None:
    if not path:
        return None
    try:
        return str(Path(path).resolve().relative_to(SITE))
    except ValueError:
        return path


def short(text: str | None, limit: int = 240) -> str | None:
    if not text:
        return None
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def jsonable(value, depth: int = 0):
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, enum.Enum):
        return jsonable(value.value, depth) if isinstance(value.value, str | int | float) else value.name
    if depth < 3 and isinstance(value, list | tuple | set | frozenset):
        items = [jsonable(v, depth + 1) for v in value]
        return sorted(items, key=str) if isinstance(value, set | frozenset) else items
    if depth < 3 and isinstance(value, dict):
        return {str(k): jsonable(v, depth + 1) for k, v in value.items()}
    return {"repr": short(repr(value), 160)}


# ---------------------------------------------------------------------------------------------
# environment reads seen while the real code runs (catches names built at run time, e.g. f-strings)

ENV_READS: list[dict] = []
_SEEN_READS: set[str] = set()


def _caller() -> tuple[str | None, int | None]:
    frame = sys._getframe(2)
    while frame is not None and (frame.f_code.co_filename in (os.__file__, __file__)
                                 or frame.f_code.co_filename.startswith("<")):
        frame = frame.f_back
    if frame is None:
        return None, None
    return frame.f_code.co_filename, frame.f_lineno


def _record_env(key) -> None:
    if isinstance(key, str) and ENV_RE.match(key) and key not in _SEEN_READS:
        path, line = _caller()
        where = rel(path)
        if where and not where.startswith("/") and "engine_parsers_probe" not in where:
            _SEEN_READS.add(key)
            ENV_READS.append({"name": key, "where": where, "line": line, "method": "read at run time (imports and parser build)",
                              "package": owner_of(where)})


class _RecordingEnviron(os._Environ):
    def __getitem__(self, key):
        _record_env(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        _record_env(key)
        return super().__contains__(key)


def record_environ() -> None:
    os.environ.__class__ = _RecordingEnviron


_OWNERS: dict[str, str] = {}


def owner_of(relpath: str) -> str | None:
    if not _OWNERS:
        for dist in md.distributions():
            for f in dist.files or ():
                _OWNERS[str(f)] = dist.metadata["Name"]
    return _OWNERS.get(relpath)


# ---------------------------------------------------------------------------------------------
# capturing the parser that the real entry point builds


class _Captured(BaseException):
    """BaseException so the entry point's own ``except Exception`` cannot swallow it."""


HELPER_RE = re.compile(r"^_?add_\w*?arg(ument)?$")


def _ownership_hooks() -> None:
    """Tag every action with the parser that owns it and the source line that added it.

    Dynamo's entry points show the engine's and the router's options in their ``--help`` by
    appending those parsers' Action objects to a help group; the tag tells which parser really
    parses each option.
    """
    add_argument = argparse._ActionsContainer.add_argument
    group_init = argparse._ArgumentGroup.__init__

    def tagged_add_argument(self, *args, **kwargs):
        action = add_argument(self, *args, **kwargs)
        action._probe_parser = self if isinstance(self, argparse.ArgumentParser) else getattr(self, "_probe_parser", None)
        frame = sys._getframe(1)
        # Skip argparse and thin add-one-argument helpers (Dynamo's add_negatable_bool_argument, ...).
        while frame is not None and (HELPER_RE.match(frame.f_code.co_name)
                                     or frame.f_code.co_filename == argparse.__file__):
            frame = frame.f_back
        if frame is not None:
            action._probe_defined_at = f"{rel(frame.f_code.co_filename)}:{frame.f_lineno}"
        return action

    def tagged_group_init(self, container, *args, **kwargs):
        group_init(self, container, *args, **kwargs)
        self._probe_parser = container if isinstance(container, argparse.ArgumentParser) \
            else getattr(container, "_probe_parser", None)

    argparse._ActionsContainer.add_argument = tagged_add_argument
    argparse._ArgumentGroup.__init__ = tagged_group_init


def capture(run, argv: list[str]) -> argparse.ArgumentParser:
    """Run ``run()`` with ``sys.argv = argv`` and return the first parser it asks to parse."""
    seen: list[argparse.ArgumentParser] = []
    original = argparse.ArgumentParser.parse_known_args

    def parse_known_args(self, args=None, namespace=None):
        seen.append(self)
        raise _Captured

    argparse.ArgumentParser.parse_known_args = parse_known_args
    old_argv = sys.argv
    sys.argv = list(argv)
    try:
        run()
    except _Captured:
        pass
    except BaseException as exc:
        if not seen:
            raise
        if not isinstance(exc, _Captured | SystemExit):
            NOTES.append(f"after capture the entry point raised {type(exc).__name__}: {short(str(exc), 200)}")
    finally:
        argparse.ArgumentParser.parse_known_args = original
        sys.argv = old_argv
    if not seen:
        raise RuntimeError("the entry point returned without parsing arguments")
    return seen[0]


NOTES: list[str] = []


def ensure_vllm_platform() -> None:
    """vLLM computes config defaults through the current platform; without a GPU it has none."""
    import vllm.platforms as platforms

    try:
        device = platforms.current_platform.device_type
    except Exception as exc:
        device = ""
        NOTES.append(f"vLLM platform detection failed ({type(exc).__name__}: {short(str(exc), 120)})")
    if device:
        NOTES.append(f"vLLM platform: {type(platforms.current_platform).__name__} ({device})")
        return
    from vllm.platforms.cpu import CpuPlatform

    platforms._current_platform = CpuPlatform()
    NOTES.append("no GPU/libcuda here, so vLLM's CpuPlatform was installed as current_platform before the "
                 "parser was built (as `vllm bench` does on an unspecified platform); this only changes "
                 "platform-derived defaults and the device choice of --mm-processor-device ('cuda' is added "
                 "on a CUDA platform)")


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and name in action.choices:
            return action.choices[name]
    raise RuntimeError(f"no subcommand {name!r}")


def get_vllm_serve():
    ensure_vllm_platform()
    from vllm.entrypoints.cli import main as cli_main

    top = capture(cli_main.main, ["vllm", "serve", "--help"])
    how = ("vllm.entrypoints.cli.main.main() with sys.argv=['vllm', 'serve', '--help']; its top-level "
           "FlexibleArgumentParser captured at the first parse_known_args call, then the 'serve' subparser "
           "that ServeSubcommand.subparser_init built (make_arg_parser)")
    return _subparser(top, "serve"), how


def _run_module(module: str):
    return lambda: runpy.run_module(module, run_name="__main__", alter_sys=True)


def get_module_parser(module: str):
    def getter():
        if module == "dynamo.vllm":
            ensure_vllm_platform()
        parser = capture(_run_module(module), [module, "--help"])
        how = (f"runpy.run_module('{module}', run_name='__main__') (what `python -m {module}` runs) with "
               f"sys.argv=['{module}', '--help']; the parser of its first parse_known_args call captured")
        return parser, how
    return getter


COMMANDS = {
    "vllm serve": get_vllm_serve,
    "dynamo.vllm": get_module_parser("dynamo.vllm"),
    "dynamo.sglang": get_module_parser("dynamo.sglang"),
    "dynamo.frontend": get_module_parser("dynamo.frontend"),
}


# ---------------------------------------------------------------------------------------------
# types and config classes


def _is_pydantic_model(tp) -> bool:
    return isinstance(tp, type) and any(c.__name__ == "BaseModel" and c.__module__.startswith("pydantic")
                                        for c in tp.__mro__)


def is_config_class(tp) -> bool:
    return isinstance(tp, type) and (dataclasses.is_dataclass(tp) or _is_pydantic_model(tp))


def public_path(cls) -> str:
    module = cls.__module__
    parts = module.split(".")
    for i in range(1, len(parts)):
        mod = sys.modules.get(".".join(parts[:i]))
        if mod is not None and getattr(mod, cls.__name__, None) is cls:
            return f"{'.'.join(parts[:i])}.{cls.__name__}"
    return f"{module}.{cls.__qualname__}"


def flatten(tp) -> list:
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return flatten(typing.get_args(tp)[0])
    if origin in (typing.Union, types.UnionType):
        return [t for a in typing.get_args(tp) for t in flatten(a)]
    return [tp]


def type_str(tp) -> str:
    if tp is type(None):
        return "None"
    if isinstance(tp, str):
        return tp
    if isinstance(tp, typing.ForwardRef):
        return tp.__forward_arg__
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return type_str(typing.get_args(tp)[0])
    if origin in (typing.Union, types.UnionType):
        return " | ".join(dict.fromkeys(type_str(a) for a in typing.get_args(tp)))
    if origin is typing.Literal:
        return "Literal[" + ", ".join(repr(a) for a in typing.get_args(tp)) + "]"
    if origin is not None:
        args = typing.get_args(tp)
        name = getattr(origin, "__name__", str(origin))
        return f"{name}[{', '.join(type_str(a) if a is not Ellipsis else '...' for a in args)}]" if args else name
    if isinstance(tp, type):
        return tp.__name__
    return str(tp).replace("typing.", "")


def literal_choices(tp, depth: int = 0) -> list:
    """Every Literal value reachable in the type (through unions and containers); enums are reported
    apart because engines differ on whether they take the member name or value."""
    if depth > 6:
        return []
    origin = typing.get_origin(tp)
    if origin is typing.Literal:
        return [jsonable(a) for a in typing.get_args(tp)]
    return [c for a in typing.get_args(tp) for c in literal_choices(a, depth + 1)] if origin is not None else []


def enums_in(tp, depth: int = 0) -> list[type]:
    if depth > 6:
        return []
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return [tp]
    return [e for a in typing.get_args(tp) for e in enums_in(a, depth + 1)]


def classes_in(tp, depth: int = 0) -> list[type]:
    if depth > 6:
        return []
    if is_config_class(tp):
        return [tp]
    return [c for a in typing.get_args(tp) for c in classes_in(a, depth + 1)]


def enum_info(tp) -> dict | None:
    found = enums_in(tp)
    if not found:
        return None
    e = found[0]
    return {"class": public_path(e), "names": [m.name for m in e], "values": [jsonable(m.value) for m in e]}


_SOURCE_CACHE: dict[str, dict] = {}


def field_sources(cls) -> dict[str, tuple[str, int, str | None]]:
    """Field name -> (file, line, attribute docstring), from the class bodies along the MRO."""
    out: dict[str, tuple[str, int, str | None]] = {}
    for klass in reversed(cls.__mro__):
        if klass is object:
            continue
        try:
            path = inspect.getsourcefile(klass)
        except TypeError:
            continue
        if not path:
            continue
        tree = _SOURCE_CACHE.get(path)
        if tree is None:
            try:
                tree = ast.parse(Path(path).read_text())
            except (OSError, SyntaxError):
                continue
            _SOURCE_CACHE[path] = tree
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name == klass.__name__:
                body = node.body
                for i, stmt in enumerate(body):
                    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                        doc = None
                        nxt = body[i + 1] if i + 1 < len(body) else None
                        if isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant) \
                                and isinstance(nxt.value.value, str):
                            doc = nxt.value.value
                        out[stmt.target.id] = (rel(path), stmt.lineno, doc)
                break
    return out


def class_line(cls) -> str | None:
    try:
        return f"{rel(inspect.getsourcefile(cls))}:{inspect.getsourcelines(cls)[1]}"
    except (TypeError, OSError):
        return None


def _constraints(metadata) -> dict:
    out = {}
    for m in metadata or ():
        for key in ("gt", "ge", "lt", "le", "min_length", "max_length", "multiple_of", "pattern"):
            val = getattr(m, key, None)
            if val is not None:
                out[key] = jsonable(val)
    return out


def describe_class(cls, depth: int = 0, stack: tuple = ()) -> dict:
    kind = "pydantic-model" if _is_pydantic_model(cls) else (
        "pydantic-dataclass" if hasattr(cls, "__pydantic_fields__") else "dataclass")
    if kind == "pydantic-model":
        extra = cls.model_config.get("extra")
    elif kind == "pydantic-dataclass":
        cfg = getattr(cls, "__pydantic_config__", {}) or {}
        extra = cfg.get("extra")
    else:
        extra = "constructor"
    forbids = {"pydantic-model": extra == "forbid", "pydantic-dataclass": extra == "forbid",
               # A plain dataclass built with cls(**json) rejects unknown keys with a TypeError.
               "dataclass": True}[kind]
    out = {"class": public_path(cls), "defined_in": f"{cls.__module__}.{cls.__qualname__}", "kind": kind,
           "extra": extra, "forbids_unknown": forbids, "defined_at": class_line(cls), "fields": {}}
    if cls in stack or depth > MAX_DEPTH:
        out["fields"] = None
        out["truncated"] = True
        return out
    sources = field_sources(cls)
    pyd = getattr(cls, "model_fields", None) if kind == "pydantic-model" else getattr(cls, "__pydantic_fields__", None)
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except Exception:
        hints = {}
    if kind == "pydantic-model":
        names = list(pyd)
        init = dict.fromkeys(names, True)
    else:
        dfields = {f.name: f for f in dataclasses.fields(cls)}
        names = list(dfields)
        init = {n: f.init for n, f in dfields.items()}
    for name in names:
        finfo = (pyd or {}).get(name)
        tp = getattr(finfo, "annotation", None) if finfo is not None else None
        if tp is None:
            tp = hints.get(name, dataclasses.fields(cls)[names.index(name)].type if kind != "pydantic-model" else None)
        entry = {"type": type_str(tp), "choices": literal_choices(tp) or None}
        en = enum_info(tp)
        if en:
            entry["enum"] = en
        default, required, factory = _field_default(cls, name, finfo, kind)
        entry.update(default=default, required=required)
        if factory:
            entry["default_factory"] = factory
        if not init.get(name, True):
            entry["init"] = False
        cons = _constraints(getattr(finfo, "metadata", None))
        if cons:
            entry["constraints"] = cons
        if getattr(finfo, "alias", None):
            entry["alias"] = finfo.alias
        markers = [*(getattr(finfo, "metadata", None) or ()), *typing.get_args(hints.get(name))[1:]]
        if "SkipValidation" in repr(tp) or any(type(m).__name__ == "SkipValidation" for m in markers):
            entry["skip_validation"] = True
        nested = classes_in(tp)
        if nested:
            sub = nested[0]
            entry["class"] = public_path(sub)
            # Fields the engine fills in itself (SkipValidation) are not user-facing JSON keys.
            if not entry.get("skip_validation") and depth < MAX_DEPTH:
                entry["fields"] = describe_class(sub, depth + 1, (*stack, cls))["fields"]
        src = sources.get(name)
        if src:
            entry["defined_at"] = f"{src[0]}:{src[1]}"
            if src[2]:
                entry["doc"] = short(src[2])
        out["fields"][name] = entry
    return out


def _field_default(cls, name, finfo, kind):
    undefined = "PydanticUndefined"
    if finfo is not None:
        factory = getattr(finfo, "default_factory", None)
        if factory is not None:
            return None, False, getattr(factory, "__qualname__", repr(factory))
        default = getattr(finfo, "default", None)
        if repr(default) == undefined or type(default).__name__ == "PydanticUndefinedType":
            if kind != "pydantic-model":
                return _dataclass_default(cls, name)
            return None, True, None
        return jsonable(default), False, None
    return _dataclass_default(cls, name)


def _dataclass_default(cls, name):
    for f in dataclasses.fields(cls):
        if f.name != name:
            continue
        if f.default is not dataclasses.MISSING:
            default = f.default
            inner = getattr(default, "default", None)  # pydantic Field(...) used as a dataclass default
            if type(default).__name__ == "FieldInfo":
                factory = getattr(default, "default_factory", None)
                if factory is not None:
                    return None, False, getattr(factory, "__qualname__", repr(factory))
                return (None, True, None) if type(inner).__name__ == "PydanticUndefinedType" else (jsonable(inner), False, None)
            return jsonable(default), False, None
        if f.default_factory is not dataclasses.MISSING:
            return None, False, getattr(f.default_factory, "__qualname__", repr(f.default_factory))
        return None, True, None
    return None, True, None


# ---------------------------------------------------------------------------------------------
# argparse actions


def unwrap_type(fn, depth: int = 0, chain: list | None = None) -> tuple[list[str], list]:
    """The chain of parse functions inside ``fn`` and the leaf objects (types, json.loads, classes)."""
    chain = [] if chain is None else chain
    leaves: list = []
    if fn is None or depth > 8:
        return chain, leaves
    if isinstance(fn, type):
        chain.append(fn.__name__)
        return chain, [fn]
    if fn is json.loads:
        chain.append("json.loads")
        return chain, [fn]
    self_obj = getattr(fn, "__self__", None)
    if isinstance(self_obj, type):  # bound classmethod such as SomeConfig.from_cli
        chain.append(f"{self_obj.__name__}.{fn.__name__}")
        return chain, [self_obj]
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    chain.append(name)
    inner = []
    if isinstance(fn, types.FunctionType):
        inner += [c.cell_contents for c in (fn.__closure__ or ()) if _cell_ok(c)]
        inner += list(fn.__defaults__ or ())
        inner += list((fn.__kwdefaults__ or {}).values())
    if hasattr(fn, "func"):  # functools.partial
        inner += [fn.func, *fn.args]
    if hasattr(fn, "__wrapped__"):
        inner.append(fn.__wrapped__)
    for obj in inner:
        if obj is json.loads or is_config_class(obj) or obj in (int, float, str, bool):
            sub_chain, sub = unwrap_type(obj, depth + 1, [])
            chain.extend(sub_chain)
            leaves += sub
        elif callable(obj) and not isinstance(obj, type):
            sub_chain, sub = unwrap_type(obj, depth + 1, [])
            if sub:
                chain.extend(sub_chain)
                leaves += sub
    return chain, leaves


def _cell_ok(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
        return True
    except ValueError:
        return False


def type_name(action: argparse.Action, leaves: list) -> str | None:
    if action.nargs == 0:
        return "bool" if isinstance(action.const, bool) or isinstance(action, argparse.BooleanOptionalAction) \
            or type(action).__name__ in ("_StoreTrueAction", "_StoreFalseAction") else None
    if any(leaf is json.loads or is_config_class(leaf) for leaf in leaves):
        return "json"
    for leaf in leaves:
        if leaf in (int, float, str, bool):
            return leaf.__name__
    if action.type is None:
        return "str"
    return getattr(action.type, "__name__", type(action.type).__name__)


DEPRECATED_HELP = re.compile(r"(?i)(^\W*deprecated|\[deprecated\]|\(deprecated\b|\bthis (option|flag|argument|"
                             r"parameter) is deprecated|\bis deprecated and will be removed)")


def deprecation(action: argparse.Action, option: str) -> str | None:
    if getattr(action, "deprecated", False):
        return "argparse deprecated=True"
    try:
        from vllm.utils.argparse_utils import FlexibleArgumentParser

        if action in FlexibleArgumentParser._deprecated:
            return "FlexibleArgumentParser deprecated=True"
    except Exception:
        pass
    if "deprecat" in type(action).__name__.lower():
        return f"action class {type(action).__name__}"
    help_text = action.help or ""
    if re.search(rf"deprecating flag:\s*{re.escape(option)}\b", help_text):
        return "help: 'deprecating flag'"
    if DEPRECATED_HELP.search(help_text) or re.search(rf"{re.escape(option)}\b[^.]*\bis deprecated", help_text):
        return "help text"
    return None


def parser_info(parser: argparse.ArgumentParser) -> dict:
    return {"class": f"{type(parser).__module__}.{type(parser).__qualname__}", "prog": parser.prog,
            "allow_abbrev": parser.allow_abbrev, "prefix_chars": parser.prefix_chars,
            "fromfile_prefix_chars": parser.fromfile_prefix_chars, "add_help": parser.add_help}


def all_actions(parser: argparse.ArgumentParser) -> list[tuple[argparse.Action, str | None]]:
    """The parser's own actions plus those only shown in its help groups, with the group title."""
    out: dict[int, tuple[argparse.Action, str | None]] = {}
    titles: dict[int, str | None] = {}
    for group in [*parser._action_groups, *parser._mutually_exclusive_groups]:
        for action in group._group_actions:
            titles.setdefault(id(action), getattr(group, "title", None))
    for action in parser._actions:
        out[id(action)] = (action, titles.get(id(action)))
    for group in parser._action_groups:
        for action in group._group_actions:
            out.setdefault(id(action), (action, titles.get(id(action))))
    return list(out.values())


def describe_parser(parser: argparse.ArgumentParser, field_index: dict, entry_feeds_fields: bool):
    positionals, options = [], {}
    actions: dict[int, argparse.Action] = {}
    parsers: dict[str, dict] = {"entry": {**parser_info(parser), "role": "parses first (parse_known_args)"}}
    roles: dict[int, str] = {id(parser): "entry"}
    conflicts: list[str] = []
    for action, title in all_actions(parser):
        owner = getattr(action, "_probe_parser", None) or parser
        if id(owner) not in roles:
            role = _role(title, len(roles))
            roles[id(owner)] = role
            parsers[role] = {**parser_info(owner), "help_group": title,
                             "role": "parses what the entry parser left (shown in --help via this group)"}
        role = roles[id(owner)]
        chain, leaves = unwrap_type(action.type)
        tname = type_name(action, leaves)
        help_text = action.help if action.help is not argparse.SUPPRESS else None
        if not action.option_strings:
            if isinstance(action, argparse._SubParsersAction):
                positionals.append({"dest": action.dest, "subcommands": sorted(action.choices)})
                continue
            positionals.append({"dest": action.dest, "nargs": action.nargs, "type": tname,
                                "choices": _choices(action), "help": short(help_text)})
            continue
        actions[id(action)] = action
        negations = []
        if isinstance(action, argparse.BooleanOptionalAction):
            negations = [s for s in action.option_strings if s.startswith("--no-")
                         and "--" + s[5:] in action.option_strings]
        positives = [s for s in action.option_strings if s not in negations]
        primary = next((s for s in positives if s.startswith("--")), positives[0])
        env_var = HELP_ENV_RE.search(help_text or "")
        for opt in action.option_strings:
            is_neg = opt in negations
            entry = {
                "dest": action.dest,
                "takes_value": action.nargs != 0,
                "nargs": action.nargs,
                "choices": None if action.nargs == 0 else _choices(action),
                "type": tname,
                "aliases": [s for s in (negations if is_neg else positives) if s != opt],
                "deprecated": False,
            }
            # A negation is as deprecated as the flag it negates ("--no-kv-events" of "--kv-events").
            why = deprecation(action, "--" + opt[5:] if is_neg else opt)
            if why:
                entry["deprecated"] = True
                entry["deprecated_by"] = why
            if is_neg:
                entry["negates"] = "--" + opt[5:]
                entry["sets"] = False
            elif negations:
                entry["negation"] = [n for n in negations if n == "--no-" + opt[2:]] or negations
            entry["action"] = type(action).__name__
            entry["parser"] = role
            if action.nargs == "?":
                entry["value_optional"] = True
                entry["const"] = jsonable(action.const)
            if action.required:
                entry["required"] = True
            entry["default"] = jsonable(action.default) if action.default is not argparse.SUPPRESS else None
            if isinstance(action.metavar, tuple | list) and action.nargs not in (None, "?"):
                entry["metavar"] = list(action.metavar)
            elif isinstance(action.metavar, str) and "," in action.metavar and action.choices is None:
                entry["suggested_values"] = [v.strip() for v in action.metavar.strip("{}").split(",")]
            if chain and chain != [tname]:
                entry["type_chain"] = chain
            if env_var:
                entry["env_var"] = env_var.group(1)
            ef = field_index.get(action.dest) if (role != "entry" or entry_feeds_fields) else None
            if ef:
                entry["engine_field"] = ef
            at = getattr(action, "_probe_defined_at", None)
            if at:
                entry["defined_at"] = at
            if opt == primary:
                entry["help"] = short(help_text)
            else:
                entry["help_at"] = primary
            if opt in options:
                # The entry parser runs first, so its definition is the one that takes effect.
                conflicts.append(f"{opt} is defined by parser '{options[opt]['parser']}' and by '{role}'")
                options[opt].setdefault("also_in", []).append(role)
                continue
            options[opt] = entry
    return positionals, options, actions, parsers, conflicts


def _role(title: str | None, n: int) -> str:
    t = (title or "").lower()
    for key in ("engine", "router"):
        if key in t:
            return key
    return f"parser{n}"


def _choices(action: argparse.Action) -> list | None:
    if action.choices is None:
        return None
    return [str(c.value if isinstance(c, enum.Enum) else c) for c in action.choices]


# ---------------------------------------------------------------------------------------------
# engine-specific knowledge: where the config classes of JSON-valued options live


def engine_field_index(command: str) -> tuple[dict, list[type]]:
    """dest -> the engine-args field (type, Literal/enum values) it feeds, and the config classes to
    search for the class of a JSON-valued option."""
    if "vllm" in command:
        return vllm_field_index()
    if "sglang" in command:
        try:
            from sglang.srt.server_args import ServerArgs
        except Exception as exc:
            NOTES.append(f"sglang ServerArgs unavailable: {exc}")
            return {}, []
        return dataclass_field_index([ServerArgs]), []
    return {}, []


def dataclass_field_index(owners: list[type]) -> dict:
    index = {}
    for owner in owners:
        try:
            hints = typing.get_type_hints(owner, include_extras=True)
        except Exception:
            hints = {f.name: f.type for f in dataclasses.fields(owner)}
        sources = field_sources(owner)
        for f in dataclasses.fields(owner):
            if f.name in index:
                continue
            tp = hints.get(f.name, f.type)
            entry = {"owner": owner.__name__, "field": f.name, "type": type_str(tp)}
            choices = literal_choices(tp)
            if choices:
                entry["choices"] = choices
            en = enum_info(tp)
            if en:
                entry["enum"] = en
            src = sources.get(f.name)
            if src:
                entry["defined_at"] = f"{src[0]}:{src[1]}"
            index[f.name] = entry
    return index


def vllm_field_index() -> tuple[dict, list[type]]:
    try:
        from vllm.config import VllmConfig
        from vllm.engine.arg_utils import AsyncEngineArgs, EngineArgs
    except Exception:
        return {}, []
    index = dataclass_field_index([AsyncEngineArgs, EngineArgs])
    roots = [EngineArgs, VllmConfig]
    import vllm.config as vc

    for name in getattr(vc, "__all__", dir(vc)):
        obj = getattr(vc, name, None)
        if is_config_class(obj) and obj not in roots:
            roots.append(obj)
    return index, roots


def vllm_json_class(dest: str, roots: list[type]) -> tuple[type | None, str | None]:
    """The config class an option's JSON value becomes, from the field annotations of vLLM's config roots."""
    for root in roots:
        try:
            hints = typing.get_type_hints(root, include_extras=True)
        except Exception:
            hints = {}
        names = {f.name for f in dataclasses.fields(root)} if dataclasses.is_dataclass(root) else set(hints)
        if dest in names:
            tp = hints.get(dest)
            found = classes_in(tp) if tp is not None else []
            if found:
                return found[0], f"{root.__name__}.{dest}: {type_str(tp)}"
    return None, None


# JSON-valued options whose argparse type is plain ``str`` and whose class is only applied later.
# Each hint names the class and the installed file that applies it, and is checked against that file.
JSON_CLASS_HINTS = {
    "kv_events_config": [
        ("sglang.srt.disaggregation.kv_events", "KVEventsConfig", "sglang/srt/disaggregation/kv_events.py",
         "KVEventsConfig.from_cli("),
        ("sglang.srt.disaggregation.kv_events", "KVEventsConfig", "sglang/srt/server_args.py",
         "KVEventsConfig.from_cli("),
    ],
}


def hinted_class(dest: str) -> tuple[type | None, str | None]:
    for module, name, path, needle in JSON_CLASS_HINTS.get(dest, []):
        try:
            cls = getattr(importlib.import_module(module), name)
        except Exception:
            continue
        lines = [i for i, line in enumerate((SITE / path).read_text().splitlines(), 1) if needle in line] \
            if (SITE / path).exists() else []
        if lines:
            return cls, f"{path}:{lines[0]} ({needle})"
    return None, None


JSON_HELP = re.compile(r"(?i)\b(JSON[- ](string|object|dict|dictionary|format|encoded)|as (a )?JSON|in JSON)\b")


def json_options(actions: dict, roots: list[type], entry: argparse.ArgumentParser, entry_feeds_fields: bool) -> dict:
    out = {}
    done = set()
    for action in actions.values():
        if id(action) in done or action.nargs == 0:
            continue
        done.add(id(action))
        opt = next((s for s in action.option_strings if s.startswith("--")), action.option_strings[0])
        chain, leaves = unwrap_type(action.type)
        cls = next((leaf for leaf in leaves if is_config_class(leaf)), None)
        via = f"argparse type {' -> '.join(chain)}" if cls else None
        owner = getattr(action, "_probe_parser", None) or entry
        if cls is None and roots and (owner is not entry or entry_feeds_fields):
            cls, via = vllm_json_class(action.dest, roots)
        if cls is None:
            cls, via = hinted_class(action.dest)
        is_json = any(leaf is json.loads for leaf in leaves) or bool(JSON_HELP.search(action.help or ""))
        if cls is None and not is_json:
            continue
        if cls is None:
            out[opt] = {"class": None, "fields": None, "forbids_unknown": False, "free_form": True,
                        "parsed_by": " -> ".join(chain) or "str (JSON per help text)"}
        else:
            desc = describe_class(cls)
            desc["resolved_via"] = via
            out[opt] = desc
        out[opt]["aliases"] = [s for s in action.option_strings if s != opt]
    return dict(sorted(out.items()))


def vllm_facts() -> dict:
    facts = {}
    try:
        from vllm.model_executor.layers import quantization as q

        facts["quantization_methods"] = list(q.QUANTIZATION_METHODS)
        facts["deprecated_quantization_methods"] = list(getattr(q, "DEPRECATED_QUANTIZATION_METHODS", []))
    except Exception as exc:
        NOTES.append(f"quantization methods unavailable: {exc}")
    try:
        import vllm.config.quantization as qc

        facts["online_quant_shorthands"] = list(qc.ONLINE_QUANT_SHORTHAND_NAMES)
        src = Path(qc.__file__).read_text().splitlines()
        line = next((i for i, s in enumerate(src, 1) if s.startswith("ONLINE_QUANT_SHORTHAND_NAMES")), None)
        facts["online_quant_where"] = {"where": rel(qc.__file__), "line": line}
        shorthands = getattr(qc, "_ONLINE_SHORTHANDS", {})
        from vllm.model_executor.layers.quantization.utils import quant_utils

        # QuantKey reprs are unreadable; name each key after the quant_utils constant it is.
        key_names = {id(v): n for n, v in vars(quant_utils).items() if n.startswith("k")}

        def spec(layer):
            if layer is None:
                return None
            return {part: (key_names.get(id(getattr(layer, part)), str(getattr(layer, part)))
                           if getattr(layer, part) is not None else None) for part in ("weight", "activation")}

        facts["online_quant_specs"] = {name: {"linear": spec(cfg.linear), "moe": spec(cfg.moe)}
                                       for name, cfg in shorthands.items()}
        facts["online_quant_loader"] = find_line("vllm/model_executor/model_loader/weight_utils.py",
                                                 "OnlineQuantizationConfig(args=")
    except Exception as exc:
        NOTES.append(f"online quantization shorthands unavailable: {exc}")
    try:
        from vllm.v1.attention.backends.registry import AttentionBackendEnum

        facts["attention_backends"] = [m.name for m in AttentionBackendEnum]
    except Exception as exc:
        NOTES.append(f"attention backends unavailable: {exc}")
    facts["adaptive_verification_guard"] = find_line("vllm/config/speculative.py",
                                                     "Adaptive verification only supported")
    facts["checks"] = vllm_checks()
    return facts


def vllm_checks() -> list[dict]:
    """Feed a few values to the real config code, to show how --attention-backend and --quantization
    values are taken beyond argparse (which accepts any string for both)."""
    try:
        from vllm.config import AttentionConfig
        from vllm.config.quantization import resolve_quantization_config
    except Exception as exc:
        return [{"call": "import vllm.config", "result": f"{type(exc).__name__}: {short(str(exc), 200)}"}]
    calls = [
        ("vllm.config.AttentionConfig(backend='auto').backend", lambda: AttentionConfig(backend="auto").backend),
        ("vllm.config.AttentionConfig(backend='flashinfer').backend",
         lambda: AttentionConfig(backend="flashinfer").backend),
        ("vllm.config.AttentionConfig(backend='no_such_backend')", lambda: AttentionConfig(backend="no_such_backend")),
        ("vllm.config.quantization.resolve_quantization_config('mxfp4', None)",
         lambda: resolve_quantization_config("mxfp4", None)),
        ("vllm.config.quantization.resolve_quantization_config('fp8', None)",
         lambda: resolve_quantization_config("fp8", None)),
    ]
    out = []
    for call, fn in calls:
        try:
            result = short(repr(fn()), 200)
        except Exception as exc:
            result = f"{type(exc).__name__}: {short(str(exc), 200)}"
        out.append({"call": call, "result": result})
    return out


def find_line(path: str, needle: str) -> dict | None:
    full = SITE / path
    if not full.exists():
        return None
    for i, line in enumerate(full.read_text().splitlines(), 1):
        if needle in line:
            return {"where": path, "line": i, "text": line.strip()}
    return None


def sglang_facts() -> dict:
    facts = {}
    try:
        from sglang.srt.disaggregation import kv_events

        # KVEventsConfig.publisher is a plain str; the values it takes are the publisher registry's keys.
        facts["kv_events_publishers"] = sorted(kv_events.EventPublisherFactory._registry)
    except Exception as exc:
        NOTES.append(f"sglang kv-event publishers unavailable: {type(exc).__name__}: {short(str(exc), 120)}")
    path = SITE / "sglang/srt/model_executor/model_runner_components/load_model_utils.py"
    candidates = [path] if path.exists() else list((SITE / "sglang").rglob("*.py"))
    for p in candidates:
        try:
            tree = ast.parse(p.read_text())
        except (OSError, SyntaxError):
            continue
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and "UNBALANCED" in t.id
                                                    and "TIMEOUT" in t.id for t in node.targets):
                name = node.targets[0].id
                uses = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name
                        and isinstance(n.ctx, ast.Load)]
                facts["unbalanced_loading_timeout"] = {
                    "name": name, "value": jsonable(getattr(node.value, "value", None)),
                    "where": rel(str(p)), "line": node.lineno, "used_at_lines": uses}
    return facts


def probe_command(name: str) -> dict:
    _ownership_hooks()
    record_environ()
    parser, how = COMMANDS[name]()
    index, roots = engine_field_index(name)
    # Dynamo's own parser fills Dynamo configs; only the engine's options map to engine-args fields.
    positionals, options, actions, parsers, conflicts = describe_parser(
        parser, index, entry_feeds_fields=not name.startswith("dynamo."))
    out = {
        "python": sys.version.split()[0],
        "parser": {"how": how, **parsers["entry"]},
        "parsers": parsers,
        "positionals": positionals,
        "options": dict(sorted(options.items())),
        "json_options": json_options(actions, roots, parser, not name.startswith("dynamo.")),
    }
    if conflicts:
        NOTES.append("option strings defined twice: " + "; ".join(conflicts))
    if any(p["class"].endswith("FlexibleArgumentParser") for p in parsers.values()):
        NOTES.append("FlexibleArgumentParser also accepts underscores for dashes in option names "
                     "(--tensor_parallel_size), dotted keys for JSON options (--speculative-config.method x, "
                     "merged into one JSON dict; '--opt.key+ v' appends to a list), human-readable numbers "
                     "(1k, 2M) in those values, -O<n> for --optimization-level, and --config FILE.yaml")
    if name == "dynamo.vllm":
        NOTES.append("dynamo.vllm parses its own options first (allow_abbrev=False) and hands the rest to a "
                     "FlexibleArgumentParser(AsyncEngineArgs.add_cli_args(async_args_only=False)), so vLLM's "
                     "dotted/underscore forms work for the engine options")
    if name == "dynamo.sglang":
        NOTES.append("dynamo.sglang parses its own options first and hands the rest to an "
                     "argparse.ArgumentParser with ServerArgs.add_cli_args (plus 'gms' added to --load-format)")
    if name == "dynamo.frontend":
        NOTES.append("dynamo.frontend passes the options its parser does not know on to vLLM's "
                     "FrontendArgs+AsyncEngineArgs parser when the chat processor is vllm, or to "
                     "--tool-call-parser/--reasoning-parser/--chat-template when it is sglang "
                     "(dynamo/frontend/main.py parse_args); those pass-through options are not listed here")
    if "vllm" in name:
        out["facts"] = vllm_facts()
    if name == "dynamo.sglang":
        out["facts"] = sglang_facts()
    out["notes"] = list(dict.fromkeys(NOTES))
    out["env_reads"] = ENV_READS
    return out


# ---------------------------------------------------------------------------------------------
# environment variables


def _call_name(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:
        return type(node).__name__


ENVIRON_CALLS = re.compile(r"(^|\.)(getenv|environ\.get|environ\.setdefault|environ\.pop|getenvb)$")


def classify(const: ast.Constant, parents: dict) -> str:
    parent = parents.get(const)
    if isinstance(parent, ast.keyword):
        call = parents.get(parent)
        return f"call {_call_name(call.func)}({parent.arg}=...)" if isinstance(call, ast.Call) else "keyword"
    if isinstance(parent, ast.Call):
        if const in parent.args:
            fn = _call_name(parent.func)
            return ("environ read " if ENVIRON_CALLS.search(fn) else "call ") + f"{fn}(...)"
        return "call"
    if isinstance(parent, ast.Subscript):
        base = _call_name(parent.value)
        return f"environ read {base}[...]" if "environ" in base else f"subscript {base}[...]"
    if isinstance(parent, ast.Compare):
        return f"compare {_call_name(parent)[:60]}"
    if isinstance(parent, ast.Dict):
        return "dict key" if const in parent.keys else "dict value"
    if isinstance(parent, ast.Assign | ast.AnnAssign):
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        return "assigned to " + ", ".join(_call_name(t) for t in targets)
    if isinstance(parent, ast.List | ast.Tuple | ast.Set):
        grand = parents.get(parent)
        if isinstance(grand, ast.Call):
            return f"listed in call {_call_name(grand.func)}(...)"
        return "listed in a collection"
    if isinstance(parent, ast.Expr):
        return "docstring"
    return f"literal in {type(parent).__name__}"


METHOD_RANK = ("environ read", "call", "dict key", "assigned", "subscript", "compare", "listed", "keyword",
               "literal", "dict value", "docstring")


def _rank(method: str) -> int:
    return next((i for i, p in enumerate(METHOD_RANK) if method.startswith(p)), len(METHOD_RANK))


def scan_env(dist_names: list[str]) -> dict:
    env: dict[str, dict] = {}
    prefixes: dict[str, list] = {}
    notes: list[str] = []

    def add(name: str, package: str, where: str, line: int | None, method: str) -> None:
        entry = {"package": package, "where": where, "line": line, "method": method}
        cur = env.get(name)
        if cur is None:
            env[name] = {**entry, "also": []}
            return
        if _rank(method) < _rank(cur["method"]):
            also = [{k: cur[k] for k in ("package", "where", "line", "method")}, *cur["also"]]
            env[name] = {**entry, "also": also[:6]}
        elif len(cur["also"]) < 6 and (where, method) not in {(a["where"], a["method"]) for a in cur["also"]}:
            cur["also"].append(entry)

    so_hits: list[tuple[list[str], str, str, str]] = []
    for dist_name in dist_names:
        try:
            dist = md.distribution(dist_name)
        except md.PackageNotFoundError:
            notes.append(f"env scan: {dist_name} is not installed")
            continue
        package = dist.metadata["Name"]
        py_files = so_files = docstrings = 0
        for f in dist.files or ():
            path = str(f)
            if "/tests/" in f"/{path}" or path.startswith("../"):
                continue
            full = SITE / path
            if path.endswith(".py"):
                py_files += 1
                try:
                    tree = ast.parse(full.read_text(errors="replace"))
                except (OSError, SyntaxError, ValueError):
                    continue
                parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
                for node in ast.walk(tree):
                    if isinstance(node, ast.Constant) and isinstance(node.value, str):
                        value = node.value
                        if ENV_RE.match(value):
                            method = classify(node, parents)
                            if method == "docstring":
                                docstrings += 1
                            add(value, package, path, node.lineno, f"{method} (AST)")
                        elif ENV_PREFIX_RE.match(value):
                            prefixes.setdefault(value, []).append(f"{path}:{node.lineno}")
                    elif isinstance(node, ast.JoinedStr):
                        head = node.values[0] if node.values else None
                        # A name with a formatted part (f"DYN_{engine}_X"), not a message that starts with one.
                        if isinstance(head, ast.Constant) and isinstance(head.value, str) \
                                and re.fullmatch(r"(VLLM|SGLANG|SGL|DYN)_[A-Z0-9_]*", head.value) \
                                and len(node.values) > 1 and isinstance(node.values[1], ast.FormattedValue):
                            prefixes.setdefault(_call_name(node), []).append(f"{path}:{node.lineno}")
            elif re.search(r"\.so(\.|$)", path) and full.exists():
                so_files += 1
                so_hits += compiled_strings(full.read_bytes(), package, path)
        notes.append(f"env scan: {package} {dist.version}: {py_files} .py files (AST), {so_files} compiled "
                     f"extension(s) (byte strings); tests/ skipped")
    runtime_sources(env, add, notes)
    known = set(env) | {r[0] for r, *_ in so_hits if len(r) == 1 and not r[0].endswith("_")}
    for readings, package, path, quality in so_hits:
        if readings[0].endswith("_"):
            prefixes.setdefault(readings[0], []).append(path)
            continue
        confirmed = [r for r in readings if r in known]
        if confirmed:
            readings, quality = confirmed[:1], "also in source files"
        else:
            # A name known from source files that this string merely starts with is the real one.
            stem = max((k for k in known if readings[0].startswith(k)), key=len, default=None)
            if stem is not None:
                readings, quality = [stem], f"{quality}; read as the source-file name it starts with"
        for name in readings:
            if ENV_RE.match(name):
                add(name, package, path, None, f"string in compiled extension ({quality})")
    for entry in env.values():
        if entry["method"].startswith("docstring"):
            entry["only_mentioned_in_docs"] = True
    return {"env": dict(sorted(env.items())), "prefixes": {k: v[:5] for k, v in sorted(prefixes.items())},
            "notes": notes}


def compiled_strings(data: bytes, package: str, path: str) -> list[tuple[list[str], str, str, str]]:
    """Candidate names in a compiled extension, each as its alternative readings.

    Rust string tables run literals together with no separator ("DYN_COMPONENTEndpoint name ...",
    "DYN_EVENT_PLANEnats"), so a name is cut where another one starts; when lowercase text follows,
    the last capital may belong to the next literal or not, and both readings are kept.
    """
    out = []
    for m in re.finditer(rb"(?:VLLM|SGLANG|DYN)_[A-Z0-9_]{2,}", data):
        pieces = [p.decode() for p in re.split(rb"(?=(?:VLLM|SGLANG|DYN)_)", m.group(0)) if p]
        following = data[m.end():m.end() + 1]
        for i, piece in enumerate(pieces):
            if i < len(pieces) - 1 or not following.isalnum():
                out.append(([piece], package, path, "ends where another name or a non-alphanumeric byte starts"))
            elif following.islower():
                out.append(([piece, piece[:-1]], package, path,
                            "ambiguous: lowercase text follows, the last capital may start the next literal"))
            else:
                out.append(([piece], package, path, "ambiguous: runs into the next literal"))
    return out


def runtime_sources(env: dict, add, notes: list[str]) -> None:
    """The engines' own registries of environment variables, read by importing them."""
    try:
        import vllm.envs as venvs

        path = rel(venvs.__file__)
        for name in venvs.environment_variables:
            add(name, "vllm", path, None, "vllm.envs.environment_variables key (import)")
        for name, entry in env.items():
            if name.startswith("VLLM_"):
                entry["in_vllm_registry"] = name in venvs.environment_variables
        notes.append(f"vllm.envs.environment_variables: {len(venvs.environment_variables)} names; "
                     "vllm.envs.validate_environ warns about (or, with --fail-on-environ-validation, rejects) "
                     "any VLLM_* variable outside it, so in_vllm_registry=false names draw that warning")
    except Exception as exc:
        if "vllm" in sys.modules or _installed("vllm"):
            notes.append(f"vllm.envs import failed: {type(exc).__name__}: {short(str(exc), 160)}")
    try:
        from sglang.srt import environ as senv

        path = rel(senv.__file__)
        count = 0
        for attr, val in vars(senv.Envs).items():
            name = getattr(val, "name", None)
            if isinstance(val, senv.EnvField) and name:
                count += 1
                add(name, "sglang", path, None, f"sglang.srt.environ.Envs.{attr} ({type(val).__name__}, import)")
                old = getattr(val, "deprecated_name", None)
                if old:
                    add(old, "sglang", path, None, f"deprecated alias of {name} (import)")
        for old, dep in getattr(senv, "_DEPRECATED_ENVS", {}).items():
            add(old, "sglang", path, None, "sglang.srt.environ._DEPRECATED_ENVS key (import)")
            if old in env:
                env[old]["deprecated"] = True
                if getattr(dep, "replacement", None):
                    env[old]["replacement"] = dep.replacement
        notes.append(f"sglang.srt.environ.Envs: {count} fields; SGL_* names are rewritten to SGLANG_* at import "
                     "(_handle_deprecated_envs)")
    except Exception as exc:
        if _installed("sglang"):
            notes.append(f"sglang.srt.environ import failed: {type(exc).__name__}: {short(str(exc), 160)}")


def _installed(name: str) -> bool:
    try:
        md.distribution(name)
        return True
    except md.PackageNotFoundError:
        return False


# ---------------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    cmd = sub.add_parser("command")
    cmd.add_argument("name", choices=sorted(COMMANDS))
    env = sub.add_parser("env")
    env.add_argument("dists", nargs="+")
    args = parser.parse_args()

    # Engines print banners and warnings on stdout; keep fd 1 for the JSON alone.
    real_stdout = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), line_buffering=True)
    result = probe_command(args.name) if args.mode == "command" else scan_env(args.dists)
    json.dump(result, real_stdout, ensure_ascii=False)
    real_stdout.flush()
    # Engine imports leave threads and atexit hooks behind; none of them matter here.
    os._exit(0)


if __name__ == "__main__":
    main()

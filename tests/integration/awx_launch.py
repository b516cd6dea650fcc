"""Launch one of the collection's AWX job templates as AWX launches it, without an AWX server.

AWX runs a job by preparing a private data directory and handing it to ansible-runner (the same
library, from PyPI, that runs inside its execution environments). This module prepares that
directory as AWX 24 does (read in ansible/awx: awx/main/tasks/jobs.py ``RunJob``,
awx/main/models/credential ``CredentialType.inject_credential``, awx/main/models/mixins.py
``SurveyJobTemplateMixin``, awx/main/utils/safe_yaml.py) and calls ``ansible_runner.run``:

* ``project/``: the project's checkout (the files Git would check out);
* ``inventory/hosts``: the job's inventory as AWX writes it, a Python script printing JSON;
* ``env/extravars``: the job's extra vars, the survey's defaults overlaid with the answers, with every
  string marked ``!unsafe`` (AWX's ``safe_dump``). AWX writes this file itself rather than passing
  ``extravars=`` to ansible-runner: with AWX's ``suppress_env_files`` runner would put them on the
  command line, which it records in ``artifacts/<ident>/command``, password answers included;
* the credential's injectors rendered from the credential type the collection creates
  (``playbooks/awx_configure.yml``): the ``file`` injector written to a private file under ``env/``,
  the ``env`` injector as environment variables, the ``extra_vars`` injector as a second YAML file
  passed with ``-e @file`` in ``env/cmdline``;
* the environment of RunJob.build_env (AWX's ANSIBLE_* settings, the roles and collections paths
  built from the project's ansible.cfg, JOB_ID ...).

What differs from a real AWX: no execution-environment container (there is no container engine here:
ansible-runner runs ansible-playbook directly, with this virtualenv's Python and collections), no
receptor, and the inventory comes from the test instead of an inventory sync.
"""

from __future__ import annotations

import configparser
import contextlib
import itertools
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import ansible_runner
import yaml
from jinja2.sandbox import ImmutableSandboxedEnvironment

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
_IDS = itertools.count(101)


def job_templates() -> dict[str, dict]:
    data = yaml.safe_load((REPO / "awx" / "job_templates.yml").read_text())
    return {t["name"]: t for t in data["controller_templates"]}


def credential_type() -> dict:
    """The kubeconfig credential type exactly as playbooks/awx_configure.yml creates it."""
    loader = type("Loader", (yaml.SafeLoader,), {})
    loader.add_constructor("!unsafe", lambda ldr, node: ldr.construct_scalar(node))
    play = yaml.load((REPO / "playbooks" / "awx_configure.yml").read_text(), Loader=loader)[0]
    task = next(t for t in play["tasks"] if "awx.awx.credential_type" in t)
    return task["awx.awx.credential_type"]


# ------------------------------------------------------------------------------------------ surveys
def _survey_error(question: dict, value) -> str | None:
    """What AWX's launch validation (_survey_element_validation) says about one answer, or None."""
    kind, name = question["type"], question["variable"]
    if value is None:
        return None  # a blank optional text answer: AWX 24.6.1 sends null (ansible/awx#16205)
    if kind in ("text", "textarea", "password"):
        if not isinstance(value, str):
            return f"Value {value} for '{name}' expected to be a string."
    elif kind == "integer":
        if type(value) is not int:
            return f"Value {value} for '{name}' expected to be an integer."
        if question.get("min") not in ("", None) and value < int(question["min"]):
            return f"'{name}' value {value} is too small"
        if question.get("max") not in ("", None) and value > int(question["max"]):
            return f"'{name}' value {value} is too large"
    elif kind == "float":
        if type(value) not in (int, float):
            return f"Value {value} for '{name}' expected to be a numeric type."
    elif kind == "multiplechoice" and value not in question["choices"]:
        return f"Value {value} for '{name}' expected to be one of {question['choices']}."
    return None


SURVEY_PREFIX = "survey_"


def survey_extra_vars(template: dict, answers: dict) -> dict:
    """The job's extra vars for these survey answers: the survey's defaults, then the answers
    (JT extra_vars -> survey defaults -> runtime answers). An answer AWX would refuse at launch fails."""
    spec = json.loads((REPO / template["survey_file"]).read_text())["spec"]
    # answers by the option each question sets (its variable is survey_<option>)
    answers = {f"{SURVEY_PREFIX}{name}": value for name, value in answers.items()}
    by_name = {q["variable"]: q for q in spec}
    unknown = set(answers) - set(by_name)
    assert not unknown, f"not questions of {template['name']}: {sorted(unknown)}"
    errors = [e for name, v in answers.items() if (e := _survey_error(by_name[name], v))]
    errors += [f"'{q['variable']}' value missing" for q in spec if q["required"] and q["variable"] not in answers]
    assert not errors, f"AWX would refuse this launch of {template['name']}: {errors}"
    defaults = {q["variable"]: q["default"] for q in spec if q.get("default") is not None}
    return {**defaults, **answers}


class _UnsafeDumper(yaml.SafeDumper):
    """AWX's safe_dump: every string of an extra var is !unsafe (never templated)."""

    def represent_data(self, data):
        if isinstance(data, str):
            return self.represent_scalar("!unsafe", data)
        return super().represent_data(data)


def _write_private(path: Path, content: str, mode: int = 0o600) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=mode)
    path.write_text(content)
    return path


# ------------------------------------------------------------------------------------- credentials
def inject_credential(ctype: dict, inputs: dict, private_data_dir: Path) -> tuple[dict, list[str]]:
    """(environment, extra command-line arguments) of a credential of ``ctype`` with ``inputs``."""
    sandbox = ImmutableSandboxedEnvironment()
    tower = type("TowerNamespace", (), {})()
    namespace = {"tower": tower, **{k: v for k, v in inputs.items() if v not in ("", None)}}
    injectors = ctype["injectors"]
    for label, template in injectors.get("file", {}).items():
        handle, name = tempfile.mkstemp(dir=private_data_dir / "env")
        os.close(handle)
        path = Path(name)
        path.write_text(sandbox.from_string(template).render(**namespace))
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)
        if "." not in label:
            tower.filename = str(path)
        else:
            if not hasattr(tower, "filename"):
                tower.filename = type("TowerNamespace", (), {})()
            setattr(tower.filename, label.split(".", 1)[1], str(path))
    env = {k: sandbox.from_string(v).render(**namespace) for k, v in injectors.get("env", {}).items()}
    args: list[str] = []
    extra = {k: sandbox.from_string(v).render(**namespace) for k, v in injectors.get("extra_vars", {}).items()}
    if extra:
        handle, name = tempfile.mkstemp(dir=private_data_dir / "env")
        os.close(handle)
        Path(name).write_text(yaml.dump(extra, Dumper=_UnsafeDumper, default_flow_style=False))
        Path(name).chmod(stat.S_IRUSR)
        args += ["-e", f"@{name}"]
    return env, args


# ---------------------------------------------------------------------------------------- the job
@dataclass
class Job:
    """One finished job: what ansible-runner returned and left on disk."""

    runner: object
    private_data_dir: Path
    ident: str

    @property
    def status(self) -> str:
        return self.runner.status

    @property
    def rc(self) -> int:
        return self.runner.rc

    @property
    def artifacts(self) -> Path:
        return self.private_data_dir / "artifacts" / self.ident

    @property
    def project(self) -> Path:
        return self.private_data_dir / "project"

    def events(self) -> list[dict]:
        """The job events ansible-runner wrote, in order (what AWX stores and shows as the job output)."""
        files = sorted((self.artifacts / "job_events").glob("*.json"), key=lambda p: int(p.name.split("-", 1)[0]))
        return [json.loads(p.read_text()) for p in files]

    def task_events(self, event: str, task: str) -> list[dict]:
        return [e for e in self.events() if e["event"] == event and e.get("event_data", {}).get("task") == task]

    def stats(self) -> dict:
        (stats,) = [e for e in self.events() if e["event"] == "playbook_on_stats"]
        return stats["event_data"]

    def artifact_text(self) -> str:
        """Every file under artifacts/, concatenated (for secret scans)."""
        return "\n".join(p.read_text(errors="replace") for p in sorted(self.artifacts.rglob("*")) if p.is_file())

    def output(self) -> str:
        return "".join(e.get("stdout", "") + "\n" for e in self.events())


def _project_copy(dest: Path) -> str:
    """The project as AWX's project update checks it out: the files Git knows (here, with the work
    tree's uncommitted edits); returns the revision."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src, dst = REPO / rel, dest / rel
        if not src.exists() and not src.is_symlink():
            continue  # deleted in the work tree
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            os.symlink(os.readlink(src), dst)
        else:
            shutil.copy2(src, dst)
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()


def _inventory_script(inventory: dict) -> str:
    """AWX's inventory file for a job: a script that prints the inventory as JSON."""
    return "#! /usr/bin/env python3\n# -*- coding: utf-8 -*-\nprint(%r)\n" % json.dumps(inventory)


def _project_config(project: Path) -> dict:
    parser = configparser.ConfigParser()
    parser.read(project / "ansible.cfg")
    return dict(parser["defaults"]) if parser.has_section("defaults") else {}


@contextlib.contextmanager
def _worker_environment():
    """The job sees AWX's environment, not the test runner's (no ANSIBLE_CONFIG, kubeconfig or token)."""
    saved = {k: os.environ.pop(k) for k in list(os.environ)
             if k.startswith(("ANSIBLE_", "K8S_AUTH_", "KUBECONFIG", "HF_TOKEN", "MOLECULE_"))}
    try:
        yield
    finally:
        os.environ.update(saved)


def launch(base: Path, template_name: str, answers: dict, inventory: dict, credential: dict | None = None,
           limit: str | None = None, timeout: int = 900) -> Job:
    """Run job template ``template_name`` with survey ``answers`` against ``inventory`` (AWX's
    ``get_script_data`` shape), with a credential of the collection's kubeconfig type when given."""
    template = job_templates()[template_name]
    ident = str(next(_IDS))
    pdd = Path(tempfile.mkdtemp(prefix=f"awx_{ident}_", dir=base))
    pdd.chmod(stat.S_IRWXU)
    for sub in ("inventory", "env", "cp", "requirements_collections", "requirements_roles"):
        (pdd / sub).mkdir()
    revision = _project_copy(pdd / "project")

    extra_vars = survey_extra_vars(template, answers)
    for prefix in ("awx", "tower"):  # a few of AWX's meta vars (awx_meta_vars)
        extra_vars |= {f"{prefix}_job_id": int(ident), f"{prefix}_job_launch_type": "manual",
                       f"{prefix}_job_template_name": template_name, f"{prefix}_project_revision": revision,
                       f"{prefix}_user_name": "admin"}
    _write_private(pdd / "env" / "extravars", yaml.dump(extra_vars, Dumper=_UnsafeDumper, default_flow_style=False))
    inventory_path = _write_private(pdd / "inventory" / "hosts", _inventory_script(inventory), mode=0o700)

    args = ["-u", "root"] + (["-l", limit] if limit else [])
    config = _project_config(pdd / "project")
    env = {
        # settings.ANSIBLE_* of AWX's defaults.py, then RunJob.build_env
        "ANSIBLE_HOST_KEY_CHECKING": "False", "ANSIBLE_PARAMIKO_RECORD_HOST_KEYS": "False",
        "ANSIBLE_FORCE_COLOR": "True", "ANSIBLE_INVENTORY_UNPARSED_FAILED": "True",
        "AWX_PRIVATE_DATA_DIR": str(pdd), "JOB_ID": ident, "INVENTORY_ID": "1", "PROJECT_REVISION": revision,
        "ANSIBLE_RETRY_FILES_ENABLED": "False", "MAX_EVENT_RES": "700000", "AWX_HOST": "https://awx.example.invalid",
        "ANSIBLE_SSH_CONTROL_PATH_DIR": str(pdd / "cp"),
        "ANSIBLE_ROLES_PATH": ":".join(filter(None, [str(pdd / "requirements_roles"), config.get("roles_path"),
                                                     "~/.ansible/roles:/usr/share/ansible/roles:/etc/ansible/roles"])),
        "ANSIBLE_COLLECTIONS_PATH": ":".join(filter(None, [str(pdd / "requirements_collections"),
                                                           config.get("collections_path"),
                                                           "~/.ansible/collections:/usr/share/ansible/collections"])),
        # AWX prepends its own indirect_instance_count callback (of its execution environments) to these.
        "ANSIBLE_CALLBACKS_ENABLED": config.get("callbacks_enabled", ""),
        "PATH": f"{BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}",
    }
    if credential is not None:
        cred_env, cred_args = inject_credential(credential_type(), credential, pdd)
        env |= cred_env
        args += cred_args
    _write_private(pdd / "env" / "cmdline", ansible_runner.utils.args2cmdline(*args))
    _write_private(pdd / "env" / "settings", json.dumps({"job_timeout": timeout, "suppress_ansible_output": True}))

    with _worker_environment():
        result = ansible_runner.run(ident=ident, private_data_dir=str(pdd), playbook=template["playbook"],
                                    inventory=str(inventory_path), envvars=env, suppress_env_files=True,
                                    quiet=True, timeout=timeout)
    return Job(result, pdd, ident)

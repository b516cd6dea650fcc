"""Run module tasks on localhost against a rehearsal cluster through the real ansible-playbook, and read back
what each task registered. Shared by the tests of the collection's cluster modules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def run_tasks(tmp_path: Path, cluster, tasks: list[dict], env: dict | None = None, kubeconfig: str | None = None,
              check: bool = False, play_vars: dict | None = None) -> tuple[list[dict], str]:
    """Run ``tasks`` with the cluster as the k8s group's module_defaults; returns (registered results, output).

    ``play_vars`` are added to the play's vars (``inferops_dynamo_in_process: false`` runs the modules as module
    processes instead of in the controller's worker)."""
    out_dir = tmp_path / "results"
    out_dir.mkdir(exist_ok=True)
    body = []
    for i, task in enumerate(tasks):
        body.append({**task, "register": f"r{i}", "ignore_errors": True})
        body.append({"name": f"dump r{i}", "check_mode": False, "ansible.builtin.copy": {
            "content": "{{ r%d | to_json }}" % i, "dest": str(out_dir / f"r{i}.json")}})
    play = [{"hosts": "localhost", "gather_facts": False, "vars": {"ansible_python_interpreter": sys.executable, **(play_vars or {})},
             "module_defaults": {"group/inferops.dynamo.k8s": {"kubeconfig": kubeconfig or cluster.kubeconfig,
                                                                "context": cluster.context}},
             "tasks": body}]
    pb = tmp_path / "play.yml"
    pb.write_text(yaml.safe_dump(play, sort_keys=False))
    full_env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1",
                "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp"), "ANSIBLE_HOME": str(tmp_path / "home"), **(env or {})}
    argv = [str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local", str(pb)] + (["--check"] if check else [])
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, env=full_env, timeout=180, check=False)
    results = []
    for i in range(len(tasks)):
        f = out_dir / f"r{i}.json"
        assert f.exists(), proc.stdout[-3000:] + proc.stderr[-2000:]
        results.append(json.loads(f.read_text()))
    return results, proc.stdout + proc.stderr

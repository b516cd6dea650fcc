"""kubernetes.core playbooks against kubesim: idempotent apply, SSA conflicts, check mode,
wait_condition on a DGD, logs, service proxy, delete + wait."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
PLAYBOOK_BIN = Path(sys.executable).parent / "ansible-playbook"


def run_playbook(tmp_path, cluster, tasks, name="pb", extra_vars=None, check=False):
    play = [{"name": name, "hosts": "localhost", "gather_facts": False,
             "vars": {"ansible_python_interpreter": sys.executable, "ns": "ansible-t", **(extra_vars or {})},
             "module_defaults": {"group/kubernetes.core.k8s": {"kubeconfig": cluster.kubeconfig,
                                                                "context": cluster.context}},
             "tasks": tasks}]
    pb = tmp_path / f"{name}.yml"
    pb.write_text(yaml.safe_dump(play, sort_keys=False))
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp"), "ANSIBLE_HOME": str(tmp_path / "ansible-home")}
    argv = [str(PLAYBOOK_BIN), "-i", "localhost,", "-c", "local", str(pb)]
    if check:
        argv.append("--check")
    out = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, env=env, timeout=180)
    m = re.search(r"localhost\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", out.stdout)
    assert m, out.stdout + out.stderr
    return {"ok": int(m[1]), "changed": int(m[2]), "failed": int(m[4]), "out": out.stdout + out.stderr}


DGD = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
       "metadata": {"name": "muse-spark-sglang-aggregate-gb300", "namespace": "{{ ns }}",
                    "labels": {"app.kubernetes.io/managed-by": "inferops.dynamo"},
                    "annotations": {"inferops.dynamo/expected-ttft-p50-ms": "20"}},
       "spec": {"backendFramework": "sglang", "components": [
           {"name": "Frontend", "type": "frontend", "replicas": 1,
            "podTemplate": {"spec": {"containers": [{"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.5.1",
                                                     "command": ["python3", "-m", "dynamo.frontend"]}]}}},
           {"name": "Worker", "type": "worker", "replicas": 1,
            "podTemplate": {"spec": {
                "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-GB300"},
                "containers": [{"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.5.1",
                                "command": ["python3", "-m", "dynamo.sglang"],
                                "args": ["--model-path", "meta-models/muse-spark", "--served-model-name",
                                         "meta-models/muse-spark", "--tp", "4"],
                                "env": [{"name": "HF_HOME", "value": "/model"}],
                                "resources": {"limits": {"nvidia.com/gpu": "4"}},
                                "volumeMounts": [{"name": "shared-model-cache", "mountPath": "/model"}]}],
                "volumes": [{"name": "shared-model-cache",
                             "persistentVolumeClaim": {"claimName": "shared-model-cache"}}]}}}]}}

SSA = {"apply": True, "server_side_apply": {"field_manager": "inferops.dynamo", "force_conflicts": True}}


def converge_tasks():
    objs = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "{{ ns }}"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "{{ ns }}",
                                                                "labels": {"app.kubernetes.io/managed-by": "inferops.dynamo"}},
         "data": {"a": "1"}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
         "metadata": {"name": "shared-model-cache", "namespace": "{{ ns }}"},
         "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "shared-rwx",
                  "resources": {"requests": {"storage": "100Gi"}}}},
        DGD,
        {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomain",
         "metadata": {"name": "cd", "namespace": "{{ ns }}"},
         "spec": {"numNodes": 0, "channel": {"allocationMode": "Single", "resourceClaimTemplate": {"name": "cd-ch"}}}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "{{ ns }}"},
         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                  "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                      {"name": "web", "image": "nginx", "ports": [{"containerPort": 80}]}]}}}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "{{ ns }}"},
         "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 80}]}},
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "once", "namespace": "{{ ns }}"},
         "spec": {"backoffLimit": 0, "template": {"spec": {"restartPolicy": "Never", "containers": [
             {"name": "c", "image": "busybox", "command": ["true"]}]}}}},
    ]
    tasks = [{"name": f"apply {o['kind']}", "kubernetes.core.k8s": {**SSA, "api_version": o["apiVersion"],
                                                                      "definition": o}} for o in objs]
    tasks.append({"name": "client-side apply of a Secret", "no_log": True, "kubernetes.core.k8s": {
        "apply": True, "api_version": "v1", "definition": {
            "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "hf-token-secret", "namespace": "{{ ns }}"},
            "stringData": {"HF_TOKEN": "not-a-real-token"}}}})
    tasks.append({"name": "wait for the DGD", "kubernetes.core.k8s_info": {
        "api_version": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment", "namespace": "{{ ns }}",
        "name": DGD["metadata"]["name"], "wait": True, "wait_condition": {"type": "Ready", "status": "True"},
        "wait_sleep": 1, "wait_timeout": 60}})
    tasks.append({"name": "wait for the Deployment", "kubernetes.core.k8s_info": {
        "api_version": "apps/v1", "kind": "Deployment", "namespace": "{{ ns }}", "name": "web", "wait": True,
        "wait_sleep": 1, "wait_timeout": 60}})
    tasks.append({"name": "wait for the Job", "kubernetes.core.k8s_info": {
        "api_version": "batch/v1", "kind": "Job", "namespace": "{{ ns }}", "name": "once", "wait": True,
        "wait_condition": {"type": "Complete", "status": "True"}, "wait_sleep": 1, "wait_timeout": 60}})
    return tasks


def test_playbooks(tmp_path, kubesim_cluster):
    first = run_playbook(tmp_path, kubesim_cluster, converge_tasks(), "converge")
    assert first["failed"] == 0 and first["changed"] >= 5, first["out"]
    second = run_playbook(tmp_path, kubesim_cluster, converge_tasks(), "converge")
    assert second["failed"] == 0 and second["changed"] == 0, second["out"]

    name = DGD["metadata"]["name"]
    ops = [
        {"name": "check mode create", "check_mode": True, "kubernetes.core.k8s": {
            "api_version": "v1", "definition": {"apiVersion": "v1", "kind": "ConfigMap",
                                                "metadata": {"name": "dry", "namespace": "{{ ns }}"}}}},
        {"name": "dry object not persisted", "kubernetes.core.k8s_info": {
            "api_version": "v1", "kind": "ConfigMap", "namespace": "{{ ns }}", "name": "dry"}, "register": "dry"},
        {"ansible.builtin.assert": {"that": ["dry.resources | length == 0"]}},
        {"name": "SSA conflict from another manager", "kubernetes.core.k8s": {
            "apply": True, "server_side_apply": {"field_manager": "someone-else", "force_conflicts": False},
            "api_version": "v1", "definition": {"apiVersion": "v1", "kind": "ConfigMap",
                                                "metadata": {"name": "settings", "namespace": "{{ ns }}"},
                                                "data": {"a": "2"}}},
         "register": "conflict", "ignore_errors": True},
        {"ansible.builtin.assert": {"that": ["conflict is failed", "'conflict' in (conflict.msg | lower)"]}},
        {"name": "SSA with force", "kubernetes.core.k8s": {
            "apply": True, "server_side_apply": {"field_manager": "someone-else", "force_conflicts": True},
            "api_version": "v1", "definition": {"apiVersion": "v1", "kind": "ConfigMap",
                                                "metadata": {"name": "settings", "namespace": "{{ ns }}"},
                                                "data": {"a": "2"}}}, "register": "forced"},
        {"ansible.builtin.assert": {"that": ["forced.result.data.a == '2'"]}},
        {"name": "worker pods", "kubernetes.core.k8s_info": {
            "api_version": "v1", "kind": "Pod", "namespace": "{{ ns }}",
            "label_selectors": [f"nvidia.com/dynamo-graph-deployment-name={name}",
                                "nvidia.com/dynamo-component-type=worker"]}, "register": "workers"},
        {"name": "worker logs", "kubernetes.core.k8s_log": {
            "api_version": "v1", "namespace": "{{ ns }}", "name": "{{ workers.resources[0].metadata.name }}",
            "container": "main", "tail_lines": 5}, "register": "wlog"},
        {"ansible.builtin.assert": {"that": ["wlog.log_lines | length > 0"]}},
        {"name": "models through the service proxy", "ansible.builtin.uri": {
            "url": "{{ server }}/api/v1/namespaces/{{ ns }}/services/" + name + "-frontend:8000/proxy/v1/models",
            "headers": {"Authorization": "Bearer {{ token }}"}, "return_content": True}, "register": "models"},
        {"ansible.builtin.assert": {"that": ["models.json.data[0].id == 'meta-models/muse-spark'"]}},
        {"name": "delete the DGD and wait", "kubernetes.core.k8s": {
            "state": "absent", "api_version": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
            "namespace": "{{ ns }}", "name": name, "wait": True, "wait_timeout": 30}},
        {"name": "pods gone", "kubernetes.core.k8s_info": {
            "api_version": "v1", "kind": "Pod", "namespace": "{{ ns }}",
            "label_selectors": [f"nvidia.com/dynamo-graph-deployment-name={name}"]}, "register": "left"},
        {"ansible.builtin.assert": {"that": ["left.resources | length == 0"]}},
    ]
    token = yaml.safe_load(Path(kubesim_cluster.kubeconfig).read_text())["users"][0]["user"]["token"]
    res = run_playbook(tmp_path, kubesim_cluster, ops, "ops",
                       {"server": kubesim_cluster.base_url, "token": token})
    assert res["failed"] == 0, res["out"]

# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The security contexts the rendered pods run with, and the Pod Security Standards level each one meets.

The frontend, the planner, standalone vLLM and every Job run as a non-root user with no capabilities, no
privilege escalation and the runtime's default seccomp profile: the restricted profile. The Dynamo engine workers
run as root, as every same-shape upstream recipe does (the runtime images' cached files and compile caches are
root-owned), so they meet baseline; a worker that needs RDMA capabilities (IPC_LOCK, SYS_RESOURCE for NIXL memory
registration) needs privileged, and the plan says so. Pure Python: no Ansible imports.
"""

from __future__ import annotations

# the runtime images' own non-root user (uid and gid 1000), which also owns what the restricted Jobs write
RUN_AS = 1000
_SECCOMP = {"type": "RuntimeDefault"}
# what baseline lets a container add (the container runtime's default set)
BASELINE_CAPABILITIES = {"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                         "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}


def restricted_pod() -> dict:
    """The pod-level context of a restricted pod: a non-root user whose group owns the volumes it writes."""
    return {"runAsNonRoot": True, "runAsUser": RUN_AS, "runAsGroup": RUN_AS, "fsGroup": RUN_AS,
            "fsGroupChangePolicy": "OnRootMismatch", "seccompProfile": dict(_SECCOMP)}


def restricted_container() -> dict:
    return {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "runAsNonRoot": True,
            "seccompProfile": dict(_SECCOMP)}


def worker_container(capabilities: list[str], run_as_user: int | None = 0) -> dict:
    """An engine worker (root unless the plan says otherwise): nothing it does not need, plus the capabilities its
    RDMA fabric asks for."""
    context: dict = {"allowPrivilegeEscalation": False, "seccompProfile": dict(_SECCOMP)}
    if run_as_user is not None:
        context.update(runAsUser=int(run_as_user), runAsGroup=int(run_as_user))
        if int(run_as_user):
            context["runAsNonRoot"] = True
    if capabilities:
        context["capabilities"] = {"add": list(capabilities)}
    return context


def worker_level(capabilities: list[str], run_as_user: int | None = 0) -> str:
    extra = sorted(set(capabilities) - BASELINE_CAPABILITIES)
    if extra:
        return f"privileged (adds {', '.join(extra)})"
    return "baseline (runs as root)" if run_as_user == 0 else f"baseline (runs as uid {run_as_user})"


def levels(plan: dict) -> dict:
    """The level each kind of pod of ``plan`` meets, as the plan reports it."""
    capabilities = plan["rdma"]["capabilities"] if plan["target"]["mode"] == "disagg" else []
    if plan["kind"] != "DynamoGraphDeployment":
        return {"server": "restricted", "jobs": "restricted"}
    out = {"frontend": "restricted", "workers": worker_level(capabilities, plan.get("worker_run_as_user")),
           "jobs": "restricted"}
    if (plan.get("autoscaling") or {}).get("engine") == "planner":
        out["planner"] = "restricted"
    return out

# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""RDMA provider profiles: what a worker needs for NIXL KV transfer on each kind of fabric.

Facts: shared/reference/dynamo.md §1 (CSP RDMA addons, EFA count = GPUs x 4) and §7 (UCX
environment, IPC_LOCK, RDMA device plugins). Physical interface names are cluster-specific and
never guessed: they come from ``rdma_net_devices`` when the user gives them.
"""

from __future__ import annotations

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.errors import PlanError

PROVIDERS = ("none", "infiniband", "roce", "efa", "gke-roce", "mnnvl")

# NIXL registers (pins) the KV cache for transfer: IPC_LOCK to lock it, SYS_RESOURCE to raise the memlock limit.
# Every upstream SGLang disaggregated recipe adds them, whatever the fabric (deepseek-v4.1-flash/sglang/disagg-gb200/
# deploy-generic.yaml:186-193; templates/sglang/disagg/deploy-v1beta1.template.yaml:185,263).
_RDMA_CAPABILITIES = ["IPC_LOCK", "SYS_RESOURCE"]
# The capabilities Pod Security's baseline level lets a container add (Kubernetes Pod Security Standards); any other
# needs the privileged level.
BASELINE_CAPABILITIES = frozenset({"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                                   "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"})


def _profile(provider: str, gpus_per_worker: int, ib_devices: int) -> dict:
    if provider == "none":
        # no RDMA device: NIXL over UCX on whatever transport the pod has, still registering its memory
        return {"resources": {}, "capabilities": _RDMA_CAPABILITIES, "env": {}, "nixl_backend": "UCX"}
    if provider == "infiniband":
        return {
            "resources": {"rdma/ib": str(ib_devices)},
            "capabilities": _RDMA_CAPABILITIES,
            "env": {
                "UCX_TLS": "rc_x,rc,cuda_copy,cuda_ipc",
                "UCX_RNDV_SCHEME": "get_zcopy",
                "UCX_RNDV_THRESH": "0",
            },
            "nixl_backend": "UCX",
        }
    if provider == "roce":
        return {
            "resources": {"rdma/hca_shared_devices_a": "1"},
            "capabilities": _RDMA_CAPABILITIES,
            # Without the Ethernet address type, RoCE transfers fail with NIXL_ERR_REMOTE_DISCONNECT.
            "env": {
                "UCX_TLS": "rc_x,rc,cuda_copy,cuda_ipc",
                "UCX_IB_ADDR_TYPE": "eth",
                "UCX_RNDV_SCHEME": "get_zcopy",
                "UCX_RNDV_THRESH": "0",
            },
            "nixl_backend": "UCX",
        }
    if provider == "efa":
        return {
            "resources": {"vpc.amazonaws.com/efa": str(gpus_per_worker * 4)},
            "capabilities": _RDMA_CAPABILITIES,
            "env": {"FI_PROVIDER": "efa", "FI_EFA_USE_DEVICE_RDMA": "1"},
            "nixl_backend": "LIBFABRIC",
        }
    if provider == "gke-roce":
        return {
            "resources": {f"networking.gke.io.networks/rdma-{i}": "1" for i in range(4)},
            "capabilities": _RDMA_CAPABILITIES,
            "env": {"UCX_TLS": "rc_x,rc,cuda_copy,cuda_ipc", "UCX_IB_ADDR_TYPE": "eth"},
            "nixl_backend": "UCX",
        }
    if provider == "mnnvl":
        # GB200/GB300 trays in one NVL72 rack: UCX cuda_ipc crosses nodes over MNNVL inside a
        # ComputeDomain, no RDMA NICs involved.
        return {
            "resources": {},
            "capabilities": ["IPC_LOCK"],
            "env": {
                "UCX_TLS": "cuda_copy,cuda_ipc,tcp",
                "UCX_CUDA_IPC_ENABLE_MNNVL": "y",
                "UCX_MEMTYPE_CACHE": "n",
            },
            "nixl_backend": "UCX",
        }
    raise PlanError(f"unknown rdma_provider '{provider}'.", "unknown-rdma-provider", list(PROVIDERS))


def rdma_profile(provider: str, gpus_per_worker: int, sku: dict, net_devices: str | None = None, *,
                 devices: int | None = None, runtime: dict | None = None) -> dict:
    """The worker-side settings of ``provider`` for a worker of ``gpus_per_worker`` GPUs. ``devices`` (plan input
    rdma_devices_per_worker) sets the count of an InfiniBand or RoCE device resource; InfiniBand's default is the
    runtime's ``rdma_ib_devices_per_gpu`` per GPU (catalog), RoCE's shared-device resource one slot."""
    if provider == "mnnvl" and not sku.get("compute_domain_modes"):
        raise PlanError(
            f"rdma_provider=mnnvl needs an NVL72 rack (GB200/GB300); {sku['display_name']} has none.",
            "mnnvl-needs-nvl72",
            [p for p in PROVIDERS if p != "mnnvl"],
            inputs=["rdma_provider"],
        )
    if provider != "none" and sku["vendor"] != "nvidia":
        raise PlanError(
            f"rdma_provider={provider} configures NIXL KV transfer for disaggregated Dynamo targets, "
            f"which are NVIDIA-only; {sku['display_name']} serves standalone vLLM.",
            "rdma-nvidia-only",
            ["none"],
            inputs=["rdma_provider"],
        )
    if devices and provider not in ("infiniband", "roce"):
        raise PlanError(f"rdma_devices_per_worker counts the InfiniBand or RoCE device resource; rdma_provider="
                        f"{provider} asks for none of them.", "rdma-devices-without-device-plugin",
                        ["rdma_provider=infiniband", "rdma_provider=roce"],
                        inputs=["rdma_devices_per_worker", "rdma_provider"])
    ib_devices = devices or int((runtime or {}).get("rdma_ib_devices_per_gpu", 1)) * gpus_per_worker
    profile = _profile(provider, gpus_per_worker, ib_devices)
    profile = {**profile, "env": dict(profile["env"]), "resources": dict(profile["resources"]),
               "capabilities": list(profile["capabilities"]), "provider": provider}
    if devices and "rdma/hca_shared_devices_a" in profile["resources"]:
        profile["resources"]["rdma/hca_shared_devices_a"] = str(devices)
    if net_devices:
        profile["env"]["UCX_NET_DEVICES"] = net_devices
    beyond = [c for c in profile["capabilities"] if c not in BASELINE_CAPABILITIES]
    profile["pod_security"] = "privileged" if beyond else "baseline"
    return profile

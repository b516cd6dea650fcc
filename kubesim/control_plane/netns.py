"""One network namespace per rehearsal cluster.

kube-apiserver refuses to proxy to loopback pod IPs, so pods need global-unicast addresses that really
answer. Inside the cluster's own namespace the whole pod CIDR is routed to its loopback
(`ip route add local <cidr> dev lo`), so a stand-in can bind any pod IP and the API server reaches it.
A veth pair joins the namespace to the host: the host side holds the first address of a /30, the
namespace the second, and the API server listens there. Nothing outside that namespace or 127.0.0.0/8
is ever addressed, and deleting the namespace removes the veth pair with it.
"""

from __future__ import annotations

import ctypes
import ipaddress
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

POD_CIDR = "10.244.0.0/16"
# kwok hands out pod IPs from the lower half; the stand-ins' own pods (runnable Jobs) take addresses
# from the upper half (standins/runner.py), so the two never collide.
KWOK_POD_CIDR = "10.244.0.0/17"
SERVICE_CIDR = "10.96.0.0/16"
# Link networks: one /30 per cluster out of this block (host .1, namespace .2).
LINK_BLOCK = ipaddress.ip_network("10.250.0.0/16")
CLONE_NEWNET = 0x40000000
# the namespaces a daemon made, in its state directory
RECORD = "netns.json"


def _ip(*args: str, netns: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    argv = ["ip", *(["-n", netns] if netns else []), *args]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc


@dataclass(frozen=True)
class Netns:
    name: str
    host_if: str
    ns_if: str
    host_ip: str
    ns_ip: str

    @property
    def path(self) -> str:
        return f"/run/netns/{self.name}"

    def exec_prefix(self) -> list[str]:
        return ["ip", "netns", "exec", self.name]


def plan(prefix: str, index: int, slot: int) -> Netns:
    """Names and addresses for cluster ``index``; ``slot`` picks a free /30 of LINK_BLOCK."""
    subnet = list(LINK_BLOCK.subnets(new_prefix=30))[slot]
    hosts = list(subnet.hosts())
    tag = f"{prefix}{index}"
    return Netns(name=f"inferops-{tag}", host_if=f"ifo{tag}h"[:15], ns_if=f"ifo{tag}n"[:15],
                 host_ip=str(hosts[0]), ns_ip=str(hosts[1]))


def allocate(prefix: str, n: int) -> list[Netns]:
    """Names and addresses for ``n`` clusters, on /30s no other rehearsal run on this host uses, made at once under a
    host-wide lock: two daemons starting together (`make test`'s passes) once read the same free /30, and the second's
    API server was unreachable behind the first one's route."""
    from ..file_lock import held
    from .build import cache_root

    with held(cache_root() / "netns.lock"):
        taken = used_link_slots()
        slots = [s for s in range(len(list(LINK_BLOCK.subnets(new_prefix=30)))) if s not in taken][:n]
        spaces = [plan(prefix, i, slots[i]) for i in range(n)]
        for ns in spaces:
            create(ns)
        return spaces


def record(state_dir, spaces: list[Netns]) -> None:
    """Write down the namespaces a daemon made, so that a later start removes them if it was killed."""
    (Path(state_dir) / RECORD).write_text(json.dumps([{"name": s.name, "host_if": s.host_if} for s in spaces]))


def delete_recorded(state_dir) -> None:
    path = Path(state_dir) / RECORD
    try:
        spaces = json.loads(path.read_text())
    except (OSError, ValueError):
        spaces = []
    for s in spaces:
        delete(Netns(s["name"], s["host_if"], "", "", ""))
    path.unlink(missing_ok=True)


def used_link_slots() -> set[int]:
    """/30s of LINK_BLOCK already configured on the host (another rehearsal run): never reuse them."""
    out = _ip("-4", "-o", "addr", "show").stdout
    slots = set()
    for line in out.splitlines():
        parts = line.split()
        if "inet" not in parts:
            continue
        iface = ipaddress.ip_interface(parts[parts.index("inet") + 1])
        if iface.ip in LINK_BLOCK:
            slots.add((int(iface.ip) - int(LINK_BLOCK.network_address)) // 4)
    return slots


def conflicting_route(net: str) -> str | None:
    """A host route that overlaps ``net``: we would shadow the host's own network."""
    target = ipaddress.ip_network(net)
    for line in _ip("-4", "route", "show").stdout.splitlines():
        dest = line.split()[0]
        if dest == "default":
            continue
        try:
            if ipaddress.ip_network(dest, strict=False).overlaps(target):
                return line
        except ValueError:
            continue
    return None


def create(ns: Netns) -> None:
    delete(ns)
    _ip("netns", "add", ns.name)
    try:
        _ip("link", "set", "lo", "up", netns=ns.name)
        _ip("route", "add", "local", POD_CIDR, "dev", "lo", netns=ns.name)
        _ip("link", "add", ns.host_if, "type", "veth", "peer", "name", ns.ns_if)
        _ip("link", "set", ns.ns_if, "netns", ns.name)
        _ip("addr", "add", f"{ns.host_ip}/30", "dev", ns.host_if)
        _ip("link", "set", ns.host_if, "up")
        _ip("addr", "add", f"{ns.ns_ip}/30", "dev", ns.ns_if, netns=ns.name)
        _ip("link", "set", ns.ns_if, "up", netns=ns.name)
    except Exception:
        delete(ns)
        raise


def delete(ns: Netns) -> None:
    _ip("link", "del", ns.host_if, check=False)
    _ip("netns", "del", ns.name, check=False)


def exists(name: str) -> bool:
    return os.path.exists(f"/run/netns/{name}")


_libc = None


def enter(ns_path: str) -> None:
    """Move the calling thread (or a child before exec) into the namespace: sockets it creates live there."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(ns_path, os.O_RDONLY)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns({ns_path}): {os.strerror(err)}")
    finally:
        os.close(fd)


def call_inside(ns_path: str, fn, *args):
    """``fn(*args)`` on a thread that entered the namespace (its sockets live there); its result, or its exception."""
    import threading

    out: dict = {}

    def run():
        try:
            enter(ns_path)
            out["value"] = fn(*args)
        except BaseException as exc:  # handed to the caller
            out["error"] = exc

    t = threading.Thread(target=run, name="netns-call", daemon=True)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["value"]

"""A second host on this machine: a network namespace joined to this one by a veth pair,
each end with its own address on a /24 of its own. Root only.

The /24 and the names are chosen among those free on this host, not from the pid alone: a
run killed before its clean-up leaves its pair behind, and a later pair on the same /24
sends its replies into the dead one (CI of 2026-12-03 05:36: a worker node never reached
its head, three errors, because a killed rehearsal had left 10.213.213.0/24 here)."""

from __future__ import annotations

import contextlib
import ipaddress
import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

SUBNETS = 250 * 50  # 10.200.0.0/24 .. 10.249.249.0/24


def _ip(*args: str, netns: str | None = None) -> str:
    prefix = ["ip", "netns", "exec", netns] if netns else []
    return subprocess.run([*prefix, "ip", *args], check=True, capture_output=True, text=True).stdout


def candidate_subnet(seed: int, step: int = 0) -> ipaddress.IPv4Network:
    """The `step`-th /24 tried for `seed` (a pid): spread by pid so two runs at once
    seldom try the same ones."""
    index = (seed + step) % SUBNETS
    return ipaddress.IPv4Network(f"10.{200 + index // 250}.{index % 250}.0/24")


def free_subnet(seed: int) -> ipaddress.IPv4Network:
    """The first candidate /24 that no route of this host overlaps (every address an
    interface holds has its route, a leftover pair's included)."""
    routes = json.loads(_ip("-j", "-4", "route", "show", "table", "all"))
    used = [
        ipaddress.IPv4Network(route["dst"], strict=False)
        for route in routes
        if route.get("dst", "default") != "default"
    ]
    for step in range(SUBNETS):
        subnet = candidate_subnet(seed, step)
        if not any(subnet.overlaps(other) for other in used):
            return subnet
    raise RuntimeError("no free /24 in 10.200.0.0-10.249.255.0 for a veth pair")


def free_tag(seed: int) -> str:
    """A name suffix no namespace or link here has yet (an interface name holds 15
    characters: 'pvh' and 12)."""
    netns = {n["name"] for n in json.loads(_ip("-j", "netns", "list") or "[]")}
    links = {link["ifname"] for link in json.loads(_ip("-j", "link", "show"))}
    for step in range(1000):
        tag = f"{seed % 100000}" + (f"x{step}" if step else "")
        if f"podns{tag}" not in netns and not {f"pvh{tag}", f"pvw{tag}"} & links:
            return tag
    raise RuntimeError("no free name for a veth pair")


@dataclass(frozen=True)
class Pair:
    netns: str
    head_ip: str  # this namespace's end
    worker_ip: str  # the other namespace's end


@contextlib.contextmanager
def veth_pair(seed: int) -> Iterator[Pair]:
    """Make the namespace and the pair, yield their addresses, and remove both at the end
    (removing the namespace removes its end of the pair); only what this call made is
    removed, never a namespace or link of the same name made by another."""
    tag, subnet = free_tag(seed), free_subnet(seed)
    netns, veth_head, veth_worker = f"podns{tag}", f"pvh{tag}", f"pvw{tag}"
    head_ip, worker_ip = str(subnet.network_address + 1), str(subnet.network_address + 2)
    with contextlib.ExitStack() as made:
        _ip("netns", "add", netns)
        made.callback(subprocess.run, ["ip", "netns", "del", netns], capture_output=True)
        _ip("link", "add", veth_head, "type", "veth", "peer", "name", veth_worker)
        made.callback(subprocess.run, ["ip", "link", "del", veth_head], capture_output=True)
        _ip("link", "set", veth_worker, "netns", netns)
        _ip("addr", "add", f"{head_ip}/24", "dev", veth_head)
        _ip("link", "set", veth_head, "up")
        _ip("addr", "add", f"{worker_ip}/24", "dev", veth_worker, netns=netns)
        _ip("link", "set", veth_worker, "up", netns=netns)
        _ip("link", "set", "lo", "up", netns=netns)
        yield Pair(netns, head_ip, worker_ip)

"""The two-node tests' second host: its pair still carries traffic both ways when a pair a
killed run left behind holds the /24 this process would try first (CI of 2026-12-03 05:36: three
errors, a worker node that never reached its head)."""

from __future__ import annotations

import ipaddress
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest
from veth_pair import candidate_subnet, veth_pair

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("ip") is None,
    reason="network namespaces need root and `ip`",
)

CONNECT = "import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 5).close()"


@pytest.fixture
def leftover_on_first_subnet() -> Iterator[ipaddress.IPv4Network]:
    """A veth pair holding the first /24 this process tries, as a killed run's pair
    would: its route is older than the new pair's, so replies to the new pair go to it."""
    name, peer = f"plft{os.getpid() % 100000}", f"prgt{os.getpid() % 100000}"
    taken = candidate_subnet(os.getpid())
    subprocess.run(["ip", "link", "add", name, "type", "veth", "peer", "name", peer], check=True)
    try:
        address = f"{taken.network_address + 1}/24"
        subprocess.run(["ip", "addr", "add", address, "dev", name], check=True)
        for link in (name, peer):
            subprocess.run(["ip", "link", "set", link, "up"], check=True)
        yield taken
    finally:
        subprocess.run(["ip", "link", "del", name], capture_output=True)


def test_a_pair_reaches_its_head_past_a_leftover_on_its_first_subnet(
    leftover_on_first_subnet: ipaddress.IPv4Network,
) -> None:
    with veth_pair(os.getpid()) as pair:
        assert ipaddress.ip_address(pair.head_ip) not in leftover_on_first_subnet
        with socket.create_server((pair.head_ip, 0)) as server:
            port = server.getsockname()[1]
            reached = subprocess.run(
                [
                    "ip",
                    "netns",
                    "exec",
                    pair.netns,
                    sys.executable,
                    "-c",
                    CONNECT,
                    pair.head_ip,
                    str(port),
                ],
                capture_output=True,
                text=True,
                timeout=60,
            )
        assert reached.returncode == 0, reached.stderr[-2000:]
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert pair.netns not in names, "the pair's namespace outlived it"

"""Network namespaces for tests with real NAT: a robot behind an iptables MASQUERADE NAT
that forwards one UDP port to it, and an operator on the NAT's far side.

``nat_world()`` makes three namespaces of unique names (``fl<pid><hex>-r``, ``-n``, ``-o``)
joined by veth pairs created inside them (nothing is added to this machine's own namespace),
and deletes them on exit, whatever happened::

    robot 10.77.1.2/24 ── r0 │ n0 10.77.1.1  NAT  n1 10.77.2.1 │ o0 ── 10.77.2.2/24 operator
                              MASQUERADE out of n1 (random ports 20000-40000),
                              UDP 10.77.2.1:PORT forwarded to the robot's PORT

The addresses exist only inside those namespaces. ``entered(name)`` runs the calling thread in
a namespace (its sockets made there stay there) and brings it back; ``run_in(name, ...)`` runs
a command there. ``unavailable()`` says why none can be made here (not root, no ``ip``,
``iptables`` or ``conntrack``, a kernel that refuses), for a test to skip on.

Any test imports them: ``from netns import nat_world`` (``tests/`` is on ``sys.path``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["NatWorld", "entered", "nat_world", "run_in", "unavailable"]

_CLONE_NEWNET = 0x40000000
ROBOT_INSIDE = "10.77.1.2"
NAT_OUTSIDE = "10.77.2.1"
OPERATOR = "10.77.2.2"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, check=True, capture_output=True, text=True, timeout=30)


def run_in(namespace: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``args`` run in ``namespace``; a failure raises with what the command said."""
    try:
        return _run("ip", "netns", "exec", namespace, *args)
    except subprocess.CalledProcessError as err:
        raise AssertionError(f"{' '.join(args)} in {namespace}: {err.stderr.strip()}") from None


def unavailable() -> str | None:
    """Why no namespace can be made here, or None."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("ip", "iptables", "conntrack"):
        if shutil.which(tool) is None:
            return f"no {tool} on this machine (apt-get install iproute2 iptables conntrack)"
    name = f"fl{os.getpid()}{secrets.token_hex(3)}-t"
    try:
        _run("ip", "netns", "add", name)
    except (subprocess.CalledProcessError, OSError) as err:
        return f"cannot make a network namespace: {err}"
    try:
        run_in(name, "iptables", "-t", "nat", "-L", "-n")
    except AssertionError as err:
        return f"no iptables NAT in a namespace: {err}"
    finally:
        subprocess.run(("ip", "netns", "del", name), capture_output=True, timeout=30)
    return None


@dataclass(frozen=True)
class NatWorld:
    robot: str  # the namespaces' names
    nat: str
    operator: str
    port: int  # the robot's UDP port, forwarded from the NAT's outside address

    @property
    def robot_public(self) -> tuple[str, int]:
        """Where the operator reaches the robot: the NAT's forwarded port."""
        return (NAT_OUTSIDE, self.port)

    def flush_conntrack(self, first_out: float = 0.1) -> None:
        """The NAT forgets every mapping; for ``first_out`` s only the robot's side passes,
        so its next packet makes the new mapping, from a new random port."""
        block = ("FORWARD", "-i", "n1", "-j", "DROP")
        run_in(self.nat, "iptables", "-I", *block)
        try:
            run_in(self.nat, "conntrack", "-F")
            time.sleep(first_out)
        finally:
            run_in(self.nat, "iptables", "-D", *block)


@contextlib.contextmanager
def nat_world(port: int = 7447) -> Iterator[NatWorld]:
    """The robot, its NAT and the operator in namespaces of their own, deleted on exit."""
    stem = f"fl{os.getpid()}{secrets.token_hex(3)}"
    world = NatWorld(f"{stem}-r", f"{stem}-n", f"{stem}-o", port)
    made: list[str] = []
    try:
        for name in (world.robot, world.nat, world.operator):
            _run("ip", "netns", "add", name)
            made.append(name)
            run_in(name, "ip", "link", "set", "lo", "up")
        _veth(world.robot, "r0", world.nat, "n0")
        _veth(world.nat, "n1", world.operator, "o0")
        run_in(world.robot, "ip", "addr", "add", f"{ROBOT_INSIDE}/24", "dev", "r0")
        run_in(world.nat, "ip", "addr", "add", "10.77.1.1/24", "dev", "n0")
        run_in(world.nat, "ip", "addr", "add", f"{NAT_OUTSIDE}/24", "dev", "n1")
        run_in(world.operator, "ip", "addr", "add", f"{OPERATOR}/24", "dev", "o0")
        for name, dev in ((world.robot, "r0"), (world.nat, "n0"), (world.nat, "n1")):
            run_in(name, "ip", "link", "set", dev, "up")
        run_in(world.operator, "ip", "link", "set", "o0", "up")
        run_in(world.robot, "ip", "route", "add", "default", "via", "10.77.1.1")
        run_in(world.nat, "sysctl", "-qw", "net.ipv4.ip_forward=1")
        nat = ("iptables", "-t", "nat", "-A")
        run_in(world.nat, *nat, "POSTROUTING", "-o", "n1", "-p", "udp", "-j", "MASQUERADE",
               "--to-ports", "20000-40000", "--random")  # fmt: skip
        run_in(world.nat, *nat, "POSTROUTING", "-o", "n1", "-j", "MASQUERADE")
        run_in(world.nat, *nat, "PREROUTING", "-i", "n1", "-p", "udp", "--dport", str(port),
               "-j", "DNAT", "--to-destination", f"{ROBOT_INSIDE}:{port}")  # fmt: skip
        yield world
    finally:
        for name in reversed(made):
            subprocess.run(("ip", "netns", "del", name), capture_output=True, timeout=30)


def _veth(ns_a: str, dev_a: str, ns_b: str, dev_b: str) -> None:
    _run("ip", "link", "add", dev_a, "netns", ns_a, "type", "veth",
         "peer", "name", dev_b, "netns", ns_b)  # fmt: skip


@contextlib.contextmanager
def entered(namespace: str) -> Iterator[None]:
    """The calling thread in ``namespace`` (sockets it makes stay there), then back."""
    libc = ctypes.CDLL(None, use_errno=True)
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(f"/run/netns/{namespace}", os.O_RDONLY)
    try:
        if libc.setns(target, _CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"cannot enter {namespace}")
        try:
            yield
        finally:
            if libc.setns(home, _CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "cannot come back from a namespace")
    finally:
        os.close(target)
        os.close(home)

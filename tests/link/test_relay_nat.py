"""Both ends behind NAT, through a relay: the robot behind one iptables MASQUERADE NAT, the
station behind another, the relay (``freelook relay`` on TLS) in a third, "public" namespace
that neither NAT forwards anything to. Both ends connect out to the relay; the station drives
the robot through it. Mid-drive the robot's NAT loses its state (``conntrack -F``): its next
packets leave from a new random port, the relay resets the old connection and the robot's
Zenoh client connects again from the new port. The test measures what that costs: the longest
gap in the station's telemetry, the lowest speed the robot reported, and whether the link
session was re-opened (it must not be: the session runs end to end over the relay, not on one
TCP connection).

Namespaces, made inside themselves and deleted after the test whatever happened::

    robot 10.79.1.2 ─ NAT 10.79.0.2 ─┐ public 10.79.9.1 (lo) ┌─ 10.79.3.2 NAT ─ station 10.79.2.2
                MASQUERADE    10.79.0.1   relay   10.79.3.1     MASQUERADE

Every process (relay, robot, station) runs as a user starts it, in its own namespace, and is
stopped by its pid; the station's measurements come back on its standard output. Skipped where
namespaces cannot be made (not root, no ``ip``, ``iptables`` or ``conntrack``)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

RELAY = "10.79.9.1"
SECOND_RELAY = "10.79.9.2"  # a second relay in the public namespace
PORT = 7447
ROBOT_NAT_OUTSIDE = "10.79.0.2"
STATION_NAT_OUTSIDE = "10.79.3.2"
#: s a robot program may take to serve: a first start compiles its loops
FIRST_START = 480.0
#: s the station watches after the flush
AFTER = 6.0
TESTS = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class RelayWorld:
    robot: str  # namespace names
    robot_nat: str
    public: str
    station_nat: str
    station: str

    def flush_robot_nat(self, first_out: float = 0.1) -> None:
        """The robot's NAT forgets every mapping; for ``first_out`` s only the robot's side
        passes, so its next packet makes the new mapping, from a new random port."""
        from netns import run_in

        block = ("FORWARD", "-i", "n1", "-j", "DROP")
        run_in(self.robot_nat, "iptables", "-I", *block)
        try:
            run_in(self.robot_nat, "conntrack", "-F")
            time.sleep(first_out)
        finally:
            run_in(self.robot_nat, "iptables", "-D", *block)

    def relay_peers(self, relay: str = RELAY) -> set[str]:
        """ADDRESS:PORT of every connection the relay at ``relay`` holds (as it sees them)."""
        from netns import run_in

        said = run_in(self.public, "ss", "-Htn", "state", "established", f"sport = :{PORT}")
        rows = [line.split() for line in said.stdout.splitlines() if line.strip()]
        return {row[-1] for row in rows if row[-2] == f"{relay}:{PORT}"}


def _veth(ns_a: str, dev_a: str, ns_b: str, dev_b: str) -> None:
    subprocess.run(
        ["ip", "link", "add", dev_a, "netns", ns_a, "type", "veth", "peer", "name", dev_b,
         "netns", ns_b],
        check=True, capture_output=True, timeout=30,
    )  # fmt: skip


@contextlib.contextmanager
def relay_world() -> Iterator[RelayWorld]:
    from netns import run_in

    stem = f"fl{os.getpid()}{secrets.token_hex(3)}"
    world = RelayWorld(f"{stem}-r", f"{stem}-a", f"{stem}-p", f"{stem}-b", f"{stem}-s")
    made: list[str] = []
    try:
        for name in (world.robot, world.robot_nat, world.public, world.station_nat, world.station):
            subprocess.run(["ip", "netns", "add", name], check=True, capture_output=True)
            made.append(name)
            run_in(name, "ip", "link", "set", "lo", "up")
        _veth(world.robot, "r0", world.robot_nat, "n0")
        _veth(world.robot_nat, "n1", world.public, "p1")
        _veth(world.public, "p2", world.station_nat, "m1")
        _veth(world.station_nat, "m0", world.station, "s0")
        for ns, dev, address in (
            (world.robot, "r0", "10.79.1.2/24"),
            (world.robot_nat, "n0", "10.79.1.1/24"),
            (world.robot_nat, "n1", f"{ROBOT_NAT_OUTSIDE}/24"),
            (world.public, "p1", "10.79.0.1/24"),
            (world.public, "p2", "10.79.3.1/24"),
            (world.public, "lo", f"{RELAY}/32"),
            (world.public, "lo", f"{SECOND_RELAY}/32"),
            (world.station_nat, "m1", f"{STATION_NAT_OUTSIDE}/24"),
            (world.station_nat, "m0", "10.79.2.1/24"),
            (world.station, "s0", "10.79.2.2/24"),
        ):
            run_in(ns, "ip", "addr", "add", address, "dev", dev)
            run_in(ns, "ip", "link", "set", dev, "up")
        run_in(world.robot, "ip", "route", "add", "default", "via", "10.79.1.1")
        run_in(world.station, "ip", "route", "add", "default", "via", "10.79.2.1")
        run_in(world.robot_nat, "ip", "route", "add", "default", "via", "10.79.0.1")
        run_in(world.station_nat, "ip", "route", "add", "default", "via", "10.79.3.1")
        # the public namespace routes nothing between the NATs: each reaches the relay alone
        for ns, out in ((world.robot_nat, "n1"), (world.station_nat, "m1")):
            run_in(ns, "sysctl", "-qw", "net.ipv4.ip_forward=1")
            run_in(ns, "iptables", "-t", "nat", "-A", "POSTROUTING", "-o", out, "-p", "tcp",
                   "-j", "MASQUERADE", "--to-ports", "20000-40000", "--random")  # fmt: skip
            run_in(ns, "iptables", "-t", "nat", "-A", "POSTROUTING", "-o", out,
                   "-j", "MASQUERADE")  # fmt: skip
        yield world
    finally:
        for name in reversed(made):
            subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=30)


def _openssl(*args: object) -> None:
    subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True, timeout=60)


def _files(folder: Path, stations: str = "") -> Path:
    """A CA, the relay's certificate for ``RELAY`` signed by it, the robot's keys file
    (naming the CA; ``stations``: more of its ``[stations.N]`` tables) and ``relay.toml``
    beside it (``freelook keys relay``); the keys file."""
    from test_relay import ROBOT_KEY, STATION_KEY

    from keys_for_tests import write_keys_file

    ca, ca_key, cert, key = (folder / n for n in ("ca.pem", "ca.key", "cert.pem", "key.pem"))
    csr, ext = folder / "cert.csr", folder / "ext.cnf"
    ext.write_text(f"subjectAltName=IP:{RELAY},IP:{SECOND_RELAY}\nbasicConstraints=CA:FALSE\n")
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
             "/CN=freelook test ca", "-keyout", ca_key, "-out", ca)  # fmt: skip
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={RELAY}",
             "-keyout", key, "-out", csr)  # fmt: skip
    _openssl("x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
             "-days", "1", "-extfile", ext, "-out", cert)  # fmt: skip
    keys = write_keys_file(
        folder / "keys.toml",
        f'[stations.1]\nkey = "{STATION_KEY}"\n{stations}[robots.r1]\nkey = "{ROBOT_KEY}"\n'
        f'[zenoh]\ntls_root_ca = "{ca}"\n',
    )
    users = folder / "relay.toml"
    subprocess.run(
        [sys.executable, "-m", "freelook.cli", "keys", "relay", str(keys), str(users)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    with users.open("a") as stream:
        stream.write('\n[zenoh]\ntls_certificate = "cert.pem"\ntls_private_key = "key.pem"\n')
    return keys


def _env() -> dict[str, str]:
    path = os.pathsep.join([str(TESTS), str(TESTS / "link"), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": path}


def _start(namespace: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        ["ip", "netns", "exec", namespace, sys.executable, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=_env(),
    )


def _read_until(process: subprocess.Popen[str], mark: str, timeout: float, said: list[str]) -> str:
    """Lines of ``process`` until one holds ``mark`` (that line); fails if it ends first."""
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            raise AssertionError(f"ended before {mark!r}:\n{''.join(said)}")
        said.append(line)
        if mark in line:
            return line
    raise AssertionError(f"no {mark!r} within {timeout} s:\n{''.join(said)}")


def _stop(process: subprocess.Popen[str]) -> None:
    """Stop a process this test started, by its pid (``ip netns exec`` execs into it)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


@pytest.fixture
def world() -> Iterator[RelayWorld]:
    from netns import unavailable

    why = unavailable() or (None if shutil.which("openssl") else "openssl is not installed")
    if why is not None:
        pytest.skip(why)
    with relay_world() as made:
        yield made


@pytest.mark.timeout(FIRST_START + 120)
def test_both_ends_behind_nat_drive_through_the_relay_across_a_conntrack_flush(
    world: RelayWorld, tmp_path: Path
) -> None:
    keys = _files(tmp_path)
    url = f"zenoh+tls://{RELAY}:{PORT}/r1"
    started: list[subprocess.Popen[str]] = []
    said: dict[str, list[str]] = {"relay": [], "robot": [], "station": []}
    try:
        relay = _start(world.public, "-m", "freelook.cli", "relay", "--listen",
                       f"tls/{RELAY}:{PORT}", "--users", str(tmp_path / "relay.toml"))  # fmt: skip
        started.append(relay)
        _read_until(relay, "listening on", 60, said["relay"])
        robot = _start(world.robot, "-m", "freelook.cli", "robot", "--hardware", "sim",
                       "--world", "square", "--listen", url, "--keys", str(keys))  # fmt: skip
        started.append(robot)
        _read_until(robot, "profile on", FIRST_START, said["robot"])
        station = _start(world.station, __file__, url, str(tmp_path / "ca.pem"))
        started.append(station)
        _read_until(station, "DRIVING", 60, said["station"])
        before = world.relay_peers()
        world.flush_robot_nat()
        assert station.stdin is not None
        station.stdin.write("NOW\n")  # the station times what follows from here
        station.stdin.flush()
        time.sleep(AFTER / 2)  # the station still watching: its connection is up
        after = world.relay_peers()
        line = _read_until(station, "RESULT ", AFTER + 30, said["station"])
    finally:
        for process in reversed(started):
            _stop(process)
    out = json.loads(line.split("RESULT ", 1)[1])
    out["relay saw before"], out["relay saw after"] = sorted(before), sorted(after)
    print(f"\nthrough the relay, both ends behind NAT, robot's NAT flushed: {out}")
    robot_before = {p for p in before if p.startswith(ROBOT_NAT_OUTSIDE + ":")}
    robot_after = {p for p in after if p.startswith(ROBOT_NAT_OUTSIDE + ":")}
    assert len(robot_before) == 1, out
    assert len(robot_after) == 1, out
    # the robot reached the relay from a new port: a new connection (TCP keeps its ports)
    assert robot_before != robot_after, out
    for peers in (before, after):  # each end through its own NAT, nothing else on the relay
        assert sorted(p.split(":")[0] for p in peers) == [ROBOT_NAT_OUTSIDE, STATION_NAT_OUTSIDE]
    assert out["opened"] == 1, out  # no session re-open
    assert out["resumed"] == 0, out
    assert out["longest_gap"] < 1.0, out  # at most a second of telemetry
    assert out["reports_after"] > 50, out  # telemetry flowing again after the flush
    assert out["driving_at_end"] > 0.25, out
    for name in ("relay", "robot"):
        assert "Traceback" not in "".join(said[name]), said[name]


@pytest.mark.timeout(FIRST_START + 120)
def test_both_ends_behind_nat_move_to_the_second_relay_when_the_first_dies(
    world: RelayWorld, tmp_path: Path
) -> None:
    """Two relays in the public namespace; robot and station are given both, in order, in
    one URL. The first is killed (by its pid) mid-drive: both ends reconnect through their
    NATs to the second, the session carries on."""
    keys = _files(tmp_path)
    url = f"zenoh+tls://{RELAY}:{PORT},{SECOND_RELAY}:{PORT}/r1"
    started: list[subprocess.Popen[str]] = []
    said: dict[str, list[str]] = {"relay": [], "second": [], "robot": [], "station": []}
    try:
        relays = []
        for name, address in (("relay", RELAY), ("second", SECOND_RELAY)):
            users = str(tmp_path / "relay.toml")
            relay = _start(world.public, "-m", "freelook.cli", "relay", "--listen",
                           f"tls/{address}:{PORT}", "--users", users)  # fmt: skip
            started.append(relay)
            relays.append(relay)
            _read_until(relay, "listening on", 60, said[name])
        robot = _start(world.robot, "-m", "freelook.cli", "robot", "--hardware", "sim",
                       "--world", "square", "--listen", url, "--keys", str(keys))  # fmt: skip
        started.append(robot)
        _read_until(robot, "profile on", FIRST_START, said["robot"])
        station = _start(world.station, __file__, url, str(tmp_path / "ca.pem"))
        started.append(station)
        _read_until(station, "DRIVING", 60, said["station"])
        on_first = world.relay_peers(RELAY)
        relays[0].kill()  # the first relay dies, by its pid
        relays[0].wait(timeout=10)
        assert station.stdin is not None
        station.stdin.write("NOW\n")
        station.stdin.flush()
        time.sleep(AFTER / 2)
        on_second = world.relay_peers(SECOND_RELAY)
        line = _read_until(station, "RESULT ", AFTER + 30, said["station"])
    finally:
        for process in reversed(started):
            _stop(process)
    out = json.loads(line.split("RESULT ", 1)[1])
    out["first relay's peers"], out["second relay's peers"] = sorted(on_first), sorted(on_second)
    print(f"\nboth ends behind NAT, the first relay killed: {out}")
    for peers in (on_first, on_second):  # each end through its own NAT
        assert sorted(p.split(":")[0] for p in peers) == [ROBOT_NAT_OUTSIDE, STATION_NAT_OUTSIDE]
    assert out["opened"] == 1, out  # the same session through the second relay
    assert out["resumed"] == 0, out
    assert out["longest_gap"] < 1.0, out
    assert out["reports_after"] > 50, out
    assert out["driving_at_end"] > 0.25, out
    for name in ("second", "robot"):
        assert "Traceback" not in "".join(said[name]), said[name]


@pytest.mark.timeout(FIRST_START + 180)
def test_behind_nat_a_killed_relay_stops_the_robot_and_the_link_comes_back_with_the_relay(
    world: RelayWorld, tmp_path: Path
) -> None:
    """The only relay killed mid-drive (by its pid): the robot, hearing nothing, stops within
    its watchdog and a control cycle (plus its braking); the relay started again at the same
    address, both ends reconnect through their NATs by themselves, the station has let go of
    the command it held, and a new one drives the robot."""
    from freelook.config import load_robot

    keys = _files(tmp_path)
    url = f"zenoh+tls://{RELAY}:{PORT}/r1"
    users = str(tmp_path / "relay.toml")
    relay_args = (
        "-m",
        "freelook.cli",
        "relay",
        "--listen",
        f"tls/{RELAY}:{PORT}",
        "--users",
        users,
    )
    started: list[subprocess.Popen[str]] = []
    said: dict[str, list[str]] = {"relay": [], "again": [], "robot": [], "station": []}
    try:
        relay = _start(world.public, *relay_args)
        started.append(relay)
        _read_until(relay, "listening on", 60, said["relay"])
        robot = _start(world.robot, "-m", "freelook.cli", "robot", "--hardware", "sim",
                       "--world", "square", "--listen", url, "--keys", str(keys))  # fmt: skip
        started.append(robot)
        _read_until(robot, "profile on", FIRST_START, said["robot"])
        station = _start(world.station, __file__, url, str(tmp_path / "ca.pem"), "outage")
        started.append(station)
        _read_until(station, "DRIVING", 60, said["station"])
        assert station.stdin is not None
        relay.kill()  # the relay dies, by its pid
        relay.wait(timeout=10)
        station.stdin.write("NOW\n")
        station.stdin.flush()
        time.sleep(3.0)  # the relay is away for 3 s
        again = _start(world.public, *relay_args)
        started.append(again)
        _read_until(again, "listening on", 60, said["again"])
        station.stdin.write("BACK\n")
        station.stdin.flush()
        line = _read_until(station, "RESULT ", 90, said["station"])
    finally:
        for process in reversed(started):
            _stop(process)
    out = json.loads(line.split("RESULT ", 1)[1])
    print(f"\nbehind NAT, the relay killed and started again: {out}")
    config = load_robot("pioneer3dx")
    v = 0.3
    coasting = config.safety.watchdog_timeout + config.link.control_period + 0.3  # + a busy box
    bound = v * coasting + v * v / (2 * config.drive.max_deceleration)
    assert out["moved_in_outage"] < bound, (out, bound)
    assert out["speed_on_return"] < 0.05, out  # it had stopped
    assert out["held_on_return"] is None, out  # the station let go across the outage
    assert out["back_after"] < 10.0, out  # the link came back by itself
    assert out["drives_again"], out
    for name in ("again", "robot"):
        assert "Traceback" not in "".join(said[name]), said[name]


# -- the station, run in its namespace by the test above --------------------------------------


async def _station(url: str) -> dict[str, object]:
    from test_relay import STATION_KEY

    from freelook.config import load_robot
    from freelook.link import VelocityCommand, derive_key, parse_transport_url
    from freelook.operator import OperatorStation
    from loopback import alive, running
    from waiting import wait_until_async

    config = load_robot("pioneer3dx")
    station = OperatorStation(
        config, None, parse_transport_url(url), key=derive_key(STATION_KEY), station=1
    )
    loop = asyncio.get_running_loop()

    def speed() -> float:
        telemetry = station.core.telemetry
        return 0.0 if telemetry is None else float(telemetry.v)

    async with running(station) as (task,):
        await wait_until_async(lambda: alive(task) and station.in_control, 60, "in control")
        station.drive_command = VelocityCommand(0.3, 0.0)
        await wait_until_async(lambda: speed() > 0.25, 30, "the robot to drive")
        longest, slowest, gap_at = 0.0, speed(), 0.0
        seen, last = station.core.report_rx, loop.time()
        flushed: list[float] = []  # when the test said it acted
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

        async def wait_flush() -> None:
            await reader.readline()
            flushed.append(loop.time())

        waiter = asyncio.create_task(wait_flush())
        print("DRIVING", flush=True)
        reports_after = 0
        gaps: list[tuple[float, float]] = []  # (began, s long) of every gap over 60 ms
        while not flushed or loop.time() < flushed[0] + AFTER:
            await asyncio.sleep(0.005)
            now = loop.time()
            if station.core.report_rx != seen:
                seen = station.core.report_rx
                if now - last > longest:
                    longest, gap_at = now - last, last
                if now - last > 0.06:
                    gaps.append((last, now - last))
                slowest = min(slowest, speed())
                last = now
                reports_after += bool(flushed)
        alive(task)
        waiter.cancel()
        return {
            "longest_gap": longest,
            "longest_began_after_event": round(gap_at - flushed[0], 3),
            # gaps over 60 ms from 1 s before the event (the kill or the flush) on
            "gaps": [
                (round(at - flushed[0], 3), round(length, 3))
                for at, length in gaps
                if at > flushed[0] - 1.0
            ],
            "slowest": slowest,
            "driving_at_end": speed(),
            "opened": station.sessions_opened,
            "resumed": station.sessions_resumed,
            "reports_after": reports_after,
        }


async def _station_outage(url: str) -> dict[str, object]:
    """Drive; at NOW (the relay killed) note the robot's last odometry; at BACK (a relay
    listens again) wait for telemetry, note how far the robot went and its speed, and drive
    it again with a new command."""
    from test_relay import STATION_KEY

    from freelook.config import load_robot
    from freelook.link import VelocityCommand, derive_key, parse_transport_url
    from freelook.operator import OperatorStation
    from loopback import alive, running
    from waiting import wait_until_async

    station = OperatorStation(
        load_robot("pioneer3dx"), None, parse_transport_url(url), key=derive_key(STATION_KEY),
        station=1,
    )  # fmt: skip
    loop = asyncio.get_running_loop()

    def telemetry() -> Any:
        assert station.core.telemetry is not None
        return station.core.telemetry

    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    async with running(station) as (task,):
        await wait_until_async(lambda: alive(task) and station.in_control, 60, "in control")
        station.drive_command = VelocityCommand(0.3, 0.0)
        await wait_until_async(
            lambda: station.core.telemetry is not None and telemetry().v > 0.25, 30, "driving"
        )
        print("DRIVING", flush=True)
        await reader.readline()  # NOW: the relay was killed
        at_kill = telemetry().odom
        await reader.readline()  # BACK: a relay listens again
        back, seen = loop.time(), station.core.report_rx
        await wait_until_async(
            lambda: alive(task) and station.core.report_rx != seen, 30, "telemetry again"
        )
        back_after = loop.time() - back
        on_return = telemetry()
        held = station.drive_command
        station.drive_command = VelocityCommand(0.3, 0.0)
        drives = True
        try:
            await wait_until_async(lambda: telemetry().v > 0.25, 20, "driving again")
        except AssertionError:
            drives = False
        return {
            "moved_in_outage": math.dist(at_kill[:2], on_return.odom[:2]),
            "speed_on_return": on_return.v,
            "held_on_return": None if held is None else repr(held),
            "back_after": back_after,
            "drives_again": drives,
            "opened": station.sessions_opened,
            "resumed": station.sessions_resumed,
        }


if __name__ == "__main__":
    from freelook.link import TLS_CA_ENV

    os.environ[TLS_CA_ENV] = sys.argv[2]
    run = _station_outage if sys.argv[3:] == ["outage"] else _station
    print("RESULT " + json.dumps(asyncio.run(run(sys.argv[1]))), flush=True)

"""``freelook relay``: a robot and a station that both connect out to a relay on TLS (on
loopback) drive end to end through it with the usual authenticated session; killing the relay
stops the robot within its watchdog and a control cycle, and the link comes back by itself
when a relay returns at the same address; a peer on the relay without credentials reads
nothing and moves nothing. The relay runs as a user runs it, the robot and the station in this
process."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import zenoh
from test_zenoh import free_port
from test_zenoh_acl import Peer, _certificates

from freelook.config import load_robot
from freelook.errors import ConfigError
from freelook.hardware.sim import simulated_server
from freelook.link import (
    TLS_CA_ENV,
    KeyRing,
    VelocityCommand,
    ZenohBus,
    derive_key,
    parse_transport_url,
    station_user,
    zenoh_config,
)
from freelook.maps import load_world
from freelook.operator import OperatorStation
from freelook.robot import ServerOptions
from keys_for_tests import KEY_A, KEY_C, write_keys_file
from loopback import running, serving
from waiting import wait_until_async

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed"),
]

CONFIG = load_robot("pioneer3dx")
STATION_KEY, ROBOT_KEY = KEY_A, KEY_C
FORGED = bytes.fromhex("fe4c") + bytes(60)  # native framing, no valid tag


def _keys_file(folder: Path) -> Path:
    """The robot's keys file (its stations, its bus key, the CA it checks the relay by) and,
    beside it, the relay's users file made from it by ``freelook keys relay``, with the
    relay's certificate: ``relay.toml``."""
    files = _certificates(folder)
    keys = write_keys_file(
        folder / "keys.toml",
        f'[stations.1]\nkey = "{STATION_KEY}"\n[robots.r1]\nkey = "{ROBOT_KEY}"\n'
        f'[zenoh]\ntls_root_ca = "{files["ca"]}"\n',
    )
    users = folder / "relay.toml"
    subprocess.run(
        [sys.executable, "-m", "freelook.cli", "keys", "relay", str(keys), str(users)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    with users.open("a") as stream:
        stream.write('\n[zenoh]\ntls_certificate = "cert.pem"\ntls_private_key = "key.pem"\n')
    return keys


@contextlib.contextmanager
def relay(keys: Path, port: int) -> Iterator[subprocess.Popen[str]]:
    """``freelook relay --listen tls/127.0.0.1:PORT --users relay.toml`` (beside ``keys``)
    until the block ends (or the test kills it)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "freelook.cli", "relay", "--listen", f"tls/127.0.0.1:{port}",
         "--users", str(keys.parent / "relay.toml")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert f"listening on tls/127.0.0.1:{port}" in line, line
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired as err:  # killed, so the next test does not inherit it
            process.kill()
            process.wait()
            said = process.stdout.read() if process.stdout is not None else ""
            raise AssertionError(
                f"freelook relay on port {port} ignored SIGTERM for 10 s; it said:\n{said}"
            ) from err
        finally:
            if process.stdout is not None:
                process.stdout.close()


class Commanded:
    """The robot's commanded speed (after safety) every 5 ms: when it first fell below a
    level and when it reached zero."""

    def __init__(self, server: object) -> None:
        self.core = server.program.core  # type: ignore[attr-defined]
        self.task = asyncio.create_task(self._watch())
        self.falling: float | None = None
        self.zero: float | None = None

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(0.005)
            v = self.core.control.last_output.v
            if self.falling is None and v < 0.29:
                self.falling = loop.time()
            if self.zero is None and abs(v) < 0.005:
                self.zero = loop.time()


def test_through_a_relay_the_robot_drives_stops_when_it_dies_and_comes_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = _keys_file(tmp_path)
    monkeypatch.setenv(TLS_CA_ENV, str(tmp_path / "ca.pem"))  # the station's root CA
    port = free_port()
    url = f"zenoh+tls://127.0.0.1:{port}/r1"
    out: dict[str, object] = {}

    async def scenario() -> None:
        server, robot = simulated_server(
            CONFIG,
            load_world("square"),
            ServerOptions(listen=url, keys=KeyRing.load(keys), camera=True, camera_rate=10.0),
            robot_map=None,
        )
        station = OperatorStation(
            CONFIG, None, parse_transport_url(url), key=derive_key(STATION_KEY), station=1
        )
        loop = asyncio.get_running_loop()
        first = relay(keys, port)
        process = first.__enter__()
        try:
            async with serving(server), running(station):
                await wait_until_async(
                    lambda: station.in_control and station.assembler.completed > 3,
                    30,
                    "station 1 in control through the relay, its video coming",
                )
                station.drive_command = VelocityCommand(0.3, 0.0)
                core = server.program.core
                await wait_until_async(lambda: core.control.last_output.v > 0.29, 10, "driving")
                frames, reports = station.assembler.completed, station.core.report_rx
                reported = 0
                for _ in range(400):  # 2 s
                    await asyncio.sleep(0.005)
                    if station.core.report_rx != reports:
                        reports, reported = station.core.report_rx, reported + 1
                out["fps"] = (station.assembler.completed - frames) / 2.0
                out["telemetry_hz"] = reported / 2.0
                commanded = Commanded(server)
                process.kill()  # the relay dies
                killed = loop.time()
                await wait_until_async(lambda: commanded.zero, 10, "the robot to stop")
                commanded.task.cancel()
                assert commanded.falling is not None
                out["stop_starts"] = commanded.falling - killed
                out["stopped"] = (commanded.zero or killed) - killed
                out["speed"] = robot.sim.ground_truth.v
                first.__exit__(None, None, None)
                with relay(keys, port):  # a relay returns at the same address
                    returned = loop.time()
                    received = station.stats.received
                    await wait_until_async(
                        lambda: station.stats.received > received + 20,
                        30,
                        "telemetry through the new relay",
                    )
                    out["back_after"] = loop.time() - returned
                    out["held"] = station.drive_command
                    station.drive_command = VelocityCommand(0.3, 0.0)
                    await wait_until_async(
                        lambda: core.control.last_output.v > 0.29, 20, "a new command to drive it"
                    )
        finally:
            with contextlib.suppress(Exception):
                first.__exit__(None, None, None)

    asyncio.run(scenario())
    print(f"\nthrough the relay, the relay killed and started again: {out}")
    bound = CONFIG.safety.watchdog_timeout + CONFIG.link.control_period
    assert out["telemetry_hz"] > 15, out  # the robot's 32 a second (sampled at 200 Hz)
    assert out["fps"] > 5, out  # 10 fps asked
    # the watchdog's stop starts within its timeout and a control cycle of the relay's end
    # (+ scheduling on a busy machine), its controlled stop from 0.3 m/s after that
    assert out["stop_starts"] < bound + 0.3, out  # type: ignore[operator]
    braking = 0.3 / CONFIG.drive.max_deceleration
    assert out["stopped"] < bound + braking + 0.3, out  # type: ignore[operator]
    assert out["held"] is None, out  # the station let go of what it held across the outage


def test_a_peer_on_the_relay_without_credentials_reads_and_moves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Strangers on the relay (no password, a guessed user, the station's user with a wrong
    password, and no TLS at all) connect to nothing; the robot refuses nothing because nothing
    of theirs reaches it, and the station keeps driving."""
    keys = _keys_file(tmp_path)
    monkeypatch.setenv(TLS_CA_ENV, str(tmp_path / "ca.pem"))
    port = free_port()
    url = f"zenoh+tls://127.0.0.1:{port}/r1"
    endpoint = f"tls/127.0.0.1:{port}"
    out: dict[str, object] = {}

    async def scenario() -> None:
        server, _ = simulated_server(
            CONFIG,
            load_world("square"),
            ServerOptions(listen=url, keys=KeyRing.load(keys), camera=False),
            robot_map=None,
        )
        station = OperatorStation(
            CONFIG, None, parse_transport_url(url), key=derive_key(STATION_KEY), station=1
        )
        async with serving(server), running(station):
            await wait_until_async(lambda: station.in_control, 30, "station 1 in control")
            refused = dict(server.session.stats.refused)
            guessed = ("station-0000000000000000", "guess")
            wrong = (station_user(derive_key(STATION_KEY)).name, "not the password")
            peers = [
                await asyncio.to_thread(_tls_peer, endpoint, tmp_path / "ca.pem", who)
                for who in (None, guessed, wrong)
            ]
            plain = await asyncio.to_thread(Peer, "client", f"tcp/127.0.0.1:{port}", None)
            peers.append(plain)
            user = station_user(derive_key(STATION_KEY))
            rightful = await asyncio.to_thread(
                _tls_peer, endpoint, tmp_path / "ca.pem", (user.name, user.password)
            )
            try:
                for peer in peers:
                    peer.listen("**")
                    if peer.session is not None:
                        for _ in range(50):
                            peer.session.put("freelook/r1/control/x", FORGED)
                await asyncio.sleep(2.0)
                out["connected"] = [peer.connected for peer in peers]
                out["heard"] = [peer.count("freelook/") for peer in peers]
                out["refused"] = {
                    k: v - refused.get(k, 0)
                    for k, v in server.session.stats.refused.items()
                    if v > refused.get(k, 0)
                }
                out["in_control"] = station.in_control
                out["rightful"] = rightful.connected  # the same way in, with the password
            finally:
                for peer in [*peers, rightful]:
                    peer.close()

    with relay(keys, port):
        asyncio.run(scenario())
    assert out["connected"] == [0, 0, 0, 0], out
    assert out["heard"] == [0, 0, 0, 0], out
    assert out["refused"] == {}, out
    assert out["in_control"], out
    assert out["rightful"], out


def _tls_peer(endpoint: str, ca: Path, who: tuple[str, str] | None) -> Peer:
    """A raw Zenoh client over TLS that trusts the relay's CA, logging in as ``who``."""
    peer = Peer.__new__(Peer)  # the attack peer of test_zenoh_acl, opened on TLS
    config = zenoh_config("client", connect=[endpoint])
    config.insert_json5("transport/link/tls/root_ca_certificate", json.dumps(str(ca)))
    if who is not None:
        config.insert_json5("transport/auth/usrpwd/user", json.dumps(who[0]))
        config.insert_json5("transport/auth/usrpwd/password", json.dumps(who[1]))
    peer.heard = []
    peer._lock = threading.Lock()
    try:
        peer.session = zenoh.open(config)
    except zenoh.ZError:
        peer.session = None
    return peer


def test_a_relay_url_is_a_client_of_a_router_on_tls() -> None:
    url = parse_transport_url("zenoh+tls://relay.example:7447/r1")
    assert (url.scheme, url.host, url.port, url.robot, url.mode, url.tls) == (
        "zenoh", "relay.example", 7447, "r1", "client", True
    )  # fmt: skip
    for bad in (
        "zenoh+tls://relay.example/r1",
        "zenoh+tls://relay.example:7447/",
        "zenoh+tls://relay.example:7447/a/b",
        "zenoh+tls://relay.example:7447/r1?mode=peer",
    ):
        with pytest.raises(ConfigError, match="expected zenoh\\+tls://RELAY:PORT/ROBOT"):
            parse_transport_url(bad)


def test_a_relay_url_needs_a_root_ca_and_a_relay_its_users_and_certificate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TLS_CA_ENV, raising=False)
    url = parse_transport_url("zenoh+tls://127.0.0.1:9/r1")
    with pytest.raises(ConfigError, match=TLS_CA_ENV):
        ZenohBus.for_url(url, listen=False, key=derive_key(STATION_KEY))
    keys = write_keys_file(tmp_path / "keys.toml", f'[stations.1]\nkey = "{STATION_KEY}"\n')
    users = tmp_path / "users.toml"
    cli = [sys.executable, "-m", "freelook.cli"]
    made = subprocess.run([*cli, "keys", "relay", str(keys), str(users)], capture_output=True)
    assert made.returncode == 0, made.stderr
    text = users.read_text()
    assert STATION_KEY not in text  # the relay never holds a link key
    assert station_user(derive_key(STATION_KEY)).password in text
    assert users.stat().st_mode & 0o077 == 0
    forged = write_keys_file(tmp_path / "forged.toml", '[stations]\nstation-1 = "00"\n')
    for args, said in (
        (["--users", str(users)], "needs [zenoh] tls_certificate"),
        (["--users", str(keys)], "is not a station user"),  # a keys file is no users file
        (["--users", str(forged)], "is not a station user"),
        (["--users", str(users), "--listen", "udp/127.0.0.1:7447"], "expected tls/HOST:PORT"),
        (
            [
                "--users",
                str(users),
                "--listen",
                "tcp/127.0.0.1:7447",
                "--connect",
                "tcp/127.0.0.1:7448",
            ],
            "name this relay",
        ),
    ):
        done = subprocess.run([*cli, "relay", *args], capture_output=True, text=True, timeout=60)
        assert done.returncode != 0
        assert said in done.stdout + done.stderr, (args, done.stdout, done.stderr)

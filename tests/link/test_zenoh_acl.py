"""Zenoh with access control, attacked on loopback (tcp/127.0.0.1, real sessions): a robot
served from a keys file admits only its stations' users, each to its own key expressions.
A peer without the password sees and moves nothing; a station with a valid password can
neither read another station's telemetry and video nor publish on a robot's telemetry key or
another station's control key, and its flood leaves the driver's video and telemetry rate as
they were; discovery still works. The same through ``freelook fleet router --keys``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import zenoh
from test_zenoh import free_port

from freelook.config import load_robot
from freelook.errors import ConfigError
from freelook.hardware.sim import simulated_server
from freelook.link import (
    MAX_PACKET,
    TLS_CA_ENV,
    BusAccess,
    KeyRing,
    RobotInfo,
    TransportUrl,
    ZenohAuth,
    ZenohBus,
    ZenohTls,
    bus_auth,
    derive_key,
    parse_transport_url,
    robot_user,
    station_user,
    zenoh_config,
)
from freelook.maps import load_world
from freelook.operator import OperatorStation
from freelook.robot import ServerOptions
from keys_for_tests import KEY_A, KEY_B, KEY_C, KEY_D, KEY_E, KEY_F, write_keys_file
from loopback import running, serving
from waiting import wait_until_async

pytestmark = pytest.mark.timeout(120)

KEY_1 = KEY_A  # station 1: the driver
KEY_2 = KEY_B  # station 2: a station with a valid key, turned attacker
ROBOT_KEY = KEY_C
ROUTER_A, ROUTER_B, ROUTER_D = KEY_D, KEY_E, KEY_F
REMOTE = zenoh.Locality.REMOTE


def _keys() -> KeyRing:
    return KeyRing.from_mapping({"stations": {"1": {"key": KEY_1}, "2": {"key": KEY_2}}})


class Peer:
    """A raw Zenoh session an attacker opens (no freelook end on it): what it receives from
    others, counted by key."""

    def __init__(self, mode: str, endpoint: str, user: tuple[str, str] | None) -> None:
        config = zenoh_config(mode, connect=[endpoint])  # type: ignore[arg-type]
        if user is not None:
            config.insert_json5("transport/auth/usrpwd/user", json.dumps(user[0]))
            config.insert_json5("transport/auth/usrpwd/password", json.dumps(user[1]))
        self.heard: list[str] = []
        self._lock = threading.Lock()
        try:
            self.session: zenoh.Session | None = zenoh.open(config)
        except zenoh.ZError:  # a client refused by the router cannot open at all
            self.session = None

    @property
    def connected(self) -> int:
        """How many Zenoh nodes this peer reaches."""
        if self.session is None:
            return 0
        info = self.session.info
        return len(list(info.peers_zid())) + len(list(info.routers_zid()))

    def listen(self, key: str) -> None:
        if self.session is None:
            return

        def hear(sample: zenoh.Sample) -> None:
            with self._lock:
                self.heard.append(str(sample.key_expr))

        self.session.declare_subscriber(key, hear, allowed_origin=REMOTE)

    def snoop(self) -> dict[str, list[str]]:
        """What a curious peer can list: every queryable's and liveliness token's key."""
        if self.session is None:
            return {"queryables": [], "tokens": [], "info": [], "alive": []}
        answers = [r.ok for r in self.session.get("**", timeout=0.5) if r.ok is not None]
        tokens = self.session.liveliness().get("**", timeout=0.5)
        return {
            "queryables": sorted(str(s.key_expr) for s in answers),
            "tokens": sorted(str(r.ok.key_expr) for r in tokens if r.ok is not None),
            "info": sorted(
                str(r.ok.key_expr)
                for r in self.session.get("freelook/*/info", timeout=0.5)
                if r.ok is not None
            ),
            "alive": sorted(
                str(r.ok.key_expr)
                for r in self.session.liveliness().get("freelook/*/alive", timeout=0.5)
                if r.ok is not None
            ),
        }

    def count(self, pattern: str) -> int:
        with self._lock:
            return sum(pattern in key for key in self.heard)

    def close(self) -> None:
        if self.session is not None:
            self.session.close()  # type: ignore[no-untyped-call]


def _user(key: str) -> tuple[str, str]:
    user = station_user(derive_key(key))
    return user.name, user.password


async def _flood(put: Callable[[], None], rate: float, stop: asyncio.Event) -> int:
    """``put`` at ``rate`` per second until ``stop``; how many were sent."""
    loop = asyncio.get_running_loop()
    start, sent = loop.time(), 0
    while not stop.is_set():
        due = start + sent / rate
        if loop.time() < due:
            await asyncio.sleep(due - loop.time())
            continue
        put()
        sent += 1
    return sent


def test_credentials_are_made_from_the_keys_and_the_acl_is_default_deny() -> None:
    one, again, two = (station_user(derive_key(k)) for k in (KEY_1, KEY_1, KEY_2))
    assert one == again
    assert one.name != two.name
    assert one.password != two.password
    assert one.name.startswith("station-")
    assert len(one.password) == 64
    assert KEY_1 not in one.password
    assert KEY_1[:16] not in one.name
    access = BusAccess.of([derive_key(KEY_1), derive_key(KEY_2)], {"r1": derive_key(ROBOT_KEY)})
    acl = access.access_control()
    assert acl["enabled"] is True
    assert acl["default_permission"] == "deny"
    assert [s["usernames"] for s in acl["subjects"]] == [[one.name], [two.name], ["robot-r1"]]
    puts = {
        r["id"]: r["key_exprs"]
        for r in acl["rules"]
        if r["flows"] == ["ingress"] and "put" in r["messages"]
    }
    assert puts[f"{one.name} puts"] == [f"freelook/*/control/{one.name}-$*"]
    assert puts["robot-r1 puts"] == ["freelook/r1/telemetry/*", "freelook/r1/video/*"]
    assert access.dictionary().splitlines() == [
        f"{one.name}:{one.password}",
        f"{two.name}:{two.password}",
        f"robot-r1:{robot_user('r1', derive_key(ROBOT_KEY)).password}",
    ]


def test_a_bus_auth_config_error_is_one_clear_line() -> None:
    url = parse_transport_url("zenoh://127.0.0.1:7447/r9?mode=client")
    with pytest.raises(ConfigError, match=r"add \[robots.r9\] to the keys file"):
        bus_auth(url, listen=True, keys=_keys())
    nowhere = ZenohAuth(tls=ZenohTls(Path("/nope")))
    with pytest.raises(ConfigError, match=r"root CA /nope: no such file"):
        ZenohBus.peer(connect=["tcp/127.0.0.1:9"], auth=nowhere)


@contextlib.contextmanager
def _router(keys: Path, port: int) -> Iterator[None]:
    """``freelook fleet router --keys KEYS`` on 127.0.0.1:PORT, until the block ends."""
    router = subprocess.Popen(
        [sys.executable, "-m", "freelook.cli", "fleet", "router", "--listen",
         f"127.0.0.1:{port}", "--keys", str(keys)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip
    try:
        assert router.stdout is not None
        line = router.stdout.readline()
        assert "listening on" in line, line
        yield
    finally:
        router.terminate()
        router.wait(timeout=10)
        if router.stdout is not None:
            router.stdout.close()


def _keys_file(folder: Path) -> Path:
    keys = folder / "keys.toml"
    write_keys_file(
        keys,
        f'[stations.1]\nkey = "{KEY_1}"\n[stations.2]\nkey = "{KEY_2}"\n'
        f'[robots.r1]\nkey = "{ROBOT_KEY}"\n[robots.r7]\nkey = "{ROBOT_KEY}"\n',
    )
    return keys


@pytest.mark.parametrize("mode", ["peer", "router"])
def test_no_station_or_stranger_reads_or_blinds_the_driver_over_zenoh(
    mode: str, tmp_path: Path
) -> None:
    """A robot served with a keys file (listening as a peer, or a client of ``freelook fleet
    router --keys``), station 1 driving with its camera on. Strangers (no password, a guessed
    user, station 1's user with a wrong password) are refused at connection. Station 2, with
    its own valid key, listens on everything and floods station 1's telemetry, video and
    control keys at 300 samples/s each: it hears nothing of station 1's, the robot and
    station 1 see none of its samples, station 1 still receives ≥ 90 % of the video and
    telemetry the robot sends it, and a snoop lists only the robots (info, liveliness)."""
    port = free_port()
    endpoint = f"tcp/127.0.0.1:{port}"
    config, world = load_robot("pioneer3dx"), load_world("square")
    url = f"zenoh://127.0.0.1:{port}/r1" + ("?mode=client" if mode == "router" else "")
    keys = _keys_file(tmp_path)
    zenoh_mode = "client" if mode == "router" else "peer"

    async def scenario() -> dict[str, Any]:
        server, _ = simulated_server(
            config,
            world,
            ServerOptions(listen=url, keys=KeyRing.load(keys), camera=True, camera_rate=10.0),
            robot_map=None,
        )
        driver = OperatorStation(
            config, None, parse_transport_url(url), key=derive_key(KEY_1), station=1
        )
        peers: list[Peer] = []
        try:
            async with serving(server), running(driver):
                await wait_until_async(
                    lambda: driver.in_control and driver.assembler.completed > 3,
                    20,
                    "station 1 in control, its video coming",
                )
                for who in (None, ("station-0000000000000000", "guess"), (_user(KEY_1)[0], "x")):
                    peers.append(Peer(zenoh_mode, endpoint, who))
                strangers = peers[:]
                attacker = Peer(zenoh_mode, endpoint, _user(KEY_2))
                peers.append(attacker)
                for peer in peers:
                    for key in ("**", "freelook/**", "freelook/r1/*/*", "freelook/r1/video/*"):
                        peer.listen(key)
                await wait_until_async(lambda: attacker.connected, 5, "station 2 connected")
                assert attacker.session is not None
                loop = asyncio.get_running_loop()
                assert driver.driver is not None
                tag = driver.driver.endpoint.tag  # type: ignore[union-attr]
                robot_refused = dict(server.session.stats.refused)
                driver_end = driver.driver.endpoint

                def counts() -> tuple[int, int, int, int]:
                    """Frames and packets station 1 received, and the robot sent it."""
                    return (
                        driver.assembler.completed,
                        sum(server.sent_by_stream.values()),
                        driver.session.stats.received,
                        server.session.sent,  # station 1 is the only one in session
                    )

                async def window(seconds: float, lag: float = 0.5) -> tuple[int, ...]:
                    """What the robot sent station 1 in ``seconds``, and what station 1
                    received in as long a window ``lag`` later (what was on its way)."""
                    # measuring windows, not synchronisation
                    sent_from = counts()
                    await asyncio.sleep(lag)
                    received_from = counts()
                    await asyncio.sleep(seconds - lag)
                    sent_to = counts()
                    await asyncio.sleep(lag)
                    received_to = counts()
                    return (
                        received_to[0] - received_from[0],
                        sent_to[1] - sent_from[1],
                        received_to[2] - received_from[2],
                        sent_to[3] - sent_from[3],
                    )

                baseline = await window(4.0)
                stop = asyncio.Event()
                forged = bytes.fromhex("fe4c") + bytes(60)
                oversized = bytes(MAX_PACKET + 1)  # dropped and counted by the end it reaches
                floods = [
                    asyncio.create_task(_flood(put, 300.0, stop))
                    for put in (
                        lambda: attacker.session.put(f"freelook/r1/telemetry/{tag}", forged),
                        lambda: attacker.session.put(f"freelook/r1/video/{tag}", forged),
                        lambda: attacker.session.put(f"freelook/r1/control/{tag}", forged),
                        lambda: attacker.session.put("freelook/r1/telemetry/x", forged),
                        lambda: attacker.session.put(f"freelook/r1/video/{tag}", oversized),
                    )
                ]
                attacked = await window(4.0)
                stop.set()
                sent = await asyncio.gather(*floods)
                snoops = {
                    "stranger": await asyncio.to_thread(strangers[0].snoop),
                    "station 2": await asyncio.to_thread(attacker.snoop),
                }
                return {
                    "strangers connected": [p.connected for p in strangers],
                    "heard": {i: peer.count("freelook/r1/") for i, peer in enumerate(peers)},
                    "baseline": baseline,
                    "attacked": attacked,
                    "sent": sent,
                    "elapsed": loop.time(),
                    "robot refused": _grown(robot_refused, server.session.stats.refused),
                    "driver malformed": driver_end.malformed,  # type: ignore[union-attr]
                    "snoops": snoops,
                    "tag": tag,
                }
        finally:
            for peer in peers:
                peer.close()

    if mode == "router":
        with _router(keys, port):
            out = asyncio.run(scenario())
    else:
        out = asyncio.run(scenario())
    assert out["tag"].startswith(_user(KEY_1)[0] + "-")  # the driver's channels carry its user
    assert out["strangers connected"] == [0, 0, 0]  # no password, a guessed user, a wrong one
    assert out["heard"] == {0: 0, 1: 0, 2: 0, 3: 0}, out["heard"]  # nobody read station 1's
    # each key's flood ran (~300/s for 4.5 s on a quiet machine; a busy one sends fewer, and
    # the shares below are of the same window, so its speed cancels out)
    assert all(n >= 300 for n in out["sent"]), out["sent"]
    assert out["robot refused"] == {}  # the forged control samples never reached the robot
    assert out["driver malformed"] == 0  # nor the oversized ones station 1's end
    # station 1's share of what the robot sent it, in the same window (the machine's speed
    # cancels out): all of it before the flood, and still all of it under the flood
    for window in ("baseline", "attacked"):
        frames, frames_sent, packets, packets_sent = out[window]
        assert frames_sent >= 20, out  # 10 fps video for 4 s
        assert frames >= 0.9 * frames_sent, (window, out[window])
        assert packets >= 0.9 * packets_sent, (window, out[window])
    nothing = {"queryables": [], "tokens": [], "info": [], "alive": []}
    assert out["snoops"]["stranger"] == nothing
    assert out["snoops"]["station 2"] == {
        "queryables": [],  # ** is not a key it may ask
        # the robot's token only: a peer holds the tokens it was sent; a router refuses **
        "tokens": ["freelook/r1/alive"] if mode == "peer" else [],
        "info": ["freelook/r1/info"],
        "alive": ["freelook/r1/alive"],
    }


def _grown(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {k: v - before.get(k, 0) for k, v in after.items() if v > before.get(k, 0)}


def test_a_router_with_keys_admits_each_robot_and_station_to_its_own_keys(tmp_path: Path) -> None:
    """``freelook fleet router --keys FILE``: the robot logs in as ``robot-r7`` with its
    ``[robots.r7]`` key, the station with its own; a client without the password cannot
    even open its session; station 2 reads nothing of station 1's and its puts on station 1's
    control key and the robot's telemetry key reach nobody; a robot without its bus key
    cannot publish as r7."""
    keys = _keys_file(tmp_path)
    port = free_port()
    endpoint = f"tcp/127.0.0.1:{port}"
    with _router(keys, port):
        url = parse_transport_url(f"zenoh://127.0.0.1:{port}/r7?mode=client")
        ring = KeyRing.load(keys)

        async def scenario() -> dict[str, Any]:
            robot_bus = ZenohBus.for_url(url, listen=True, keys=ring)
            station_bus = ZenohBus.for_url(url, listen=False, key=derive_key(KEY_1))
            attacker = Peer("client", endpoint, _user(KEY_2))
            impostor = Peer("client", endpoint, ("robot-r7", "not its password"))
            impostor.close()
            robot_end = robot_bus.robot(RobotInfo("r7", "pioneer3dx"))
            station_end = station_bus.station("r7")
            try:
                for key in ("**", "freelook/r7/*/*"):
                    attacker.listen(key)
                station_end.send(b"hello robot")
                item = await robot_end.recv_from(5.0)
                assert item is not None
                robot_end.learn_peer(item[1])
                for _ in range(3):
                    attacker.session.put(f"freelook/r7/control/{station_end.tag}", b"forged")
                    attacker.session.put(f"freelook/r7/telemetry/{station_end.tag}", b"forged")
                robot_end.send(b"hello station", item[1])
                back = await station_end.recv_from(5.0)
                # the legitimate pair still talks after the forgeries: both ends hear only it
                station_end.send(b"again")
                again = await robot_end.recv_from(5.0)
                robot_end.send(b"and back", item[1])
                back_again = await station_end.recv_from(5.0)
                queued = [await robot_end.recv_from(0.3), await station_end.recv_from(0.3)]
                return {
                    "source": item[1],
                    "station": [back, back_again],
                    "robot": [item[0], again[0] if again else None],
                    "queued": queued,
                    "heard": attacker.count("freelook/r7/"),
                    "impostor": (impostor.session is None, impostor.connected),
                    "found": await asyncio.to_thread(attacker.snoop),
                    "tag": station_end.tag,
                }
            finally:
                robot_end.close()
                station_end.close()
                attacker.close()
                station_bus.close()
                robot_bus.close()

        out = asyncio.run(scenario())
        with pytest.raises(ConfigError, match="cannot open the Zenoh session"):
            ZenohBus.client([endpoint])  # no password: client mode fails to open
    assert out["source"] == out["tag"]
    assert out["robot"] == [b"hello robot", b"again"]
    assert [b[0] if b else None for b in out["station"]] == [b"hello station", b"and back"]
    assert out["queued"] == [None, None]  # no forged sample reached either end
    assert out["heard"] == 0
    assert out["impostor"] == (True, 0)  # a wrong robot password opens nothing
    assert out["found"] == {
        "queryables": [],
        "tokens": [],  # the router refuses a liveliness query on **
        "info": ["freelook/r7/info"],
        "alive": ["freelook/r7/alive"],
    }


def _certificates(folder: Path) -> dict[str, Path]:
    """A test CA and a certificate it signed for 127.0.0.1 (openssl), and a second CA."""
    files = {n: folder / f"{n}.pem" for n in ("ca", "ca_key", "other", "other_key", "cert", "key")}
    csr, ext = folder / "cert.csr", folder / "ext.cnf"
    ext.write_text("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n")
    for ca, key in (("ca", "ca_key"), ("other", "other_key")):
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                 f"/CN=freelook {ca}", "-keyout", files[key], "-out", files[ca])  # fmt: skip
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
             "-keyout", files["key"], "-out", csr)  # fmt: skip
    _openssl("x509", "-req", "-in", csr, "-CA", files["ca"], "-CAkey", files["ca_key"],
             "-CAcreateserial", "-days", "1", "-extfile", ext, "-out", files["cert"])  # fmt: skip
    return files


def _openssl(*args: object) -> None:
    subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True)


class Relay:
    """A TCP relay on 127.0.0.1 to ``target`` that keeps every byte crossing it in
    :attr:`seen` (what anyone on the path could read)."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.seen = bytearray()
        self._writers: list[asyncio.StreamWriter] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self.server: asyncio.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError):
            while data := await reader.read(65536):
                self.seen.extend(data)
                writer.write(data)
                await writer.drain()
        writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        self._writers += [writer, up_writer]
        pipes = [
            asyncio.create_task(self._pipe(reader, up_writer)),
            asyncio.create_task(self._pipe(up_reader, writer)),
        ]
        self._tasks.update(pipes)
        await asyncio.gather(*pipes, return_exceptions=True)

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
        for writer in self._writers:
            writer.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for writer in self._writers:
            with contextlib.suppress(OSError):
                await writer.wait_closed()
        if self.server is not None:
            await self.server.wait_closed()


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
@pytest.mark.parametrize("tls", [False, True])
def test_over_tls_nothing_crosses_in_clear(
    tls: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A robot listening with its keys file's ``[zenoh]`` certificate, a station trusting
    the CA (``FREELOOK_ZENOH_CA``), through a relay that records every byte: the packets
    cross and the user name and payloads are nowhere in the recording; the password never is,
    TLS or not (usrpwd proves it with a keyed hash). A station on plain TCP, or trusting
    another CA, connects to nothing."""
    files = _certificates(tmp_path)
    keys = tmp_path / "keys.toml"
    table = '[zenoh]\ntls_certificate = "cert.pem"\ntls_private_key = "key.pem"\n' if tls else ""
    write_keys_file(keys, f'[stations.1]\nkey = "{KEY_1}"\n' + table)
    if tls:
        monkeypatch.setenv(TLS_CA_ENV, str(files["ca"]))
    port = free_port()
    user = station_user(derive_key(KEY_1))

    async def scenario() -> dict[str, Any]:
        relay = Relay(port)
        relayed = await relay.start()
        robot_bus = ZenohBus.for_url(
            parse_transport_url(f"zenoh://127.0.0.1:{port}/r1"),
            listen=True,
            keys=KeyRing.load(keys),
        )
        url = parse_transport_url(f"zenoh://127.0.0.1:{relayed}/r1")
        # opened off the loop: the relay runs on it while Zenoh connects through it
        station_bus = await asyncio.to_thread(
            ZenohBus.for_url, url, listen=False, key=derive_key(KEY_1)
        )
        robot_end = robot_bus.robot(RobotInfo("r1", "pioneer3dx"))
        station_end = station_bus.station("r1")
        endpoint = f"tcp/127.0.0.1:{port}"
        wrong = [
            ZenohBus.peer(connect=[endpoint], auth=ZenohAuth(user=user)),  # plain TCP
            ZenohBus.peer(
                connect=[endpoint], auth=ZenohAuth(user=user, tls=ZenohTls(files["other"]))
            ),
        ]
        try:
            received: list[bytes] = []

            async def crossed() -> bool:
                # a peer sends only once it knows of a subscriber: until then, send again
                station_end.send(b"the secret payload")
                item = await robot_end.recv_from(0.2)
                received.extend([item[0]] if item else [])
                return bool(received)

            await wait_until_async(crossed, 10, "the station's packet at the robot")
            return {
                "received": received[0],
                "wrong": [len(list(b.session.info.peers_zid())) for b in wrong],
                "seen": bytes(relay.seen),
            }
        finally:
            robot_end.close()
            station_end.close()
            for bus in (*wrong, station_bus, robot_bus):
                bus.close()
            await relay.close()

    out = asyncio.run(scenario())
    seen = out["seen"]
    assert out["received"] == b"the secret payload"
    assert len(seen) > 100  # the session crossed the relay
    assert user.password.encode() not in seen
    assert (user.name.encode() in seen) is not tls
    assert (b"the secret payload" in seen) is not tls
    assert out["wrong"] == ([0, 0] if tls else [1, 0])


def test_keys_new_writes_robot_bus_keys_and_bad_bus_configs_are_one_line(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from freelook.cli import app

    path = tmp_path / "keys.toml"
    made = CliRunner().invoke(
        app, ["keys", "new", str(path), "--robot", "scout-1", "--router", "site-b"]
    )
    assert made.exit_code == 0, made.output
    ring = KeyRing.load(path)
    assert list(ring.robots) == ["scout-1"]
    assert len(ring.robots["scout-1"]) == 32
    assert list(ring.routers) == ["site-b"]
    assert len(ring.routers["site-b"]) == 32
    assert ring.routers["site-b"] != ring.robots["scout-1"]
    bad = CliRunner().invoke(app, ["keys", "new", str(tmp_path / "b.toml"), "--robot", "a/b"])
    assert bad.exit_code == 2
    assert bad.output.startswith("--robot: robot name 'a/b'")
    weak = tmp_path / "weak.toml"
    write_keys_file(weak, '[stations.1]\nkey = "robot"\n')
    for args, line in (
        (["fleet", "router", "--keys", str(weak)], f"{weak}: stations.1.key has at most"),
        (["fleet", "router", "--keys", str(tmp_path / "none.toml")], f"{tmp_path / 'none.toml'}"),
        (["fleet", "list", "zenoh://127.0.0.1:9/any", "--key", "robot"], "--key has at most"),
    ):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert len(result.output.strip().splitlines()) == 1, result.output
        assert result.output.startswith(line), result.output


@contextlib.contextmanager
def _routers(*commands: list[str]) -> Iterator[list[subprocess.Popen[str]]]:
    """``freelook fleet router`` processes with these arguments, each announced, until the
    block ends."""
    started: list[subprocess.Popen[str]] = []
    try:
        for args in commands:
            router = subprocess.Popen(
                [sys.executable, "-m", "freelook.cli", "fleet", "router", *args],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            started.append(router)
            assert router.stdout is not None
            line = router.stdout.readline()
            assert "listening on" in line, line
        yield started
    finally:
        for router in started:
            router.terminate()
            router.wait(timeout=10)
            if router.stdout is not None:
                router.stdout.close()


def test_a_router_joins_another_only_with_its_own_key(tmp_path: Path) -> None:
    """Router B joins router A (``--connect``) as ``router-b`` with its ``[routers.b]`` key
    (and knows A by the Zenoh id A's key gives it): a station on B finds the robot on A and
    they talk. Router C joins without keys, router D with a key A does not know (its file
    knows A's): a client of either finds no robot, and what they send the robot reaches
    nothing."""
    keys = _keys_file(tmp_path)
    shared = keys.read_text()
    keys.write_text(shared + f'[routers.a]\nkey = "{ROUTER_A}"\n[routers.b]\nkey = "{ROUTER_B}"\n')
    stranger = tmp_path / "stranger.toml"
    write_keys_file(
        stranger, shared + f'[routers.a]\nkey = "{ROUTER_A}"\n[routers.d]\nkey = "{ROUTER_D}"\n'
    )
    a, b, c, d = (free_port() for _ in range(4))
    with _routers(
        ["--listen", f"127.0.0.1:{a}", "--keys", str(keys), "--name", "a"],
        ["--listen", f"127.0.0.1:{b}", "--keys", str(keys), "--name", "b",
         "--connect", f"127.0.0.1:{a}"],
        ["--listen", f"127.0.0.1:{c}", "--connect", f"127.0.0.1:{a}"],
        ["--listen", f"127.0.0.1:{d}", "--keys", str(stranger), "--name", "d",
         "--connect", f"127.0.0.1:{a}"],
    ):  # fmt: skip
        ring = KeyRing.load(keys)

        def station_url(port: int) -> TransportUrl:
            return parse_transport_url(f"zenoh://127.0.0.1:{port}/r7?mode=client")

        async def scenario() -> dict[str, Any]:
            robot_bus = ZenohBus.for_url(station_url(a), listen=True, keys=ring)
            robot_end = robot_bus.robot(RobotInfo("r7", "pioneer3dx"))
            on_b = ZenohBus.for_url(station_url(b), listen=False, key=derive_key(KEY_1))
            on_c = ZenohBus.client([f"tcp/127.0.0.1:{c}"])
            on_d = ZenohBus.for_url(station_url(d), listen=False, key=derive_key(KEY_1))
            station_end = on_b.station("r7")
            try:
                found_b = await wait_until_async(
                    lambda: [r.name for r in on_b.discover(0.5)], 20, "r7 seen through router b"
                )
                station_end.send(b"hello robot")
                item = await robot_end.recv_from(5.0)
                assert item is not None
                stray = [bus.station("r7") for bus in (on_c, on_d)]
                for end in stray:
                    end.send(b"forged")
                found = {
                    "c": [r.name for r in on_c.discover(1.0)],
                    "d": [r.name for r in on_d.discover(1.0)],
                }
                queued = await robot_end.recv_from(1.0)
                for end in stray:
                    end.close()
                return {"b": found_b, "robot": item[0], "found": found, "queued": queued}
            finally:
                station_end.close()
                robot_end.close()
                for bus in (on_b, on_c, on_d, robot_bus):
                    bus.close()

        out = asyncio.run(scenario())
    assert out["b"] == ["r7"]
    assert out["robot"] == b"hello robot"
    assert out["found"] == {"c": [], "d": []}  # neither stranger router joined
    assert out["queued"] is None  # nothing C's or D's clients put reached the robot


def test_a_router_that_connects_with_keys_needs_its_name_in_the_file(tmp_path: Path) -> None:
    keys = _keys_file(tmp_path)
    for extra, expected in (
        ([], "--connect with --keys: name this router (--name NAME"),
        (["--name", "nobody"], "has no [routers.nobody]"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "freelook.cli", "fleet", "router", "--listen",
             f"127.0.0.1:{free_port()}", "--keys", str(keys), "--connect", "127.0.0.1:9",
             *extra],
            capture_output=True,
            text=True,
            timeout=60,
        )  # fmt: skip
        assert done.returncode == 2
        assert expected in done.stderr
        assert "Traceback" not in done.stderr

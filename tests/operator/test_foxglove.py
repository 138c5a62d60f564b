"""The live Foxglove bridge, end to end: a Foxglove WebSocket client written here from the
protocol (subprotocol ``foxglove.sdk.v1``) gets ``/odom`` and ``/scan`` live from ``freelook
sim``'s session with the schemas the MCAP recording holds; its teleop is refused until it
presents the station's token, and then drives the simulated robot."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import shutil
import socket
import ssl
import struct
import subprocess
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import websockets
from mcap.reader import make_reader
from mcap_ros2._dynamic import generate_dynamic

from freelook.config import load_robot
from freelook.launch import SessionOptions, run_session
from freelook.maps import load_world

SUBPROTOCOL = "foxglove.sdk.v1"
SERVER_MESSAGE_DATA = 0x01  # opcode: u32 subscription id, u64 log time, payload
CLIENT_MESSAGE_DATA = 0x01  # opcode: u32 client channel id, payload


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def running_session(
    options: SessionOptions, lines: list[str]
) -> AsyncIterator[dict[str, object]]:
    """``freelook sim``'s session (pioneer3dx in lab) until the block ends; its parts."""
    started = asyncio.Event()
    parts: dict[str, object] = {}
    session = asyncio.create_task(
        run_session(
            load_robot("pioneer3dx"),
            load_world("lab"),
            options,
            announce=lines.append,
            started=started,
            parts=parts,
        )
    )
    try:
        async with asyncio.timeout(30):
            await started.wait()
        yield parts
    finally:
        session.cancel()
        await asyncio.gather(session, return_exceptions=True)


class FoxgloveClient:
    """The client side of the Foxglove WebSocket protocol, as much as this test needs."""

    def __init__(self, ws: websockets.ClientConnection) -> None:
        self.ws = ws
        self.channels: dict[str, dict[str, Any]] = {}  # topic → advertised channel
        self.subscriptions: dict[int, str] = {}  # subscription id → topic
        self.statuses: list[dict[str, Any]] = []
        self.messages: dict[str, list[tuple[int, bytes]]] = {}

    async def pump(self, until: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
        """Read server messages until ``until()`` holds; at ``timeout`` an ``AssertionError``
        naming ``what`` and what the client has seen."""
        try:
            await asyncio.wait_for(self._read_until(until), timeout)
        except TimeoutError:
            seen = {t: len(m) for t, m in self.messages.items()}
            statuses = [s["message"] for s in self.statuses[-3:]]
            raise AssertionError(
                f"waited {timeout:g} s for {what}; channels {sorted(self.channels)}, "
                f"messages {seen}, the last statuses {statuses}"
            ) from None

    async def _read_until(self, until: Callable[[], bool]) -> None:
        while not until():
            frame = await self.ws.recv()
            if isinstance(frame, bytes):
                assert frame[0] == SERVER_MESSAGE_DATA, frame[:1]
                sub, log_time = struct.unpack_from("<IQ", frame, 1)
                topic = self.subscriptions[sub]
                self.messages.setdefault(topic, []).append((log_time, frame[13:]))
                continue
            message = json.loads(frame)
            if message["op"] == "advertise":
                for channel in message["channels"]:
                    self.channels[channel["topic"]] = channel
            elif message["op"] == "status":
                self.statuses.append(message)

    async def subscribe(self, *topics: str) -> None:
        subs = []
        for topic in topics:
            sub = len(self.subscriptions) + 1
            self.subscriptions[sub] = topic
            subs.append({"id": sub, "channelId": self.channels[topic]["id"]})
        await self.ws.send(json.dumps({"op": "subscribe", "subscriptions": subs}))

    async def subscribe_surely(self, *topics: str) -> None:
        """Subscribe, and again to a channel the server did not know yet (the server may
        advertise a channel a moment before it accepts subscriptions to it)."""
        wanted = set(topics)
        for _ in range(5):
            await self.subscribe(*sorted(wanted - self.messages.keys()))
            try:
                await self.pump(
                    lambda: wanted <= self.messages.keys(), f"messages on {wanted}", timeout=2.0
                )
                return
            except AssertionError:
                continue
        raise AssertionError(f"no messages on {wanted - self.messages.keys()}")

    async def advertise(self, channel: int, topic: str, schema_name: str) -> None:
        advert = {"id": channel, "topic": topic, "encoding": "json", "schemaName": schema_name}
        await self.ws.send(json.dumps({"op": "advertise", "channels": [advert]}))

    async def publish(self, channel: int, message: dict[str, Any]) -> None:
        payload = json.dumps(message).encode()
        await self.ws.send(struct.pack("<BI", CLIENT_MESSAGE_DATA, channel) + payload)

    def decode(self, topic: str, payload: bytes) -> Any:
        channel = self.channels[topic]
        assert channel["encoding"] == "cdr"
        assert channel["schemaEncoding"] == "ros2msg"
        name = channel["schemaName"]
        return generate_dynamic(name, channel["schema"])[name](payload)


def _newer_than(fox: FoxgloveClient, topic: str, log_time: int) -> Callable[[], bool]:
    """Until a message on ``topic`` logged after ``log_time`` (ns) came in (frames sent before
    wait in the socket's buffer)."""
    return lambda: bool(fox.messages.get(topic)) and fox.messages[topic][-1][0] > log_time


def _xy(odom: Any) -> tuple[float, float]:
    return (odom.pose.pose.position.x, odom.pose.pose.position.y)


def _mcap_schemas(path: Path) -> dict[str, tuple[str, str]]:
    with path.open("rb") as stream:
        summary = make_reader(stream).get_summary()
    assert summary is not None
    return {
        channel.topic: (
            summary.schemas[channel.schema_id].name,
            summary.schemas[channel.schema_id].data.decode(),
        )
        for channel in summary.channels.values()
    }


def test_a_foxglove_client_watches_live_and_drives_only_with_the_token(tmp_path: Path) -> None:
    recording = tmp_path / "run.mcap"
    options = SessionOptions(
        port=_free_port(),
        record=recording,
        open_browser=False,
        camera=False,
        foxglove=0,
    )
    seen: dict[str, Any] = {}

    async def client(port: int, token: str) -> None:
        uri = f"ws://127.0.0.1:{port}"
        async with websockets.connect(uri, subprotocols=[SUBPROTOCOL]) as ws:  # type: ignore[list-item]
            assert ws.subprotocol == SUBPROTOCOL
            fox = FoxgloveClient(ws)
            await fox.pump(
                lambda: {"/odom", "/scan"} <= fox.channels.keys(), "/odom and /scan advertised"
            )
            await fox.subscribe_surely("/odom", "/scan")
            await fox.pump(
                lambda: all(len(fox.messages.get(t, [])) >= 3 for t in ("/odom", "/scan")),
                "three messages each on /odom and /scan",
            )
            seen["channels"] = {t: fox.channels[t] for t in ("/odom", "/scan")}
            odom = fox.decode("/odom", fox.messages["/odom"][-1][1])
            scan = fox.decode("/scan", fox.messages["/scan"][-1][1])
            seen["start"] = _xy(odom)
            seen["scan"] = (len(scan.ranges), scan.angle_increment)
            # teleop without the token: refused, with the reason
            await fox.advertise(1, "/cmd_vel", "geometry_msgs/Twist")
            await fox.publish(1, {"linear": {"x": 0.4}, "angular": {"z": 0.0}})
            await fox.pump(
                lambda: any("not authenticated" in s["message"] for s in fox.statuses),
                "the status refusing teleop without the token",
            )
            await fox.advertise(2, "/freelook/auth", "std_msgs/String")
            await fox.publish(2, {"token": "guess"})
            await fox.pump(
                lambda: any("wrong token" in s["message"] for s in fox.statuses),
                "the status refusing the wrong token",
            )
            await asyncio.sleep(0.5)  # time for a refused command to move the robot, were it obeyed
            await fox.pump(
                _newer_than(fox, "/odom", time.time_ns()), "an /odom message newer than now"
            )
            seen["refused"] = _xy(fox.decode("/odom", fox.messages["/odom"][-1][1]))
            # with the token: accepted, the robot drives
            await fox.publish(2, {"token": token})
            await fox.pump(
                lambda: any("authenticated:" in s["message"] for s in fox.statuses),
                "the status accepting the token",
            )
            for _ in range(15):  # the command held for 1.5 s, as a joystick repeats it
                await fox.publish(1, {"linear": {"x": 0.4}, "angular": {"z": 0.0}})
                await asyncio.sleep(0.1)
            await fox.pump(
                _newer_than(fox, "/odom", time.time_ns()), "an /odom message newer than now"
            )
            seen["driven"] = _xy(fox.decode("/odom", fox.messages["/odom"][-1][1]))
            seen["statuses"] = [s["message"] for s in fox.statuses]

    async def main() -> None:
        async with running_session(options, []) as parts:
            bridge = parts["foxglove"]
            await client(bridge.port, str(parts["token"]))  # type: ignore[attr-defined]

    asyncio.run(main())
    # the same schema (name and full text) live as in the recording
    recorded = _mcap_schemas(recording)
    for topic, channel in seen["channels"].items():
        assert (channel["schemaName"], channel["schema"]) == recorded[topic], topic
    assert seen["channels"]["/odom"]["schemaName"] == "nav_msgs/msg/Odometry"
    assert seen["channels"]["/scan"]["schemaName"] == "sensor_msgs/msg/LaserScan"
    n, increment = seen["scan"]
    assert n > 10
    assert math.isfinite(increment)
    # refused teleop did not move it; accepted teleop did (0.4 m/s for about 1.5 s)
    assert math.dist(seen["refused"], seen["start"]) < 0.01
    assert math.dist(seen["driven"], seen["refused"]) > 0.1, seen
    assert any("not authenticated" in s for s in seen["statuses"])


@pytest.mark.parametrize("port", [0])
def test_the_bridge_port_is_announced(port: int) -> None:
    """``--foxglove 0`` takes a free port and says which."""
    lines: list[str] = []
    options = SessionOptions(port=_free_port(), open_browser=False, camera=False, foxglove=port)

    async def main() -> None:
        async with running_session(options, lines) as parts:
            bridge_port = parts["foxglove"].port  # type: ignore[attr-defined]
            assert any(f"ws://127.0.0.1:{bridge_port}" in line for line in lines), lines

    asyncio.run(main())


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
def test_with_the_cockpits_tls_files_the_bridge_speaks_only_wss(tmp_path: Path) -> None:
    """``--certfile/--keyfile`` cover the bridge too: a client trusting the certificate gets
    the channels over ``wss://``; a plain ``ws://`` client gets no channel."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1"),
            *("-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    options = SessionOptions(
        port=_free_port(),
        open_browser=False,
        camera=False,
        foxglove=0,
        certfile=cert,
        keyfile=key,
    )
    lines: list[str] = []
    seen: dict[str, Any] = {}

    async def clients(port: int) -> None:
        context = ssl.create_default_context(cafile=str(cert))
        uri = f"wss://127.0.0.1:{port}"
        async with websockets.connect(uri, ssl=context, subprotocols=[SUBPROTOCOL]) as ws:  # type: ignore[list-item]
            fox = FoxgloveClient(ws)
            await fox.pump(lambda: "/odom" in fox.channels, "/odom advertised over wss")
            seen["wss"] = fox.channels["/odom"]["schemaName"]
        try:
            async with asyncio.timeout(5):
                async with websockets.connect(
                    f"ws://127.0.0.1:{port}",
                    subprotocols=[SUBPROTOCOL],  # type: ignore[list-item]
                ) as plain:
                    seen["plain"] = await plain.recv()
        except (OSError, TimeoutError, websockets.exceptions.WebSocketException) as err:
            seen["plain_error"] = type(err).__name__

    async def main() -> None:
        async with running_session(options, lines) as parts:
            port = parts["foxglove"].port  # type: ignore[attr-defined]
            assert any(f"wss://127.0.0.1:{port}" in line for line in lines), lines
            await clients(port)

    asyncio.run(main())
    assert seen["wss"] == "nav_msgs/msg/Odometry"
    assert "plain" not in seen, seen  # nothing reached a client without TLS
    assert "plain_error" in seen, seen

"""Process behaviour: clean exit on SIGINT with the port freed; the announced URL carries the
launch's token; a foreign page cannot drive the real session; TLS when asked for."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import ssl
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import websockets
from websockets.exceptions import ConnectionClosed

from freelook.web import REFUSED_CLOSE_CODE


def test_sim_exits_cleanly_on_sigint(tmp_path: Path) -> None:
    from conftest import start_sim  # type: ignore[import-not-found]

    sim = start_sim(tmp_path, record=True)
    port = sim.port
    code = sim.stop()
    assert code == 0
    assert sim.process.stdout is not None
    tail = "".join(sim.lines)  # all it said, read to the end of its output by stop()
    sim.process.stdout.close()
    assert "freelook: stopped" in tail
    assert "recorded" in tail
    with socket.socket() as s:  # the web port is free again
        s.bind(("127.0.0.1", port))
    assert sim.record is not None
    assert sim.record.stat().st_size > 1000


def _pose(message: dict[str, Any]) -> tuple[float, float, float]:
    pose = message["pose"]
    return pose["x"], pose["y"], pose["theta"]


async def _drive(ws: Any, axes: dict[str, Any]) -> int:
    """Try to drive through ``ws`` for a second: its close code, 0 if it stayed open."""
    try:
        await ws.send(json.dumps({"type": "mode", "mode": "tank"}))
        for _ in range(20):
            await ws.send(json.dumps(axes))
            await asyncio.sleep(0.05)
        await asyncio.wait_for(ws.recv(), 2)
    except ConnectionClosed as closed:
        return int(closed.rcvd.code) if closed.rcvd is not None else -1
    return 0


async def _attack_and_watch(port: int, token: str) -> tuple[list[int], list[tuple[float, ...]]]:
    """A page on another origin (with and without the token) tries to drive; the real cockpit
    socket watches the pose meanwhile."""
    codes: list[int] = []
    poses: list[tuple[float, ...]] = []
    axes = {"type": "axes", "mode": "tank", "forward": 1.0, "left": 0.0, "turn": 1.0, "pan": 0.0}
    url = f"ws://127.0.0.1:{port}/ws?token={token}"
    async with websockets.connect(url, max_size=None) as watcher:
        for attempt in (
            f"ws://127.0.0.1:{port}/ws",  # a page on another origin has no token...
            url,  # ...and one that stole it is still on another origin
        ):
            headers = {"Origin": "http://evil.example"}
            async with websockets.connect(attempt, additional_headers=headers) as evil:
                codes.append(await _drive(evil, axes))
        loop = asyncio.get_running_loop()
        until = loop.time() + 1.5
        while loop.time() < until:  # the pose watched for 1.5 s after the attack
            frame = await watcher.recv()
            if isinstance(frame, bytes) and frame[:1] == b"\x01":
                message = json.loads(frame[1:])
                if message.get("type") == "state" and message.get("pose"):
                    poses.append(_pose(message))
    return codes, poses


def test_a_foreign_page_cannot_drive_the_session(sim: Any) -> None:
    assert "?token=" in sim.url
    assert len(sim.token) >= 32
    codes, poses = asyncio.run(_attack_and_watch(sim.port, sim.token))
    assert codes == [REFUSED_CLOSE_CODE, REFUSED_CLOSE_CODE]
    assert len(poses) > 5
    # at rest, localization trims the pose by up to a centimetre (the simulated robot's laser
    # sits a little off its described mount, and some returns are outliers); a second of the
    # attack's drive (full speed, full turn) would have moved it by decimetres
    assert max(abs(a - b) for p in poses for a, b in zip(p, poses[0], strict=True)) < 0.03
    status = urllib.request.urlopen(sim.url, timeout=5).status
    assert status == 200
    with pytest.raises(urllib.error.HTTPError, match="403"):
        urllib.request.urlopen(sim.url.split("?")[0], timeout=5)


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
def test_sim_serves_the_cockpit_over_tls(tmp_path: Path) -> None:
    from conftest import start_sim

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
    sim = start_sim(tmp_path, "--certfile", str(cert), "--keyfile", str(key))
    try:
        assert sim.url.startswith(f"https://127.0.0.1:{sim.port}/?token=")
        context = ssl.create_default_context(cafile=str(cert))
        with urllib.request.urlopen(sim.url, timeout=5, context=context) as response:
            assert response.status == 200

        async def hello() -> dict[str, Any]:
            url = f"wss://127.0.0.1:{sim.port}/ws?token={sim.token}"
            origin = {"Origin": f"https://127.0.0.1:{sim.port}"}
            async with websockets.connect(
                url, ssl=context, additional_headers=origin, max_size=None
            ) as ws:
                frame = await ws.recv()
                assert isinstance(frame, bytes)
                return json.loads(frame[1:])  # type: ignore[no-any-return]

        assert asyncio.run(hello())["type"] == "hello"
        assert not any("WITHOUT TLS" in line for line in sim.lines)
    finally:
        sim.stop()
        if sim.process.stdout is not None:
            sim.process.stdout.close()


def test_sim_beyond_loopback_without_tls_warns(tmp_path: Path) -> None:
    from conftest import start_sim

    sim = start_sim(tmp_path, "--host", "0.0.0.0")
    try:
        assert any("WITHOUT TLS" in line for line in sim.lines)
    finally:
        sim.stop()
        if sim.process.stdout is not None:
            sim.process.stdout.close()

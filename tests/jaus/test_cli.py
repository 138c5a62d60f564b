"""``freelook jaus`` as a user runs it: two real processes (``freelook robot`` and ``freelook
jaus``) on loopback, asked for identification and control over JUDP; and its refusals."""

from __future__ import annotations

import os
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from cli_processes import free_udp_port
from freelook.cli import app
from keys_for_tests import KEY_A, KEY_B
from waiting import wait_until

FREELOOK = [sys.executable, "-m", "freelook.cli"]


def _judp(code: int, body: bytes) -> bytes:
    """A message from component 9.1.1 to the gateway's 1.1.1 (AS5669A transport header)."""
    payload = struct.pack("<H", code) + body
    header = struct.pack("<BHBBBHBBH", 0, 14 + len(payload), 1, 1, 1, 1, 1, 1, 9)
    return bytes([2]) + header + payload + struct.pack("<H", 0)


def _ask(sock: socket.socket, port: int, message: bytes, code: int, deadline: float) -> bytes:
    """Send until a reply with ``code`` comes (the processes take a moment to start)."""
    heard: list[int] = []  # the codes of the replies that came

    def reply() -> tuple[bytes] | None:
        sock.sendto(message, ("127.0.0.1", port))
        try:
            data = sock.recv(2048)
        except TimeoutError:
            return None
        heard.append(struct.unpack_from("<H", data, 13)[0])
        return (data[15:-2],) if heard[-1] == code else None

    (body,) = wait_until(
        reply,
        deadline - time.monotonic(),
        f"a reply {code:#06x}",
        every=0,  # each try waits for a reply up to the socket's timeout
        show=lambda: f"replies {[f'{c:#06x}' for c in heard]}",
    )
    return body


def test_freelook_jaus_answers_and_grants_control(tmp_path: Path) -> None:
    robot_port, jaus_port = free_udp_port(), free_udp_port()
    env = {**os.environ, "FREELOOK_LINK_KEY": KEY_B}
    robot = subprocess.Popen(
        [*FREELOOK, "robot", "--world", "square", "--listen", f"udp://127.0.0.1:{robot_port}"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    gateway = subprocess.Popen(
        [
            *FREELOOK,
            "jaus",
            "--robot",
            f"udp://127.0.0.1:{robot_port}",
            "--port",
            str(jaus_port),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.bind(("127.0.0.1", 0))
            sock.settimeout(0.5)
            deadline = time.monotonic() + 60
            body = _ask(sock, jaus_port, _judp(0x2B00, bytes([4])), 0x4B00, deadline)
            assert struct.unpack_from("<BH", body) == (4, 60001)  # component identification
            assert body[4:].decode() == "pioneer3dx"
            confirm = _ask(sock, jaus_port, _judp(0x000D, bytes([1])), 0x000F, deadline)
            assert confirm == bytes([0])  # CONTROL_ACCEPTED: the robot granted the gateway
    finally:
        for process in (gateway, robot):
            process.send_signal(signal.SIGTERM)
        out, err = gateway.communicate(timeout=20)
        robot.communicate(timeout=20)
    assert f"on udp://127.0.0.1:{jaus_port}" in out, err


def test_the_gateway_needs_a_key_and_sane_ids() -> None:
    runner = CliRunner(env={"FREELOOK_LINK_KEY": None})  # None: unset while invoked
    no_key = runner.invoke(app, ["jaus", "--robot", "udp://127.0.0.1:9"])
    assert no_key.exit_code == 2
    assert "needs the link key" in no_key.output
    bad_id = runner.invoke(
        app, ["jaus", "--robot", "udp://127.0.0.1:9", "--key", KEY_A, "--node", "255"]
    )
    assert bad_id.exit_code == 2
    assert "JAUS ids" in bad_id.output

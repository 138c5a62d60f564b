"""The probes of the attack campaign (``python -m tools.attack``) that re-run this week's attacks
on the defences: each finds no crash and no effect against the real code, and counts the effect
when the defence is away (monkeypatched out in-process, or a permissive server in the cockpit's
place)."""

from __future__ import annotations

import asyncio
import contextlib
import random
import subprocess
import sys

import pytest

from freelook.config import load_robot
from tools.attack._cockpit import (
    Server,
    _foreign_page,
    _hosts,
    _idle,
    attack_cockpit_server,
)
from tools.attack._judp import Turning, attack_judp, judge_jump, judge_stop
from tools.attack._keys import WEAK_KEYS, attack_keys
from tools.attack._memory import (
    GROWTH_BOUND,
    attack_memory,
    growth_per_minute,
    judge,
    sample,
)
from tools.attack._ros2 import CmdVel, attack_ros2, forged_jpegs
from tools.attack._video import STALL, attack_video, judge_gap, longest_gap


def test_the_key_probe_refuses_every_weak_key_and_readable_keys_file() -> None:
    tally = attack_keys(40, seed=3)
    assert tally.crashes == 0, tally.notes
    assert tally.unauthorised == 0, tally.notes
    assert tally.kinds["one of the six weak keys"] == len(WEAK_KEYS) == 6
    assert tally.kinds["weak variation"] == 40
    assert tally.kinds["keys file others may read or write"] == 4
    assert "all 4 strong keys and the private keys file accepted" in tally.notes


def test_the_key_probe_counts_weak_keys_and_open_files_let_through(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("freelook.link._auth.MIN_KEY_BITS", 0)
    monkeypatch.setattr("freelook.link._keys.check_private", lambda path: None)
    tally = attack_keys(40, seed=3)
    assert tally.crashes == 0, tally.notes
    # each weak key through strong_key and the six in a keys file, the four open files
    assert tally.unauthorised == 6 + 40 + 6 + 4, tally.notes


def test_the_key_probe_counts_a_check_that_refuses_everything(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("freelook.link._auth.MIN_KEY_BITS", 1000)
    tally = attack_keys(20, seed=3)
    assert tally.unauthorised == 1, tally.notes
    assert "unauthorised: 5 strong keys refused: the check refuses every key" in tally.notes


@pytest.mark.slow
def test_the_cockpit_server_probe_finds_the_server_bounded() -> None:
    tally = attack_cockpit_server(4, seed=2)
    assert tally.crashes == 0, tally.notes
    assert tally.unauthorised == 0, tally.notes
    assert tally.kinds["foreign Host, the socket"] == 12
    assert tally.kinds["wrong token, foreign Origin"] == 30
    assert "4 of 4 idle or trickling connections closed by the server" in "\n".join(tally.notes)
    assert "message over the frame limit (263,168 characters): closed" in tally.notes


class _Permissive(asyncio.Protocol):
    """A server with none of the defences: every request head is served (an upgrade with
    101, a page with 200 and no security headers); idle connections are held for ever."""

    def __init__(self) -> None:
        self.buffer = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if b"\r\n\r\n" in self.buffer:
            status = b"101 Switching Protocols" if b"Upgrade:" in self.buffer else b"200 OK"
            self.transport.write(b"HTTP/1.1 " + status + b"\r\n\r\n")
            self.transport.close()


def test_the_cockpit_server_probe_counts_what_a_permissive_server_lets_through() -> None:
    from tools.attack import Tally

    async def attack() -> Tally:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(_Permissive, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        tally = Tally("permissive")
        try:
            await _hosts(Server(port, "token"), tally)
            await _foreign_page(Server(port, "token"), random.Random(1), 4, tally)
            await _idle(port, 4, 1.0, tally)
        finally:
            server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 1.0)
        return tally

    tally = asyncio.run(attack())
    notes = "\n".join(tally.notes)
    assert tally.crashes == 0, notes
    assert "foreign Host, the page 'evil.example' with the token was served (200)" in notes
    assert "foreign Host, the socket 'evil.example' with the token was served (101)" in notes
    assert "the page without content-security-policy" in notes
    assert "unauthorised: 4 of 4 idle connections still open after 1 s" in notes
    assert tally.unauthorised == 12 + 12 + 1 + 1, notes


@pytest.mark.slow
def test_the_memory_probe_opens_sessions_under_new_ids_and_measures_the_robot() -> None:
    tally = attack_memory(4.0, seed=4)
    notes = "\n".join(tally.notes)
    assert tally.crashes == 0, notes
    assert tally.unauthorised == 0, notes
    assert tally.kinds["session under a new station id"] >= 20, notes
    assert "resident memory" in notes
    assert "fitted growth" in notes


def test_the_memory_probe_counts_a_process_whose_memory_grows() -> None:
    from tools.attack import Tally

    # a process that keeps what it is given, as a robot keeping every station would
    grower = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time\nkept = []\nwhile True:\n"
            "    kept.append(bytearray(1 << 20)); time.sleep(0.02)",
        ]
    )
    try:
        samples = asyncio.run(sample(grower.pid, 2.0, every=0.1))
    finally:
        grower.kill()
        grower.wait()
    tally = Tally("grower")
    growth = judge(samples, tally)
    assert growth > GROWTH_BOUND, samples
    assert tally.unauthorised == 1, tally.notes
    assert growth_per_minute([(0.0, 0), (30.0, 1 << 20)]) == pytest.approx(2 << 20)


@pytest.mark.slow
def test_the_judp_probe_finds_every_forgery_held_stopped_until_the_release() -> None:
    tally = attack_judp(seed=6, pose_reports=100)
    notes = "\n".join(tally.notes)
    assert tally.crashes == 0, notes
    assert tally.unauthorised == 0, notes
    for kind in ("RejectControl", "ReportControl naming another", "ReportStatus EMERGENCY"):
        assert tally.kinds[f"forged {kind}"] == 1
        assert f"forged {kind}: the robot turned again after the release" in tally.notes
    assert tally.kinds["forged ReportLocalPose"] == 100


def test_the_judp_probe_counts_a_robot_left_turning_and_a_pose_believed() -> None:
    from tools.attack import Tally

    tally = Tally("judged")
    # a client gone silent in front of a robot with no timeout: it turns on
    silent = Turning([(0.01 * i, 0.5, 0.005 * i) for i in range(300)])
    judge_stop("forged RejectControl", silent, 0.52, 1.02, tally)
    # a client that stopped and then drove again before the release
    resumed = Turning(
        [
            (0.01 * i, 0.0 if 10 < i < 150 else 0.5, 0.0 if i < 150 else 0.005 * (i - 150))
            for i in range(300)
        ]
    )
    judge_stop("forged ReportStatus", resumed, 0.52, 1.02, tally)
    held = Turning([(0.01 * i, 0.5 if i < 3 else 0.0, 0.0) for i in range(300)])
    judge_stop("forged ReportControl", held, 0.52, 1.02, tally)
    judge_jump([(0.0, 0.0, 0.0), (0.05, 50.0, 0.0), (0.1, 50.0, 0.0)], 1.2, tally)
    assert tally.unauthorised == 3, tally.notes
    assert tally.notes[0].startswith("unauthorised: forged RejectControl: the robot turned")
    assert "forged pose reports: the odometry jumped" in tally.notes[-2]


@pytest.mark.slow
def test_the_video_probe_measures_the_station_talking_to_its_robot() -> None:
    tally = attack_video(1.5, seed=7)
    notes = "\n".join(tally.notes)
    assert tally.crashes == 0, notes
    assert tally.unauthorised == 0, notes
    assert tally.kinds["honest 64 × 64 keyframes, 300/s"] >= 300, notes
    assert sum(1 for n in tally.notes if "packets/s to the robot" in n) == 3, notes


def test_the_video_probe_counts_a_station_that_fell_silent() -> None:
    from tools.attack import Tally

    tally = Tally("judged")
    # what a station decoding on its loop sent: a packet now and then, 0.8 s apart at worst
    silent = longest_gap([0.1, 0.9, 1.0, 1.8, 2.3], 0.0, 3.0)
    assert silent == pytest.approx(0.8)
    judge_gap("300 keyframes/s", silent, 1.7, 27.0, tally)
    steady = longest_gap([0.04 * i for i in range(1, 75)], 0.0, 3.0)
    judge_gap("huge header", steady, 25.0, 27.0, tally)
    assert steady < STALL
    assert load_robot("pioneer3dx").safety.watchdog_timeout == STALL  # the robot's own
    assert tally.unauthorised == 1, tally.notes
    assert tally.notes[0] == (
        "unauthorised: 300 keyframes/s: the station left the robot 0.80 s without a packet "
        "(its watchdog stops it at 0.5 s)"
    )


@pytest.mark.slow
def test_the_ros2_probe_finds_each_hostile_node_refused_and_the_fault_named() -> None:
    tally = attack_ros2(1.5, seed=8)
    notes = "\n".join(tally.notes)
    assert tally.crashes == 0, notes
    assert tally.unauthorised == 0, notes
    assert tally.kinds["JPEG header claiming 20000 × 20000"] > 0, notes
    assert tally.kinds["all-inf scans"] > 0, notes
    assert tally.kinds["a second cmd_vel publisher"] > 0, notes
    assert "the fault named" in tally.notes[-1], notes


def test_the_ros2_probe_sees_a_stall_and_motion_after_a_stop() -> None:
    heard = CmdVel([(0.02 * i, 0.0, 0.4) for i in range(50)] + [(2.0, 0.0, 0.0), (2.5, 0.0, 0.4)])
    assert heard.longest_gap(0.0, 3.0) == pytest.approx(1.02)
    assert heard.moving_after(1.99) == [2.5]
    assert CmdVel().longest_gap(0.0, 3.0) == 3.0  # nothing heard: the whole window
    kinds = [kind for kind, _ in forged_jpegs(random.Random(1))]
    assert kinds == [
        "JPEG cut short",
        "JPEG header claiming 20000 × 20000",
        "bytes that are no image",
    ]

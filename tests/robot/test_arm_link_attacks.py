"""Attacks on the arm through the link (sans-I/O sessions, the robot program on the simulated
TAROS in lock-step): replayed, forged and foreign arm commands are refused by the session and
counted; a well-formed command beyond the URDF's limits is refused by the robot. None of them
moves a joint."""

from __future__ import annotations

import hashlib
import struct

import numpy as np

from freelook.config import load_robot
from freelook.hardware.sim import SimulatedRobot
from freelook.link import (
    Accepted,
    ArmVelocityCommand,
    ControlRequest,
    LinkSession,
    NativeCodec,
    Refused,
    Reply,
    SessionOpened,
    derive_key,
)
from freelook.maps import load_world

KEY = derive_key("arm link passphrase")
ROBOT = 100
ELBOW_UP = ArmVelocityCommand((0.0, 0.0, 1.0, 0.0, 0.0))


class Setup:
    def __init__(self) -> None:
        self.robot = SimulatedRobot(
            load_robot("taros"), load_world("eod"), seed=5, use_localization=False
        )
        self.rb = LinkSession(
            NativeCodec(KEY, sender=ROBOT), spacing=0.05, role="robot", nonce=b"robot start"
        )
        self.op = LinkSession(
            NativeCodec(KEY, sender=1), spacing=0.05, role="operator", nonce=b"op"
        )
        self.refused: list[str] = []

    def deliver(self, packets: list[bytes]) -> None:
        """Packets to the robot's session; what it accepts goes to the robot program."""
        for packet in packets:
            for event in self.rb.receive(packet, self.robot.now()):
                if isinstance(event, Accepted):
                    station = event.decoded.sender
                    self.robot.core.handle(
                        event.message, self.robot.now(), station, event.permissions
                    )
                elif isinstance(event, Refused):
                    self.refused.append(event.reason)

    def open(self) -> None:
        now = self.robot.now()
        (reply,) = self.rb.receive(self.op.poll(now)[0], now)
        assert isinstance(reply, Reply)
        events = [e for p in reply.packets for e in self.op.receive(p, now)]
        assert isinstance(events[0], SessionOpened)
        confirm = events[1]
        assert isinstance(confirm, Reply)
        self.deliver(list(confirm.packets))

    def joints(self) -> np.ndarray:
        assert self.robot.hardware.arm is not None
        return np.array(self.robot.hardware.arm.state().positions)


def _retag(body: bytes, key: bytes) -> bytes:
    return body + hashlib.blake2s(body, key=key, digest_size=16).digest()


def test_replayed_forged_and_foreign_arm_commands_move_nothing() -> None:
    s = Setup()
    s.open()
    s.deliver(s.op.send(ControlRequest(1, 10), s.robot.now()))
    captured: list[bytes] = []
    start = s.joints()
    for _ in range(10):  # the operator jogs the elbow up for 0.4 s
        packets = s.op.send(ELBOW_UP, s.robot.now())
        captured += packets
        s.deliver(packets)
        s.robot.run_for(0.04)
    assert s.joints()[2] > start[2] + 0.2  # the genuine commands moved it
    s.robot.run_for(1.0)  # the operator stops; the watchdog stops the arm
    rest = s.joints()
    assert s.refused == []

    s.deliver(captured)  # an eavesdropper replays what it captured
    s.robot.run_for(0.5)
    assert s.refused == ["replay"] * 10
    # it forges: the newest packet with the elbow's velocity changed, tag left as it was
    newest = captured[-1]
    forged = newest.replace(struct.pack("<f", 1.0), struct.pack("<f", -1.0))
    assert forged != newest
    s.deliver([forged])
    # an outsider with its own key claims station 1 (a station-key packet that is not a
    # handshake: refused before any tag is computed)
    outsider = NativeCodec(derive_key("another passphrase"), sender=1)
    s.deliver([outsider.encode(ELBOW_UP, s.robot.now())])
    # and the newest packet again, tagged with a key guessed as zeros
    s.deliver([_retag(newest[:-16], b"\x00" * 32)])
    s.robot.run_for(0.5)
    assert s.refused[10:] == ["auth", "session", "auth"]
    assert s.rb.stats.refused == {"replay": 10, "auth": 2, "session": 1}
    assert np.array_equal(s.joints(), rest)

    # the station itself asks for 3 rad/s of the elbow (within the link's range, beyond the URDF)
    for _ in range(10):
        s.deliver(s.op.send(ArmVelocityCommand((0.0, 0.0, 3.0, 0.0, 0.0)), s.robot.now()))
        s.robot.run_for(0.04)
    assert np.array_equal(s.joints(), rest)
    assert len(s.robot.core.log.rejections) == 10
    assert "beyond its limit" in s.robot.core.log.rejections[-1]

"""The M2P2's arm without position sensing (:class:`JausArm` in timed chunks) on an injected
clock, beside a joint integrated from the efforts it gives: whole chunks at full effort, their
length, the reckoned position against the integrated one, a stop that cuts a chunk, and a
stalled caller that owes no more than its cap. Over loopback UDP the same arm is in
``test_jaus_robot.py``."""

from __future__ import annotations

import math

import pytest

from freelook.arm import load_arm
from freelook.config import load_robot
from freelook.hardware.judp import ClientOptions, JausArm, JausClient

CONFIG = load_robot("m2p2")
ARM, JAUS = CONFIG.arm, CONFIG.jaus
assert ARM is not None
assert JAUS is not None
SPEED = math.radians(JAUS.arm_joint_speed_deg)  # rad/s at 100 % effort
CHUNK = JAUS.arm_chunk  # s
STEP = SPEED * CHUNK  # one chunk's travel
CALL = 0.02  # s between the program's calls, its control period


class _Recording(JausClient):
    """The client, keeping every effort the arm gives it with its time."""

    def __init__(self) -> None:
        super().__init__(ClientOptions())
        self.given: list[tuple[float, tuple[float, ...]]] = []

    def command_arm(self, efforts: tuple[float, ...], now: float) -> None:
        self.given.append((now, efforts))
        super().command_arm(efforts, now)


class _Rig:
    """The arm, its client, the clock, and the shoulder as the efforts move it (each held from
    one call to the next)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.client = _Recording()
        assert ARM is not None
        model = load_arm(ARM.urdf, ARM.srdf)
        self.arm = JausArm(
            self.client,
            model,
            speed=SPEED,
            chunk=CHUNK,
            sensing=False,
            notify=lambda: None,
            clock=lambda: self.now,
        )
        self.start = self.arm.state().positions[0]
        self.shoulder = self.start

    def call(self, velocities: list[float], dt: float = CALL) -> None:
        self.arm.command_velocities(velocities)
        effort = self.client.given[-1][1][0]
        self.shoulder += effort / 100.0 * SPEED * dt
        self.now += dt

    def jog(self, velocities: list[float], seconds: float) -> None:
        for _ in range(round(seconds / CALL)):
            self.call(velocities)

    def shoulder_efforts(self) -> list[float]:
        return [efforts[0] for _, efforts in self.client.given]


def _chunks(efforts: list[float], times: list[float]) -> list[float]:
    """Each run of full effort's length, from the call that started it to the one that ended
    it."""
    lengths, began = [], None
    for effort, t in zip(efforts, times, strict=True):
        if effort and began is None:
            began = t
        elif not effort and began is not None:
            lengths.append(t - began)
            began = None
    return lengths


def test_a_slow_jog_moves_in_whole_chunks_at_full_effort_and_is_reckoned_to_a_call() -> None:
    rig = _Rig()
    rig.jog([0.1, 0.0, 0.0], 1.0)  # 0.1 rad owed over a second
    rig.jog([0.0, 0.0, 0.0], 0.4)  # then nothing: the running chunk ends by itself or is cut
    efforts = rig.shoulder_efforts()
    assert set(efforts) == {0.0, 100.0}
    assert all(e[1] == 0.0 for _, e in rig.client.given)  # the elbow was not asked
    lengths = _chunks(efforts, [t for t, _ in rig.client.given])
    # a chunk starts once half a chunk is owed: 0.1 rad owed gives two
    assert len(lengths) == round(0.1 / STEP)
    assert all(CHUNK <= length <= CHUNK + CALL + 1e-9 for length in lengths), lengths
    # the reckoned shoulder is the integrated one, to what a call's lateness adds per chunk
    reckoned = rig.arm.state().positions[0]
    assert reckoned == pytest.approx(rig.shoulder, abs=len(lengths) * SPEED * CALL + 1e-9)
    assert reckoned - rig.start == pytest.approx(len(lengths) * STEP)


def test_a_stop_cuts_the_running_chunk_at_once_and_reckons_it_by_the_time_it_ran() -> None:
    rig = _Rig()
    rig.jog([1.0, 0.0, 0.0], 0.1)  # a chunk starts once half a chunk is owed (0.04 s in)
    assert rig.shoulder_efforts()[-1] == 100.0
    rig.call([0.0, 0.0, 0.0])
    assert rig.shoulder_efforts()[-1] == 0.0  # cut at the stop, not at the chunk's end
    reckoned = rig.arm.state().positions[0]
    assert reckoned == pytest.approx(rig.shoulder, abs=1e-9)
    assert 0.0 < reckoned - rig.start < STEP


def test_a_caller_that_stalls_owes_no_more_than_its_cap() -> None:
    rig = _Rig()
    rig.call([0.01, 0.0, 0.0])
    rig.call([0.01, 0.0, 0.0], dt=5.0)  # 5 s without a call, at 0.01 rad/s: 0.05 rad if owed
    rig.jog([0.0, 0.0, 0.0], 0.4)
    # the stall owes at most 0.1 s of motion: less than half a chunk, so nothing moves
    assert set(rig.shoulder_efforts()) == {0.0}
    assert rig.arm.state().positions[0] == rig.start


def test_a_reverse_jog_runs_its_chunks_at_minus_full_effort() -> None:
    rig = _Rig()
    rig.jog([-0.2, 0.0, 0.0], 0.5)
    rig.jog([0.0, 0.0, 0.0], 0.4)
    efforts = rig.shoulder_efforts()
    assert set(efforts) == {0.0, -100.0}
    assert rig.arm.state().positions[0] < rig.start
    assert rig.arm.state().positions[0] == pytest.approx(rig.shoulder, abs=3 * SPEED * CALL)

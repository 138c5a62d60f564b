"""The robot program over a hand-made HAL double: no simulator anywhere.

What the program knows, it knows through the hardware interfaces; what a robot lacks, it does
without and says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pytest

from freelook.config import load_robot
from freelook.hal import DriveCommand, DriveKind, EncoderSample, OdometrySample, RobotHardware
from freelook.link import FreeLookCommand, TankCommand, VelocityCommand
from freelook.robot import RobotProgram
from freelook.runtime import LockstepRuntime
from freelook.types import Mode

CONFIG = load_robot("pioneer3dx")


@dataclass
class KinematicBase:
    """Wheels that do exactly what they are told, counted by ideal encoders."""

    kind: DriveKind = "differential"
    wheels: tuple[float, float] = (0.0, 0.0)
    twists: list[tuple[float, float, float]] = field(default_factory=list)
    left: float = 0.0  # m travelled
    right: float = 0.0
    stamp: float = 0.0

    def command(self, command: DriveCommand) -> None:
        """A holonomic base reads the twist, the others the track speeds."""
        if self.kind == "holonomic":
            self.twists.append((command.v, command.vy, command.omega))
        else:
            self.wheels = (command.v_left, command.v_right)

    def advance(self, now: float) -> None:
        dt = now - self.stamp
        self.left += self.wheels[0] * dt
        self.right += self.wheels[1] * dt
        self.stamp = now

    @property
    def counts_per_rev(self) -> int:
        return CONFIG.drive.encoder_counts_per_rev

    @property
    def wheel_diameter(self) -> float:
        return CONFIG.drive.wheel_diameter

    def latest(self) -> EncoderSample:
        per_metre = self.counts_per_rev / (math.pi * self.wheel_diameter)
        return EncoderSample(
            self.stamp, round(self.left * per_metre), round(self.right * per_metre)
        )


def program_on(base: KinematicBase, **devices: object) -> tuple[RobotProgram, LockstepRuntime]:
    runtime = LockstepRuntime()
    runtime.add_periodic("base", 0.005, base.advance)
    hardware = RobotHardware(drive=base, encoders=base, **devices)  # type: ignore[arg-type]
    return RobotProgram(CONFIG, hardware, runtime), runtime


def test_drives_and_dead_reckons_through_the_hal_alone() -> None:
    base = KinematicBase()
    program, runtime = program_on(base)
    for _ in range(40):  # 2 s at the operator's spacing
        program.send(VelocityCommand(0.3, 0.0))
        runtime.run_for(0.05)
    assert base.wheels == pytest.approx((0.3, 0.3))
    x, y, theta = program.core.estimator.pose
    assert x == pytest.approx(base.left, abs=0.01)
    assert abs(y) < 1e-6
    assert abs(theta) < 1e-6


def test_a_robot_without_a_pan_unit_refuses_free_look_and_says_why() -> None:
    base = KinematicBase()
    program, runtime = program_on(base)
    program.send(FreeLookCommand(0.3, 0.0, 0.0))
    runtime.run_for(0.1)
    assert program.core.modes.mode != Mode.FREE_LOOK
    assert base.wheels == (0.0, 0.0)
    assert "cannot pan" in program.core.log.rejections[-1]
    lines = program.core.unavailable()
    assert any(line.startswith("Free Look refused") for line in lines)
    assert any("no localization (no laser)" in line for line in lines)
    assert any("no range sensor" in line for line in lines)
    assert any("no gyro" in line for line in lines)
    # and it still drives in Tank Control
    program.send(TankCommand(0.2, 0.0))
    runtime.run_for(0.05)
    assert base.wheels == pytest.approx((0.2, 0.2))


def test_a_holonomic_base_is_driven_by_twist() -> None:
    base = KinematicBase(kind="holonomic")
    program, runtime = program_on(base)
    program.send(VelocityCommand(0.25, 0.5))
    runtime.run_for(0.05)
    assert base.twists[-1] == pytest.approx((0.25, 0.0, 0.5))
    assert base.wheels == (0.0, 0.0)  # never silently driven as a differential base


@dataclass
class OwnOdometry:
    """A base that integrates its own odometry and reports it (as a Pioneer's SIP)."""

    sample: OdometrySample | None = None

    def latest(self) -> OdometrySample | None:
        return self.sample


def test_a_base_with_its_own_odometry_needs_no_encoders() -> None:
    base = KinematicBase()
    odometer = OwnOdometry()
    runtime = LockstepRuntime()

    def report(now: float) -> None:  # the base drives 0.2 m/s in a 1 m radius circle
        angle = 0.2 * now
        odometer.sample = OdometrySample(
            now, math.sin(angle), 1.0 - math.cos(angle), angle, 0.2 * 0.8, 0.2 * 1.2
        )

    runtime.add_periodic("odometer", 0.1, report)
    hardware = RobotHardware(drive=base, odometer=odometer)
    program = RobotProgram(CONFIG, hardware, runtime)
    runtime.run_for(5.0)
    x, y, theta = program.core.estimator.pose
    assert (x, y, theta) == pytest.approx((math.sin(1.0), 1 - math.cos(1.0), 1.0), abs=0.03)

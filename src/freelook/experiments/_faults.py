"""Faults injected on purpose into an experiment's robots, to show that each row's verdict
fails when the system it judges is broken: a robot that never moves must not pass for one that
never drifts, nor an arm its guard holds still for one that never collides.

The fault is part of the experiment's configuration, chosen per run (``freelook experiment
NAME --fault F``, or :func:`injected`), carried in the environment variable
:data:`FAULT_VARIABLE` so worker processes inherit it. Only the experiments read it: the
robot program, the simulator and the station never do; the experiments apply it to the robot
description and the simulated robot they build.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import Any

from freelook.config import (
    ArmConfig,
    PhysicalTruth,
    RobotConfig,
    builtin_error_models,
    load_error_model,
)
from freelook.hardware.sim import SimulatedRobot
from freelook.maps import World

__all__ = [
    "FAULT_VARIABLE",
    "Fault",
    "active",
    "arm_check_off",
    "arm_config",
    "injected",
    "physics",
    "robot_config",
    "simulated_robot",
    "thesis_gain_scale",
]

FAULT_VARIABLE = "FREELOOK_EXPERIMENT_FAULT"
#: m every box of a frozen arm's guard grows by: every checked pair overlaps, at every pose
FROZEN_ARM_PADDING = 1.0
#: s without a command before a robot whose safety is off stops: never, in any experiment
NO_WATCHDOG = 1e6
#: what "gain 0" sets the tracking controller's b and ζ to (it refuses 0 itself)
ZERO_GAIN = 1e-12


class Fault(StrEnum):
    """What an experiment breaks on purpose."""

    #: the tracks or wheels turn as commanded, the ground does not move (true wheel ratio 0)
    FROZEN = "frozen"
    #: no zones, no approach check, no obstacle memory, no link watchdog, the
    #: arm's anti-collision check off
    SAFETY_OFF = "safety-off"
    #: the Free Look pull 0 and the tracking controllers' gains 0 (feed-forward only)
    GAIN_ZERO = "gain-0"
    #: the arm's guard stops every motion (its boxes grown by :data:`FROZEN_ARM_PADDING`)
    ARM_FROZEN = "arm-frozen"


def active() -> Fault | None:
    """The fault this run injects (None: the system as built)."""
    value = os.environ.get(FAULT_VARIABLE, "")
    if not value:
        return None
    try:
        return Fault(value)
    except ValueError:
        known = ", ".join(f.value for f in Fault)
        msg = f"{FAULT_VARIABLE}={value!r}: no such fault (there are: {known})"
        raise ValueError(msg) from None


@contextmanager
def injected(fault: Fault | None) -> Iterator[None]:
    """Run the experiments inside with ``fault`` (None: none), in this process and in the
    worker processes started inside."""
    before = os.environ.get(FAULT_VARIABLE)
    if fault is None:
        os.environ.pop(FAULT_VARIABLE, None)
    else:
        os.environ[FAULT_VARIABLE] = fault.value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(FAULT_VARIABLE, None)
        else:
            os.environ[FAULT_VARIABLE] = before


def robot_config(config: RobotConfig) -> RobotConfig:
    """``config`` with the active fault (a copy; the description's validation is bypassed on
    purpose: a fault is what no valid description allows)."""
    fault = active()
    if fault is Fault.SAFETY_OFF:
        safety = config.safety.model_copy(
            update={
                "zones_enabled": False,
                "approach_check": False,
                "obstacle_memory": 0.0,
                "watchdog_timeout": NO_WATCHDOG,
            }
        )
        return config.model_copy(update={"safety": safety})
    if fault is Fault.GAIN_ZERO:
        return config.model_copy(
            update={
                "free_look": config.free_look.model_copy(update={"gain": 0.0}),
                "robot_tracking": config.robot_tracking.model_copy(
                    update={"b": ZERO_GAIN, "zeta": ZERO_GAIN}
                ),
            }
        )
    if fault is Fault.ARM_FROZEN and config.arm is not None:
        return config.model_copy(update={"arm": arm_config(config.arm)})
    return config


def arm_config(config: ArmConfig) -> ArmConfig:
    """An arm's description with the active fault."""
    if active() is Fault.ARM_FROZEN:
        return config.model_copy(update={"padding": FROZEN_ARM_PADDING})
    return config


def arm_check_off() -> bool:
    """Whether the active fault takes the arm's anti-collision check away."""
    return active() is Fault.SAFETY_OFF


def thesis_gain_scale(scale: float) -> float:
    """The thesis station's tracking gain scale under the active fault."""
    return 0.0 if active() is Fault.GAIN_ZERO else scale


def physics(drawn: PhysicalTruth | None, config: RobotConfig, seed: int) -> PhysicalTruth | None:
    """The simulated robot's physics under the active fault (``drawn``: its error model's
    draw, None: its description)."""
    if active() is not Fault.FROZEN:
        return drawn
    if drawn is None:
        drawn = (
            load_error_model(config.name).draw(seed)
            if config.name in builtin_error_models()
            else _described(config, seed)
        )
    return dataclasses.replace(drawn, left_wheel=0.0, right_wheel=0.0, third_wheel=0.0)


def _described(config: RobotConfig, seed: int) -> PhysicalTruth:
    spread = config.slip.icr_spread if config.slip.enabled else 1.0
    return PhysicalTruth(
        model=config.name,
        seed=seed,
        left_wheel=1.0,
        right_wheel=1.0,
        track=1.0,
        spread_left_turn=spread,
        spread_right_turn=spread,
        spread_per_rate=0.0,
        longitudinal=0.0,
        lateral=0.0,
        icr_forward=0.0,
        slip_noise=0.0,
        gyro_scale=0.0,
        laser_forward=0.0,
        laser_left=0.0,
        laser_yaw=0.0,
        outlier_rate=0.0,
        dropout_rate=0.0,
    )


def simulated_robot(
    config: RobotConfig, world: World, *, seed: int, truth: PhysicalTruth | None = None, **kw: Any
) -> SimulatedRobot:
    """:class:`SimulatedRobot` with the active fault in its description and its physics."""
    return SimulatedRobot(
        robot_config(config), world, seed=seed, truth=physics(truth, config, seed), **kw
    )

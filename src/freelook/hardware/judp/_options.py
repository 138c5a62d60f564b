"""What the JAUS client's conversation is about: the services it uses, its phases, its options."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum

from freelook.judp import JausId, JausMessage

__all__ = [
    "ACCESS_CONTROL",
    "BROADCAST",
    "LOCAL_POSE_SENSOR",
    "MANAGEMENT",
    "MANIPULATOR_JOINT_POSITION_SENSOR",
    "PRIMITIVE_DRIVER",
    "PRIMITIVE_MANIPULATOR",
    "VELOCITY_STATE_DRIVER",
    "VELOCITY_STATE_SENSOR",
    "ClientOptions",
    "Phase",
]

ACCESS_CONTROL = "urn:jaus:jss:core:AccessControl"
MANAGEMENT = "urn:jaus:jss:core:Management"
PRIMITIVE_DRIVER = "urn:jaus:jss:mobility:PrimitiveDriver"
VELOCITY_STATE_DRIVER = "urn:jaus:jss:mobility:VelocityStateDriver"
LOCAL_POSE_SENSOR = "urn:jaus:jss:mobility:LocalPoseSensor"
VELOCITY_STATE_SENSOR = "urn:jaus:jss:mobility:VelocityStateSensor"
PRIMITIVE_MANIPULATOR = "urn:jaus:jss:manipulator:PrimitiveManipulator"
MANIPULATOR_JOINT_POSITION_SENSOR = "urn:jaus:jss:manipulator:ManipulatorJointPositionSensor"
BROADCAST = JausId(0xFFFF, 0xFF, 0xFF)


class Phase(Enum):
    DISCOVERING = "discovering"  # asking who is there and what it offers
    REQUESTING = "requesting control"
    RESUMING = "resuming"  # control held; waiting for the robot to be Ready
    READY = "ready"  # driving
    FAILED = "failed"  # never got going: ``problem`` says what was asked and answered
    FAULT = "fault"  # lost control while driving: nothing more is commanded
    CLOSED = "closed"


@dataclass(frozen=True, slots=True)
class ClientOptions:
    """How the client talks to one robot; speeds and rates bound what reports may say."""

    own_id: JausId = field(default_factory=lambda: JausId(150, 1, 1))
    authority: int = 5
    max_speed: float = 1.0  # m/s: 100 % wrench effort, and reports beyond 2× are refused
    max_turn_rate: float = math.pi / 2  # rad/s, likewise
    track_width: float = 0.5  # m: turns (v, ω) into the odometer's wheel speeds
    retry: float = 0.25  # s between repeats of an unanswered discovery or control query
    discovery_timeout: float = 3.0  # s for identification and services
    control_timeout: float = 2.0  # s for ConfirmControl and a Ready status
    sensor_period: float = 0.05  # s between pose and velocity queries
    command_refresh: float = 0.1  # s: an unchanged command is sent again this often
    command_timeout: float = 0.5  # s: a command not renewed within this becomes a stop
    link_timeout: float = 1.0  # s without a datagram from the robot: not connected
    keep_alive: float = 1.0  # s between RequestControls until the robot's timeout is known


def _ok(message: JausMessage) -> str:
    return type(message).__name__


def _printable(text: str) -> str:
    """``text`` fit for a one-line message (a robot's strings are not trusted)."""
    return "".join(ch if ch.isprintable() else "?" for ch in text[:80])

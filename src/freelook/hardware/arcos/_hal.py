"""The robot program's hardware interfaces over an :class:`ArcosClient`.

Each device reads the client's newest SIP-derived state; the drive hands commands to the client
and then calls ``notify`` so the driver writes them at once instead of at the next keep-alive.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from freelook.config import SonarConfig
from freelook.hal import (
    DriveCommand,
    DriveKind,
    HardwareConnection,
    LatestReading,
    RangeScan,
    RobotHardware,
)
from freelook.hardware.arcos._client import ArcosClient

__all__ = ["PIONEER_3DX_SONAR", "SonarLayout", "arcos_hardware"]


@dataclass(frozen=True, slots=True)
class SonarLayout:
    """Where each sonar of a ring sits and looks (robot frame, x forward, y left).

    Entry ``i`` describes the sonar ARCOS numbers ``i`` in its SIPs.
    """

    bearings: tuple[float, ...]  # rad
    x: tuple[float, ...]  # m
    y: tuple[float, ...]
    range_max: float = 5.0  # m; a sonar that saw nothing (or never reported) reads this

    def __post_init__(self) -> None:
        n = len(self.bearings)
        if len(self.x) != n or len(self.y) != n:
            raise ValueError(
                f"sonar layout: {n} bearings but {len(self.x)} x and {len(self.y)} y positions"
            )
        if not self.range_max > 0.0:
            raise ValueError(f"sonar range_max {self.range_max} m: must be > 0")

    @classmethod
    def from_config(cls, config: SonarConfig) -> SonarLayout:
        """Front then rear ring from a robot description, each sonar on the ring radius."""
        bearings = tuple(math.radians(b) for b in (*config.front_deg, *config.rear_deg))
        r = config.ring_radius
        return cls(
            bearings,
            tuple(r * math.cos(b) for b in bearings),
            tuple(r * math.sin(b) for b in bearings),
            config.range_max,
        )


# The Pioneer 3-DX's 16 sonars as ARIA's p3dx parameter file places them (mm, mm, degrees).
_P3DX = (
    (69, 136, 90),
    (114, 119, 50),
    (148, 78, 30),
    (166, 27, 10),
    (166, -27, -10),
    (148, -78, -30),
    (114, -119, -50),
    (69, -136, -90),
    (-157, -136, -90),
    (-203, -119, -130),
    (-237, -78, -150),
    (-255, -27, -170),
    (-255, 27, 170),
    (-237, 78, 150),
    (-203, 119, 130),
    (-157, 136, 90),
)
PIONEER_3DX_SONAR = SonarLayout(
    tuple(math.radians(b) for _, _, b in _P3DX),
    tuple(x / 1000.0 for x, _, _ in _P3DX),
    tuple(y / 1000.0 for _, y, _ in _P3DX),
)


class _Drive:
    """A differential base behind ARCOS's velocity commands: it reads the twist (v, ω)."""

    def __init__(
        self,
        client: ArcosClient,
        notify: Callable[[], None],
        clock: Callable[[], float] | None,
    ) -> None:
        self._client = client
        self._notify = notify
        self._clock = clock

    @property
    def kind(self) -> DriveKind:
        return "differential"

    def command(self, command: DriveCommand) -> None:
        now = None if self._clock is None else self._clock()
        self._client.command_velocity(command.v, command.omega, now)
        self._notify()


class _Sonar:
    """Each sonar's newest range from the SIPs (ARCOS reports a few sonars per SIP)."""

    name = "sonar"

    def __init__(self, client: ArcosClient, layout: SonarLayout) -> None:
        self._client = client
        self._range_max = layout.range_max
        self._bearings = np.array(layout.bearings, dtype=np.float64)
        self._x = np.array(layout.x, dtype=np.float64)
        self._y = np.array(layout.y, dtype=np.float64)

    def latest(self) -> RangeScan | None:
        readings = self._client.sonar
        if not readings:
            return None
        ranges: npt.NDArray[np.float64] = np.full(len(self._bearings), self._range_max)
        stamp = -math.inf
        for number, reading in readings.items():
            if number < len(ranges):
                ranges[number] = min(reading.range, self._range_max)
                stamp = max(stamp, reading.stamp)
        if stamp == -math.inf:
            return None
        return RangeScan(stamp, ranges, self._bearings, self._x, self._y, self._range_max)


def arcos_hardware(
    client: ArcosClient,
    connection: HardwareConnection,
    *,
    sonar: SonarLayout | None = PIONEER_3DX_SONAR,
    notify: Callable[[], None] = lambda: None,
    clock: Callable[[], float] | None = None,
) -> RobotHardware:
    """The HAL of a Pioneer-class robot behind ``client``: drive, odometer, sonar, bumpers.

    ``notify`` is called after every drive command (the driver wakes its writer); ``clock``
    dates commands for the client's ``command_timeout``.
    """
    return RobotHardware(
        drive=_Drive(client, notify, clock),
        odometer=LatestReading(lambda: client.odometry),
        sonar=None if sonar is None else _Sonar(client, sonar),
        bumpers=LatestReading(lambda: client.bumpers),
        connection=connection,
    )

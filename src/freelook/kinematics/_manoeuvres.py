"""The example manoeuvres of Ögren 2013 §4.1 (Figs. 6 and 7), integrated under Free Look Control.

Fig. 6: chassis facing east, camera north; the operator commands left, forward, right, forward,
left, each a straight camera segment. Fig. 7: approach an object, stop about 1 m away, translate
left while turning the camera to keep the object centred (an orbit, v2 = R·ω), then turn the
camera and drive on. Both are scripted camera-frame commands (v1, v2, ω) held for a duration.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from freelook.kinematics._control_modes import free_look_control
from freelook.kinematics._drive import DriveState, camera_pose, integrate_drive

__all__ = [
    "Segment",
    "Trace",
    "fig6_segments",
    "fig7_object",
    "fig7_segments",
    "simulate_free_look",
]


@dataclass(frozen=True, slots=True)
class Segment:
    """A camera-frame command held for ``duration`` seconds."""

    v1: float
    v2: float
    omega: float
    duration: float
    label: str = ""


@dataclass(frozen=True, slots=True)
class Trace:
    """Time histories (N samples) of chassis and camera."""

    t: npt.NDArray[np.float64]
    chassis: npt.NDArray[np.float64]  # N×3: x, y, θ
    camera: npt.NDArray[np.float64]  # N×3: x, y, ψ
    pan: npt.NDArray[np.float64]
    segment: npt.NDArray[np.int64]  # index of the segment each sample belongs to


SPEED = 0.3  # m/s, the camera's speed in the figures


def fig6_segments() -> list[Segment]:
    """Left, forward, right, forward, left: 1 m each in the camera frame."""
    duration = 1.0 / SPEED
    return [
        Segment(0.0, SPEED, 0.0, duration, "left"),
        Segment(SPEED, 0.0, 0.0, duration, "forward"),
        Segment(0.0, -SPEED, 0.0, duration, "right"),
        Segment(SPEED, 0.0, 0.0, duration, "forward"),
        Segment(0.0, SPEED, 0.0, duration, "left"),
    ]


FIG7_DISTANCE = 3.0  # object ahead of the camera's start, m
FIG7_RADIUS = 1.0


def fig7_segments() -> list[Segment]:
    """Approach the object 3 m ahead to 1 m, orbit it through a half circle, turn, drive on."""
    approach = FIG7_DISTANCE - FIG7_RADIUS
    omega = 0.25
    return [
        Segment(SPEED, 0.0, 0.0, approach / SPEED, "approach"),
        # moving left at v2 while turning at ω = −v2/R keeps the object centred at radius R
        Segment(0.0, omega * FIG7_RADIUS, -omega, math.pi / omega, "orbit"),
        Segment(0.0, 0.0, math.pi / 2 / 2.0, 2.0, "turn"),
        Segment(SPEED, 0.0, 0.0, 1.5 / SPEED, "drive on"),
    ]


def fig7_object(start: DriveState, L1: float, L2: float) -> tuple[float, float]:
    """Where the Fig. 7 object stands: 3 m straight ahead of the camera's start pose."""
    cx, cy, psi = camera_pose(start.x, start.y, start.theta, start.pan, L1, L2)
    return (cx + FIG7_DISTANCE * math.cos(psi), cy + FIG7_DISTANCE * math.sin(psi))


def simulate_free_look(
    segments: list[Segment],
    start: DriveState,
    L1: float,
    L2: float,
    d: float,
    dt: float = 1e-3,
) -> Trace:
    """Integrate the drive model under FLC (controller at every step, exact arcs)."""
    n_total = sum(round(seg.duration / dt) for seg in segments)
    t = np.empty(n_total + 1)
    chassis = np.empty((n_total + 1, 3))
    camera = np.empty((n_total + 1, 3))
    pan = np.empty(n_total + 1)
    index = np.empty(n_total + 1, dtype=np.int64)
    state = start
    k = 0

    def record(i: int, now: float, seg: int) -> None:
        t[i] = now
        chassis[i] = (state.x, state.y, state.theta)
        camera[i] = camera_pose(state.x, state.y, state.theta, state.pan, L1, L2)
        pan[i] = state.pan
        index[i] = seg

    record(0, 0.0, 0)
    now = 0.0
    for seg_index, seg in enumerate(segments):
        for _ in range(round(seg.duration / dt)):
            cmd = free_look_control(seg.v1, seg.v2, seg.omega, state.pan, L1, L2, d)
            state = integrate_drive(state, cmd.v_left, cmd.v_right, cmd.pan_rate, d, dt)
            now += dt
            k += 1
            record(k, now, seg_index)
    return Trace(t, chassis, camera, pan, index)

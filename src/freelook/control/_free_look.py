"""Free Look Control, closed around the camera's estimated pose (sans-I/O).

The commanded camera motion is integrated into a reference camera pose (position and
heading); the feedback law (docs/design.md §3) then runs on the commanded velocity plus a correction
toward that reference, so motor lag, slip and the controller's d_eff do not bend the camera's
path or turn its heading. The pan rate uses the measured chassis rate (gyro filter), not the
wheel model. Commands are integrated over the time each was in force (arrival to arrival),
not in whole control cycles, so a commanded 90° turn is 90°; and only at the share the
actuators carried out, so a camera held by the e-stop has nothing to catch up afterwards.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from freelook.config import DriveConfig, FreeLookConfig, ModeLimitsConfig, PanTiltConfig
from freelook.geometry import Pose, wrap_angle
from freelook.hal import DriveCommand, scale_within
from freelook.kinematics import free_look_control

__all__ = ["CameraCommand", "CameraReference", "FreeLookController"]


@dataclass(frozen=True, slots=True)
class CameraCommand:
    """The camera's commanded motion in its own frame: v1 forward and v2 left (m/s), and its
    turn rate ω (rad/s). The tilt is not the controller's: the camera unit takes it as is."""

    v1: float
    v2: float
    omega: float


@dataclass(frozen=True, slots=True)
class CameraReference:
    """Where the camera should be: position (m) and heading ψ (rad), and as of when."""

    x: float
    y: float
    psi: float
    time: float


class FreeLookController:
    """The camera reference and the feedback law around it, for one robot."""

    def __init__(
        self,
        settings: FreeLookConfig,
        drive: DriveConfig,
        pan_tilt: PanTiltConfig,
        limits: ModeLimitsConfig,
    ) -> None:
        self.settings = settings
        self.drive = drive
        self.pan_tilt = pan_tilt
        #: the camera's commanded speed and turn rate are kept within the robot's configured
        #: ones, direction kept, as each command arrives
        self.command_limits = (limits.max_speed, math.radians(limits.max_turn_rate_deg))
        #: the chassis's limits in this mode: the robot's configured speed and turn rate
        self.max_speed = min(limits.max_speed, drive.max_wheel_speed)
        self.max_turn_rate = min(math.radians(limits.max_turn_rate_deg), drive.max_turn_rate)
        self.reference: CameraReference | None = None
        self._command: CameraCommand | None = None  # the command in force since reference.time
        self.carried_out = 1.0  # share of the command the actuators carried out last cycle

    def reset(self) -> None:
        """Forget the reference (a mode change): the next cycle starts from where it is."""
        self.reference = None
        self._command = None

    def hold(self) -> None:
        """The actuators are held from now on (e-stop): integrate nothing until released."""
        self.carried_out = 0.0

    def command(self, command: CameraCommand, now: float) -> None:
        """A new command arrived at ``now``: the previous one was in force until then. Its
        speed and turn rate are scaled together within the robot's configured ones."""
        self._advance(now)
        s = scale_within((math.hypot(command.v1, command.v2), command.omega), self.command_limits)
        if s < 1.0:
            command = CameraCommand(command.v1 * s, command.v2 * s, command.omega * s)
        self._command = command

    def _advance(self, until: float) -> None:
        """Integrate the command in force into the reference up to ``until``."""
        ref, command = self.reference, self._command
        if ref is None:
            return
        dt = until - ref.time
        if command is None or dt <= 0:
            self.reference = CameraReference(ref.x, ref.y, ref.psi, max(ref.time, until))
            return
        scale = self.carried_out
        omega = command.omega * scale
        mid = ref.psi + 0.5 * omega * dt
        c, s = math.cos(mid), math.sin(mid)
        vx = (c * command.v1 - s * command.v2) * scale
        vy = (s * command.v1 + c * command.v2) * scale
        self.reference = CameraReference(
            ref.x + vx * dt, ref.y + vy * dt, wrap_angle(ref.psi + omega * dt), until
        )

    def step(
        self, pose: Pose, pan: float, yaw_rate: float, has_gyro: bool, now: float
    ) -> tuple[DriveCommand, float]:
        """This cycle's drive command (the track speeds and the chassis's v, ω they give) and
        pan rate (rad/s), before safety scales them."""
        assert self._command is not None
        d = self.drive.d_eff
        L1, L2 = self.pan_tilt.mount_forward, self.pan_tilt.mount_left
        x, y, theta = pose
        c, s = math.cos(theta), math.sin(theta)
        cam_x, cam_y = x + c * L1 - s * L2, y + s * L1 + c * L2
        psi = theta + pan
        command = self._command
        if self.reference is None:
            self.reference = CameraReference(cam_x, cam_y, psi, now)
        self._advance(now)
        ref = self.reference
        assert ref is not None
        rx, ry = ref.x, ref.y
        if command.v1 == 0.0 and command.v2 == 0.0:
            # every input released: stop where the camera is now, do not catch up
            rx, ry = cam_x, cam_y
        # never let the reference run away from a camera that cannot follow (blocked, e-stop)
        ex, ey = rx - cam_x, ry - cam_y
        lag = math.hypot(ex, ey)
        cap = self.settings.lag_cap
        if lag > cap:
            rx, ry = cam_x + ex * cap / lag, cam_y + ey * cap / lag
            ex, ey = rx - cam_x, ry - cam_y
        self.reference = CameraReference(rx, ry, ref.psi, ref.time)
        # the feed-forward is the command itself: safety scales this cycle's whole output after
        cr, sr = math.cos(ref.psi), math.sin(ref.psi)
        gain = self.settings.gain
        wx = cr * command.v1 - sr * command.v2 + gain * ex
        wy = sr * command.v1 + cr * command.v2 + gain * ey
        cp, sp = math.cos(psi), math.sin(psi)
        u1, u2 = cp * wx + sp * wy, -sp * wx + cp * wy  # into the camera frame
        turn = command.omega + gain * wrap_angle(ref.psi - psi)
        pt, drive = self.pan_tilt, self.drive
        wheels = free_look_control(u1, u2, turn, pan, L1, L2, d)
        # within the tracks', the pan unit's, the turn rate's and the speed's limits at once
        sat = scale_within(
            (
                max(abs(wheels.v_left), abs(wheels.v_right)),
                wheels.pan_rate,
                (wheels.v_right - wheels.v_left) / d,
                (wheels.v_left + wheels.v_right) / 2,
            ),
            (drive.max_wheel_speed, pt.max_pan_rate, self.max_turn_rate, self.max_speed),
        )
        if sat < 1.0:
            wheels = free_look_control(u1 * sat, u2 * sat, turn * sat, pan, L1, L2, d)
            turn *= sat
        chassis_rate = yaw_rate if has_gyro else (wheels.v_right - wheels.v_left) / d
        pan_rate = max(-pt.max_pan_rate, min(pt.max_pan_rate, turn - chassis_rate))
        return DriveCommand.of_wheels(wheels.v_left, wheels.v_right, d), pan_rate

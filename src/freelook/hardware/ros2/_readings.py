"""The readings of a ROS 2 robot's topics: each message checked and converted, kept newest.

:class:`_Readings` holds what :class:`~._robot.Ros2Robot` hears on odometry, the IMU, the
joints, the camera, the battery and an external e-stop, and what it refused and why; its
attributes are made by the robot's ``__init__``.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from freelook.config import LaserConfig, LaserMountConfig, RobotConfig, Ros2Config
from freelook.hal import GyroSample, OdometrySample
from freelook.hardware.ros2._arm import Ros2Arm
from freelook.hardware.ros2._convert import Sweep, wheels_of_twist, yaw_of_quaternion
from freelook.hardware.ros2._tf import Mount

__all__: list[str] = []

log = logging.getLogger(__name__)

#: m from the odometry frame's origin beyond which a base's pose is not believed
MAX_ODOMETRY_M = 1e6


class _Frame(NamedTuple):
    stamp: float
    jpeg: bytes | None  # a CompressedImage's JPEG, as it came
    rgb: npt.NDArray[np.uint8] | None  # an Image's pixels, RGB
    width: int
    height: int


class _LaserTopic(NamedTuple):
    """One laser's scan topic: its description (pins, mount) and where that is said."""

    topic: str
    config: LaserConfig | LaserMountConfig
    where: str  # the description's section, as errors name it
    frame: str  # the frame_id its scans must carry ("": any)


class _Geometry(NamedTuple):
    """A scan layout's beams in the robot frame (the same arrays for every scan so laid out)."""

    layout: tuple[float, float, int]  # angle_min, angle_increment, beams
    mount: Mount  # where the laser sits, from /tf_static or the description
    frame: str  # the scans' frame_id
    tf_version: int  # the static transforms it was worked out against
    sweep: Sweep
    bearings: npt.NDArray[np.float64]
    origin_x: npt.NDArray[np.float64]
    origin_y: npt.NDArray[np.float64]


class _Piece(NamedTuple):
    """A laser's newest scan, as its sweep's ranges."""

    ranges: npt.NDArray[np.float64]
    geometry: _Geometry


def _finite(*values: float) -> bool:
    return all(math.isfinite(v) for v in values)


class _Readings:
    """The topics' newest readings, checked (a mixin of :class:`~._robot.Ros2Robot`)."""

    config: RobotConfig
    settings: Ros2Config
    node: Any
    arm: Ros2Arm | None
    topics: dict[str, tuple[str, str]]
    refused: Counter[str]
    heard: dict[str, float]
    problems: dict[str, str]
    battery: float | None
    estop_pressed: bool
    on_external_estop: Callable[[], None]
    _clock: Callable[[], float]
    _news: Callable[[], None]
    _odom: OdometrySample | None
    _odom_frame: str
    _gyro: GyroSample | None
    _gyro_angle: float
    _gyro_stamp: float | None
    _joints_stamp: float
    _frame: _Frame | None

    def _heard(self, key: str, now: float) -> None:
        first = key not in self.heard
        self.heard[key] = now
        self.problems.pop(key, None)
        if first:
            self._news()

    def _refuse(self, key: str, why: str) -> None:
        self.refused[key] += 1
        first = key not in self.problems
        self.problems[key] = why
        if first:
            self._news()

    def _stale(self, key: str, header: Any) -> bool:
        """Whether a reading's stamp is refused: none (zero), older than ``stamp_age`` or
        ahead of the node's clock by more than ``stamp_lead``."""
        stamp = header.stamp.sec + header.stamp.nanosec * 1e-9
        if stamp == 0.0:
            self._refuse(key, "no stamp (header.stamp is 0)")
            return True
        lag = self.node.get_clock().now().nanoseconds * 1e-9 - stamp
        if lag > self.settings.stamp_age:
            self._refuse(key, f"stamped {lag:.2f} s ago (more than {self.settings.stamp_age:g} s)")
            return True
        if -lag > self.settings.stamp_lead:
            self._refuse(key, f"stamped {-lag:.2f} s ahead of this computer's clock")
            return True
        return False

    def _on_estop(self, msg: Any) -> None:
        """An external e-stop's state: true engages the program's e-stop (latched, as the
        cockpit's); false never releases it, but its release is engaged once more, so the
        program's e-stop always holds until the cockpit releases it after the button."""
        pressed, was = bool(msg.data), self.estop_pressed
        self.estop_pressed = pressed
        self._heard("estop", self._clock())
        if pressed != was:
            name = self.topics["estop"][0]
            if pressed:
                log.error("%s: the external e-stop is engaged", name)
            else:
                log.warning("%s: the external e-stop is let go; the cockpit releases it", name)
        if pressed or was:
            self.on_external_estop()

    def _on_odom(self, msg: Any) -> None:
        now = self._clock()
        if self._stale("odom", msg.header):
            return
        p, q = msg.pose.pose.position, msg.pose.pose.orientation
        t = msg.twist.twist
        if not _finite(p.x, p.y, q.x, q.y, q.z, q.w, t.linear.x, t.angular.z):
            self._refuse("odom", "a non-finite number in the pose or the twist")
            return
        if q.x == q.y == q.z == q.w == 0.0:
            self._refuse("odom", "an all-zero orientation quaternion")
            return
        drive = self.config.drive
        if max(abs(p.x), abs(p.y)) > MAX_ODOMETRY_M:
            self._refuse("odom", f"a position beyond ±{MAX_ODOMETRY_M:g} m")
            return
        # as a JAUS robot's reports: twice what the base can do, and a little, is believable
        if abs(t.linear.x) > 2.0 * drive.max_wheel_speed + 0.1 or (
            abs(t.angular.z) > 2.0 * drive.max_turn_rate + 0.1
        ):
            self._refuse("odom", f"a twist faster than the base ({t.linear.x}, {t.angular.z})")
            return
        yaw = yaw_of_quaternion(q.x, q.y, q.z, q.w)
        if not math.isfinite(yaw):  # a quaternion too large to normalise
            self._refuse("odom", "an orientation quaternion with no finite heading")
            return
        left, right = wheels_of_twist(t.linear.x, t.angular.z, drive.track_width)
        self._odom_frame = msg.header.frame_id.lstrip("/") or "odom"
        self._odom = OdometrySample(now, p.x, p.y, yaw, left, right)
        self._heard("odom", now)

    def _on_imu(self, msg: Any) -> None:
        now = self._clock()
        if self._stale("imu", msg.header):
            return
        rate = msg.angular_velocity.z
        if msg.angular_velocity_covariance[0] == -1.0:
            self._refuse("imu", "angular velocity covariance −1: the IMU gives no rate")
            return
        if not math.isfinite(rate):
            self._refuse("imu", f"angular velocity z = {rate}")
            return
        # the turn between readings over their stamps' interval, not their arrivals': a
        # program held up a quarter second lost 7 % of a turn taking the rate of one reading
        # over the others' time; a reading stamped no later than the last adds no turn
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        last = self._gyro_stamp
        if last is not None and stamp <= last:
            return
        if last is not None:
            self._gyro_angle += rate * (stamp - last)
        self._gyro_stamp = stamp
        self._gyro = GyroSample(now, rate, self._gyro_angle)
        self._heard("imu", now)

    def _on_joints(self, msg: Any) -> None:
        now = self._clock()
        names = list(msg.name)
        found = False
        for joint, attr in ((self.settings.pan_joint, "_pan"), (self.settings.tilt_joint, "_tilt")):
            if joint in names:
                i = names.index(joint)
                if i >= len(msg.position) or not math.isfinite(msg.position[i]):
                    self._refuse("joint_states", f"{joint}: no finite position")
                    return
                setattr(self, attr, float(msg.position[i]))
                found = True
        if self.arm is not None:
            try:
                found = self.arm.read(names, msg.position, msg.velocity, now) or found
            except ValueError as err:
                self._refuse("joint_states", str(err))
                return
        if found:
            self._joints_stamp = now
            self._heard("joint_states", now)

    def _on_compressed(self, msg: Any) -> None:
        now = self._clock()
        fmt = msg.format.lower()
        if "jpeg" not in fmt and "jpg" not in fmt:
            self._refuse("camera", f"format {msg.format!r}: only JPEG is sent on the link")
            return
        import simplejpeg

        data = bytes(msg.data)
        try:
            height, width, _, _ = simplejpeg.decode_jpeg_header(data)
        except ValueError as err:
            self._refuse("camera", f"not a JPEG ({err})")
            return
        if not self._frame_fits(int(width), int(height)):
            return
        self._frame = _Frame(now, data, None, int(width), int(height))
        self._heard("camera", now)

    def _on_image(self, msg: Any) -> None:
        now = self._clock()
        channels = {"rgb8": 3, "bgr8": 3, "mono8": 1, "rgba8": 4, "bgra8": 4}.get(msg.encoding)
        if channels is None:
            self._refuse("camera", f"encoding {msg.encoding!r} (rgb8, bgr8, rgba8, bgra8 or mono8)")
            return
        h, w, step = msg.height, msg.width, msg.step
        if not self._frame_fits(w, h):
            return
        data = np.frombuffer(bytes(msg.data), dtype=np.uint8)
        if step < w * channels or len(data) < h * step:
            self._refuse("camera", f"{len(data)} bytes for {w}×{h} {msg.encoding} rows of {step}")
            return
        pixels = data[: h * step].reshape(h, step)[:, : w * channels].reshape(h, w, channels)
        if channels == 1:
            rgb = np.repeat(pixels, 3, axis=2)
        elif msg.encoding.startswith("bgr"):
            rgb = pixels[:, :, 2::-1]
        else:
            rgb = pixels[:, :, :3]
        self._frame = _Frame(now, None, np.ascontiguousarray(rgb), int(w), int(h))
        self._heard("camera", now)

    def _frame_fits(self, width: int, height: int) -> bool:
        """A frame within the description's camera (twice its size each way); a larger one,
        or one of no pixels, is refused before anything is decoded or copied."""
        max_w, max_h = self.config.camera.frame_limit
        if 0 < width <= max_w and 0 < height <= max_h:
            return True
        self._refuse("camera", f"a {width}×{height} frame; the camera's limit is {max_w}×{max_h}")
        return False

    def _on_battery(self, msg: Any) -> None:
        if not 0.0 <= msg.percentage <= 1.0:  # NaN: not measured (REP 145); beyond: not a share
            if not math.isnan(msg.percentage):
                self._refuse("battery", f"percentage {msg.percentage}: not within 0…1")
            return
        self.battery = float(msg.percentage)
        self._heard("battery", self._clock())

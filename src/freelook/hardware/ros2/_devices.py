"""A ROS 2 robot's HAL devices: thin adapters over :class:`~._robot.Ros2Robot`'s readings
and publishers."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from freelook.hal import DriveCommand, DriveKind, PanTiltState, RangeScan

if TYPE_CHECKING:
    from freelook.hardware.ros2._robot import Ros2Robot

__all__: list[str] = []


class _Drive:
    """``cmd_vel`` is a twist: the drive publishes the command's (v, ω) as it is, and vy on a
    holonomic base."""

    def __init__(self, robot: Ros2Robot) -> None:
        self._robot = robot
        self._kind = robot.config.drive.kind
        self._holonomic = self._kind == "holonomic"

    @property
    def kind(self) -> DriveKind:
        return self._kind

    def command(self, command: DriveCommand) -> None:
        vy = command.vy if self._holonomic else 0.0
        self._robot.publish_twist(command.v, vy, command.omega)


class _Laser:
    name = "laser"

    def __init__(self, robot: Ros2Robot) -> None:
        self._robot = robot

    def latest(self) -> RangeScan | None:
        return self._robot._scan


class _PanTilt:
    def __init__(self, robot: Ros2Robot) -> None:
        self._robot = robot
        pt = robot.config.pan_tilt
        assert pt is not None
        self._has_pan, self._has_tilt = pt.has_pan, pt.has_tilt

    @property
    def has_pan(self) -> bool:
        return self._has_pan

    @property
    def has_tilt(self) -> bool:
        return self._has_tilt

    def command_rates(self, pan_rate: float, tilt_rate: float) -> None:
        self._robot.publish_pan_tilt(pan_rate, tilt_rate)

    def state(self) -> PanTiltState:
        r = self._robot
        return PanTiltState(r._joints_stamp, r._pan or 0.0, r._tilt or 0.0)


class _Camera:
    """The camera topic: JPEG passed through as it came; raw images as RGB for encoding."""

    def __init__(self, robot: Ros2Robot) -> None:
        self._robot = robot

    def capture(self) -> npt.NDArray[np.uint8] | None:
        frame = self._robot._frame
        if frame is None:
            return None
        if frame.rgb is not None:
            return frame.rgb
        import simplejpeg

        assert frame.jpeg is not None
        try:  # its header was read on arrival; the rest may still be cut short or corrupt
            image: npt.NDArray[np.uint8] = simplejpeg.decode_jpeg(frame.jpeg, colorspace="RGB")
        except ValueError as err:
            self._robot._refuse("camera", f"a JPEG that does not decode ({err})")
            return None
        return image

    def capture_jpeg(self, quality: int) -> tuple[bytes, int, int] | None:
        frame = self._robot.take_frame()
        if frame is None:
            return None
        if frame.jpeg is not None:
            return frame.jpeg, frame.width, frame.height
        import simplejpeg

        assert frame.rgb is not None
        jpeg: bytes = simplejpeg.encode_jpeg(frame.rgb, quality=quality, colorspace="RGB")
        return jpeg, frame.width, frame.height

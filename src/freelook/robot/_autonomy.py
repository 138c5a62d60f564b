"""The robot program's autonomy: the disposal task on the robot's own camera, HAL and arm.

Vision sees what the operator sees: the driving camera's frame is JPEG-encoded at the quality
the link sends and decoded again (at half size, libjpeg's DCT scaling) before the colour
blobs are looked for, at ``vision_rate``; or, with :meth:`RobotAutonomy.use_local_camera`, a
camera wired to the program's own computer (Kievit-Kylar's webcam on the laptop), each frame
as captured. The task's command goes back to the robot core,
which passes it through the same mode layer, safety filter (zones, approach check, watchdog,
e-stop) and arm anti-collision check as an operator's; the core repeats it every control cycle
until the task changes it, so a base with its own command watchdog keeps moving (Kievit-Kylar).
"""

from __future__ import annotations

import math

import numpy as np
import simplejpeg

from freelook.arm import ArmModel, tool_pose
from freelook.autonomy import (
    CameraModel,
    ColorTarget,
    DisposalTask,
    Perception,
    TaskCommand,
    TaskInputs,
    TaskSettings,
)
from freelook.config import RobotConfig
from freelook.geometry import Pose
from freelook.hal import RobotHardware
from freelook.link import AutonomyTelemetry, encode_jpeg
from freelook.types import TaskPhase

__all__ = ["RobotAutonomy", "task_settings"]

#: the eod world's colours: a red object, a green receptacle
DEFAULT_OBJECT = ColorTarget(hue=0.0)
DEFAULT_RECEPTACLE = ColorTarget(hue=125.0)


def task_settings(config: RobotConfig, arm: ArmModel) -> TaskSettings:
    """The task's reach-dependent settings for a robot: the object is grasped a little short
    of where the tool stands in the arm's ready pose, and carried high."""
    ready = tool_pose(arm, arm.ready)[:3, 3]
    front = config.footprint.length / 2 + config.footprint.center_forward
    reach = float(ready[0])
    standoff = max(front + 0.25, reach - 0.12)
    limits = config.limits
    return TaskSettings(
        holonomic=config.drive.kind == "holonomic",
        object_standoff=standoff,
        receptacle_standoff=max(front + 0.6, reach + 0.04),
        carry=(max(front + 0.1, reach * 0.7), 0.0, 0.95 if reach > 1.3 else 0.75),
        max_speed=min(0.35, limits.max_speed),
        max_turn_rate=min(0.6, math.radians(limits.max_turn_rate_deg)),
    )


class RobotAutonomy:
    """Perception + task for one robot; ``step`` once per control cycle in the autonomy mode."""

    def __init__(
        self,
        config: RobotConfig,
        hardware: RobotHardware,
        arm: ArmModel,
        *,
        vision_rate: float = 5.0,
    ) -> None:
        if hardware.camera is None or config.pan_tilt is None:
            raise ValueError("autonomy needs the driving camera")
        self.config = config
        self.hw = hardware
        self.arm = arm
        pt = config.pan_tilt
        cam = config.camera
        self.camera = CameraModel(
            cam.width,
            cam.height,
            math.radians(cam.fov_deg),
            pt.mount_forward,
            pt.mount_left,
            pt.mount_height,
        )
        self.vision_period = 1.0 / vision_rate
        #: frames JPEG-coded as the link sends them (False: a camera on the program's own
        #: computer, its frames read as they are)
        self.through_link = True
        self.perception = Perception(self.camera, DEFAULT_OBJECT, DEFAULT_RECEPTACLE)
        self.task = DisposalTask(task_settings(config, arm), arm)
        self._next_frame = -math.inf
        self.last: TaskCommand = TaskCommand()

    def set_colors(
        self,
        object_color: ColorTarget,
        receptacle_color: ColorTarget,
        object_height: float | None = None,
    ) -> None:
        """What to look for (the operator's description of the scene: the colours, and the
        object's height if given); forgets the tracks."""
        self.perception = Perception(self.camera, object_color, receptacle_color, object_height)

    def use_local_camera(self, rate_hz: float) -> None:
        """See through a camera wired to the computer the program runs on, as Kievit-Kylar's
        webcam on the laptop (its frames never cross the link): each frame read as captured,
        not JPEG-coded, at ``rate_hz``."""
        if not rate_hz > 0:
            raise ValueError(f"camera rate {rate_hz} must be positive")
        self.vision_period = 1.0 / rate_hz
        self.through_link = False

    def start(self, now: float) -> None:
        """A new task, or the paused one resumed from its phase."""
        if self.task.running:
            self.task.resume(now)
        else:
            self.perception.object.reset()
            self.perception.receptacle.reset()
            self.task.start(now)
        self._next_frame = -math.inf

    def pause(self, now: float) -> None:
        self.task.pause(now)
        self.last = TaskCommand()

    def look(self, now: float, odom: Pose, pan: float, tilt: float) -> None:
        """Take a frame when one is due: encode it as the link would, decode, detect."""
        if now < self._next_frame or self.hw.camera is None:
            return
        self._next_frame = now + self.vision_period
        image = self.hw.camera.capture()
        if image is None:
            return
        if self.through_link:
            jpeg = encode_jpeg(image, self.config.camera.jpeg_quality)
            w, h = self.camera.width // 2, self.camera.height // 2
            image = simplejpeg.decode_jpeg(
                jpeg, colorspace="RGB", fastdct=True, min_width=w, min_height=h
            )
        self.perception.update(now, np.asarray(image, dtype=np.uint8), odom, pan, tilt)

    def step(
        self, now: float, odom: Pose, pan: float, tilt: float, q: np.ndarray, holding: bool
    ) -> TaskCommand:
        """One control cycle: look (when a frame is due), then the task's command."""
        self.look(now, odom, pan, tilt)
        pt = self.config.pan_tilt
        assert pt is not None
        inputs = TaskInputs(
            odom,
            tilt,
            pan,
            q,
            holding,
            self.perception.object.track,
            self.perception.receptacle.track,
            pt.mount_forward,
            pt.mount_height,
        )
        self.last = self.task.step(now, inputs)
        return self.last

    def telemetry(self, paused: bool) -> AutonomyTelemetry:
        task = self.task
        return AutonomyTelemetry(
            task.phase, min(max(task.progress, 0.0), 1.0), paused and task.running, task.recoveries
        )

    @property
    def phase(self) -> TaskPhase:
        return self.task.phase

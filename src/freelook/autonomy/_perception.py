"""The task's eyes: one camera frame in, the object's and the receptacle's tracks updated."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from freelook.autonomy._tracking import Track, Tracker
from freelook.autonomy._vision import CameraModel, ColorTarget, Sighting, detect_blobs, locate
from freelook.geometry import Pose

__all__ = ["Perception"]


class Perception:
    """Colour blobs of the object and of the receptacle, placed on the floor and tracked."""

    def __init__(
        self, camera: CameraModel, object_color: ColorTarget, receptacle_color: ColorTarget
    ) -> None:
        self.camera = camera
        self.targets = (object_color, receptacle_color)
        self.object = Tracker()
        self.receptacle = Tracker()
        self.frames = 0
        #: every sighting of the newest frame (object's, receptacle's), robot frame
        self.sightings: tuple[list[Sighting], list[Sighting]] = ([], [])

    def update(
        self, now: float, image: npt.NDArray[np.uint8], odom: Pose, pan: float, tilt: float
    ) -> tuple[Track | None, Track | None]:
        """Look at one decoded frame (any size: scaled to the camera's resolution)."""
        self.frames += 1
        size = (self.camera.width, self.camera.height)
        found: list[list[Sighting]] = []
        for target in self.targets:
            sightings = []
            for blob in detect_blobs(image, target, size)[:4]:
                sighting = locate(blob, self.camera, pan, tilt)
                if sighting is not None:
                    sightings.append(sighting)
            found.append(sightings)
        self.sightings = (found[0], found[1])
        return (
            self.object.update(now, odom, found[0]),
            self.receptacle.update(now, odom, found[1]),
        )

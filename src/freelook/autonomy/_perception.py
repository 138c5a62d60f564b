"""The task's eyes: one camera frame in, the object's and the receptacle's tracks updated."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from freelook.autonomy._tracking import Track, Tracker
from freelook.autonomy._vision import CameraModel, ColorTarget, Sighting, detect_blobs, locate
from freelook.geometry import Pose

__all__ = ["BALANCE_FRAMES", "GREY_SATURATION", "HEIGHT_TOLERANCE", "Perception", "grey_gains"]

#: pixels this little saturated are taken for grey surfaces (floor, walls, ceiling, clutter)
#: by the white balance; a tint of ±15 % leaves a grey floor under 0.4
GREY_SATURATION = 0.4
#: the white balance is set from the task's first frames and then held (a webcam's
#: auto white balance locked once it has settled: a target filling the view later cannot
#: pull it)
BALANCE_FRAMES = 3

#: a sighting of the object's colour standing taller than the described object by more than
#: this share is something else (a blob loses its top to shade more often than it gains one,
#: so only the taller side is refused)
HEIGHT_TOLERANCE = 0.25


class Perception:
    """Colour blobs of the object and of the receptacle, placed on the floor and tracked.

    ``object_height``: the operator's description of the object's height (m), beside its
    colour; a blob of its colour seen taller than that by more than :data:`HEIGHT_TOLERANCE`
    is not taken for it (a look-alike of its hue is told apart by its size). None: colour
    alone."""

    def __init__(
        self,
        camera: CameraModel,
        object_color: ColorTarget,
        receptacle_color: ColorTarget,
        object_height: float | None = None,
    ) -> None:
        self.camera = camera
        self.targets = (object_color, receptacle_color)
        self.object_height = object_height
        self.object = Tracker()
        self.receptacle = Tracker()
        self.frames = 0
        self.too_tall = 0  # object-coloured sightings refused for their height
        #: grey-world white balance on the grey pixels of the first frames (the camera's own
        #: balance is fixed for white light; a warm or cold light shifts every hue)
        self.white_balance = True
        self._balance_sum = np.zeros(3)
        self._balance_count = 0
        #: every sighting of the newest frame (object's, receptacle's), robot frame
        self.sightings: tuple[list[Sighting], list[Sighting]] = ([], [])

    def _balanced(self, image: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
        """``image`` under the white balance: set (averaged) over the first
        :data:`BALANCE_FRAMES` frames from their grey pixels, then held."""
        if self.frames <= BALANCE_FRAMES:
            gains = grey_gains(image)
            if gains is not None:
                self._balance_sum += gains
                self._balance_count += 1
        if self._balance_count == 0:
            return image
        gains = self._balance_sum / self._balance_count
        levels = np.arange(256, dtype=np.float64)
        luts = np.stack([np.minimum(levels * g, 255.0).astype(np.uint8) for g in gains])
        out = np.empty_like(image)
        for c in range(3):
            out[..., c] = luts[c][image[..., c]]
        return out

    def update(
        self, now: float, image: npt.NDArray[np.uint8], odom: Pose, pan: float, tilt: float
    ) -> tuple[Track | None, Track | None]:
        """Look at one decoded frame (any size: scaled to the camera's resolution), white
        balanced (``white_balance``) before the colours are looked for."""
        self.frames += 1
        if self.white_balance:
            image = self._balanced(image)
        size = (self.camera.width, self.camera.height)
        found: list[list[Sighting]] = []
        for target in self.targets:
            sightings = []
            for blob in detect_blobs(image, target, size)[:4]:
                sighting = locate(blob, self.camera, pan, tilt)
                if sighting is not None:
                    sightings.append(sighting)
            found.append(sightings)
        if self.object_height is not None:
            tallest = self.object_height * (1.0 + HEIGHT_TOLERANCE)
            kept = [k for k in found[0] if k.height <= tallest]
            self.too_tall += len(found[0]) - len(kept)
            found[0] = kept
        self.sightings = (found[0], found[1])
        return (
            self.object.update(now, odom, found[0]),
            self.receptacle.update(now, odom, found[1]),
        )


def grey_gains(image: npt.NDArray[np.uint8]) -> npt.NDArray[np.float64] | None:
    """Per-channel gains (green 1) that make the image's grey pixels (saturation under
    :data:`GREY_SATURATION`, neither dark nor clipped) grey on average: the grey-world
    estimate of the light's tint, undone. None: too few grey pixels to tell."""
    rgb = image.reshape(-1, 3).astype(np.float64)
    high, low = rgb.max(axis=1), rgb.min(axis=1)
    grey = (high > 30.0) & (high < 250.0) & (high - low < GREY_SATURATION * high)
    if np.count_nonzero(grey) < rgb.shape[0] // 10:
        return None
    mean = rgb[grey].mean(axis=0)
    return np.asarray(mean[1] / mean)

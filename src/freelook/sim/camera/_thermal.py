"""A simulated thermal camera: the scene in false colour by temperature.

The first-person renderer draws colours, so a thermal view renders the scene once with every
object's colour replaced by a code of its temperature, (code, 255, 0): the renderer's shading
scales all three channels alike, so code = 255·r / g survives it, and blue = 0 marks an object
(walls, floor and ceiling always carry blue). Walls, floor and ceiling are at the world's
ambient temperature, a little textured by their brightness so the room stays readable; objects
without a temperature are at ambient too. Temperatures map onto an "ironbow" palette over
[``T_MIN``, ``T_MAX``] °C.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from freelook.maps import World

__all__ = ["AMBIENT", "T_MAX", "T_MIN", "ThermalCamera", "false_colour", "palette"]

AMBIENT = 20.0  # °C
T_MIN, T_MAX = 0.0, 80.0  # °C: the palette's ends
_ANCHORS = np.array(
    [  # position, r, g, b: black, indigo, purple, red, orange, yellow, white
        (0.00, 0, 0, 0),
        (0.15, 30, 0, 90),
        (0.35, 130, 0, 150),
        (0.55, 220, 40, 40),
        (0.75, 250, 140, 0),
        (0.90, 255, 220, 40),
        (1.00, 255, 255, 255),
    ],
    dtype=np.float64,
)


def palette() -> npt.NDArray[np.uint8]:
    """The 256-entry false-colour table (index 0 is ``T_MIN``, 255 is ``T_MAX``)."""
    x = np.linspace(0.0, 1.0, 256)
    channels = [np.interp(x, _ANCHORS[:, 0], _ANCHORS[:, c]) for c in (1, 2, 3)]
    return np.stack(channels, axis=1).round().astype(np.uint8)


_PALETTE = palette()


def _code(temperature: float) -> float:
    return float(np.clip((temperature - T_MIN) / (T_MAX - T_MIN), 0.0, 1.0) * 255.0)


def false_colour(coded: npt.NDArray[np.uint8], ambient: float = AMBIENT) -> npt.NDArray[np.uint8]:
    """A frame rendered with temperature-coded objects (H×W×3) in false colour (a new array)."""
    r = coded[..., 0].astype(np.float64)
    g = coded[..., 1].astype(np.float64)
    b = coded[..., 2]
    background = b > 0
    index = np.where(g > 0, 255.0 * r / np.maximum(g, 1.0), _code(ambient))
    luminance = coded.mean(axis=2) / 255.0
    room = _code(ambient) + (luminance - 0.5) * 12.0  # ± 2 °C of texture
    index = np.where(background, room, index)
    return _PALETTE[np.clip(index, 0, 255).astype(np.intp)]


class _Renders(Protocol):
    _objects: npt.NDArray[np.float64]

    @property
    def render(self) -> Callable[..., npt.NDArray[np.uint8]]: ...


class ThermalCamera:
    """Wraps a simulated camera (the pan-tilt ``Camera`` or a ``LinkCamera``) so that it sees
    temperatures: its object table's colours become temperature codes, in place (objects the
    simulator moves keep moving), and every frame comes out in false colour."""

    def __init__(self, camera: _Renders, world: World, ambient: float = AMBIENT) -> None:
        self.camera = camera
        self.ambient = ambient
        for row, obj in zip(camera._objects, world.objects, strict=True):
            t = obj.temperature if obj.temperature is not None else ambient
            row[8], row[9], row[10] = _code(t), 255.0, 0.0

    def render(self, *args: Any) -> npt.NDArray[np.uint8]:
        """The wrapped camera's frame for the same arguments, in false colour."""
        return false_colour(self.camera.render(*args), self.ambient)

    def temperature_at(self, frame: npt.NDArray[np.uint8], u: int, v: int) -> float:
        """The temperature (°C) a false-colour pixel stands for (nearest palette entry)."""
        distance = np.abs(_PALETTE.astype(np.int32) - frame[v, u].astype(np.int32)).sum(axis=1)
        return T_MIN + (T_MAX - T_MIN) * float(np.argmin(distance)) / 255.0

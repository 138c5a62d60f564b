"""Objects an arm can pick up: boxes in the world frame that stand on the floor, are carried
while held and fall straight down when let go."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from freelook.maps import World

__all__ = ["ArmObject", "objects_from_world"]

F64 = npt.NDArray[np.float64]


@dataclass(slots=True)
class ArmObject:
    """A box: centre (x, y, z) in the world frame, extents (m) along its own axes, yaw (rad)."""

    name: str
    centre: F64
    size: tuple[float, float, float]
    yaw: float = 0.0
    held: bool = False

    @property
    def width(self) -> float:
        """The narrowest horizontal extent: what a gripper has to open to."""
        return min(self.size[0], self.size[1])

    def drop(self) -> None:
        """Let go: the box falls onto the floor where it is."""
        self.held = False
        self.centre = np.array([self.centre[0], self.centre[1], self.size[2] / 2])


def objects_from_world(world: World) -> list[ArmObject]:
    """The world's box-shaped objects (the ``eod`` world's suspicious object), standing on the
    floor; cylinders such as a receptacle are places to drop things, not things to lift."""
    return [
        ArmObject(
            o.name,
            np.array([o.x, o.y, o.height / 2]),
            (o.size_x, o.size_y, o.height),
            o.yaw,
        )
        for o in world.objects
        if o.shape == "box"
    ]

"""How a world differs from the map a robot is given.

A robot's map file is a survey: on the day, furniture stands where the survey shows none,
people walk about, a door is closed, glass panes the laser sees through stand in the room, and
the survey itself sits a few centimetres off. :class:`MapDifferences` says which; the simulator
builds its world from the map's world and them, the robot keeps its map file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from freelook.maps._kept import remember
from freelook.maps._model import World, WorldObject

__all__ = ["MapDifferences", "lab_on_the_day"]


@dataclass(frozen=True, slots=True)
class MapDifferences:
    """Objects in the world and not on the map, glass, and where the map sits."""

    #: furniture, people, a closed door: solid to everything, missing from the map file
    unmapped: tuple[WorldObject, ...] = ()
    #: panes the laser sees through (it has no return from them); they stop the robot, the
    #: sonar hears them and the camera sees their frames; missing from the map file
    glass: tuple[WorldObject, ...] = ()
    #: (dx, dy), m: the map file's frame is this far from the world's (a survey's error)
    offset: tuple[float, float] = (0.0, 0.0)

    @property
    def none(self) -> bool:
        return not self.unmapped and not self.glass and self.offset == (0.0, 0.0)

    def world(self, mapped: World) -> World:
        """The world as it is: the mapped one with the unmapped objects and the glass."""
        if not self.unmapped and not self.glass:
            return mapped
        return _with_objects(mapped, self.unmapped + self.glass)

    def laser_world(self, mapped: World) -> World:
        """What the laser sees: the world without its glass."""
        if not self.unmapped:
            return mapped
        return _with_objects(mapped, self.unmapped)

    def robot_map(self, published: World) -> World:
        """The map file as the robot has it: moved by the survey's ``offset``."""
        if self.offset == (0.0, 0.0):
            return published
        return _derived(published, self.offset, self._moved)

    def _moved(self, published: World) -> World:
        dx, dy = self.offset
        sx, sy, st = published.start
        return dataclasses.replace(
            published,
            origin=(published.origin[0] + dx, published.origin[1] + dy),
            start=(sx + dx, sy + dy, st),
            places=tuple(dataclasses.replace(p, x=p.x + dx, y=p.y + dy) for p in published.places),
            keep_out=tuple(
                dataclasses.replace(k, vertices=tuple((x + dx, y + dy) for x, y in k.vertices))
                for k in published.keep_out
            ),
            objects=tuple(
                dataclasses.replace(o, x=o.x + dx, y=o.y + dy) for o in published.objects
            ),
            _obstacles=None,
        )

    def describe(self) -> str:
        """One line for an experiment's conditions."""
        if self.none:
            return "map = world"
        parts = []
        if self.unmapped:
            parts.append("not on the map: " + ", ".join(o.name for o in self.unmapped))
        if self.glass:
            parts.append("glass: " + ", ".join(o.name for o in self.glass))
        if self.offset != (0.0, 0.0):
            parts.append(f"map {100 * self.offset[0]:+.0f}, {100 * self.offset[1]:+.0f} cm off")
        return "; ".join(parts)


def _with_objects(world: World, extra: tuple[WorldObject, ...]) -> World:
    return _derived(
        world, extra, lambda w: dataclasses.replace(w, objects=w.objects + extra, _obstacles=None)
    )


#: worlds made from a world and a difference, by the world's identity and the difference: a
#: run of trials in one lab rasterises its grid once (each entry holds the world it was made
#: from, so that identity is not reused while it is kept)
_DERIVED: dict[tuple[int, Hashable], tuple[World, World]] = {}


def _derived(world: World, difference: Hashable, make: Callable[[World], World]) -> World:
    """``make(world)``, made once for this world and ``difference`` (worlds are frozen)."""
    key = (id(world), difference)
    kept = _DERIVED.get(key)
    if kept is not None and kept[0] is world:
        return kept[1]
    made = make(world)
    remember(_DERIVED, key, (world, made))
    return made


def _box(
    name: str,
    x: float,
    y: float,
    sx: float,
    sy: float,
    color: tuple[int, int, int],
    height: float = 0.8,
) -> WorldObject:
    return WorldObject(name, "box", x, y, height, color, size_x=sx, size_y=sy)


def lab_on_the_day() -> MapDifferences:
    """The lab (``lab``) as the experiments find it, against its map file: a chair and a
    cabinet moved into the hall, a person standing in the room, the corridor's hall door
    closed, a glass partition in the hall, and a survey 3 cm and 2 cm off."""
    return MapDifferences(
        unmapped=(
            _box("chair", 7.5, 9.5, 0.5, 0.5, (90, 60, 40)),
            _box("cabinet", 9.5, 3.5, 0.6, 0.4, (120, 120, 120), 1.2),
            WorldObject("person", "cylinder", 13.5, 4.5, 1.75, (200, 160, 140), radius=0.25),
            _box("closed door", 3.0, 12.0, 2.0, 0.1, (150, 100, 60), 2.0),
        ),
        glass=(_box("glass partition", 8.0, 11.0, 2.0, 0.05, (200, 220, 230), 2.0),),
        offset=(0.03, -0.02),
    )

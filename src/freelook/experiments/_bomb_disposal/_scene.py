"""The bomb-disposal scene drawn per seed in the ``eod`` room: the robot's start, the object
and the receptacle at their places, a distractor and grey clutter off the robot's paths, and
the light the camera sees."""

from __future__ import annotations

import colorsys
import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from freelook.arm import load_arm
from freelook.config import load_robot
from freelook.maps import World, WorldObject, load_world

__all__ = [
    "INSIDE_OFFSET",
    "NOISE",
    "ROOM",
    "WARMTH",
    "EodScenario",
    "along",
    "eod_scenario",
    "in_room",
    "segment_distance",
]

Point = tuple[float, float]

PALETTE = (0.0, 55.0, 125.0, 215.0, 285.0)  # hues far enough apart for a ±12° detector
ROOM = (1.4, 8.6, 1.4, 6.6)  # where things may stand in the eod room (walls 1.4 m away)
WARMTH = 0.15  # the light's red gain 1 ± this, its blue 1 ∓ this (about 3000–9000 K at 5000 K)
NOISE = (2.0, 6.0)  # the sensor noise's σ, 8-bit levels (a webcam's, lit to dim)
INSIDE_SHARE = 0.25  # scenes whose distractor lies inside the detector's hue window
INSIDE_OFFSET = (3.0, 10.0)  # its hue that far from the object's (the window is ±12°)


@dataclass(frozen=True)
class EodScenario:
    seed: int
    robot: str
    world: World
    start: tuple[float, float, float]
    object_hue: float
    receptacle_hue: float
    distractor_hue: float
    lighting: float
    tint: tuple[float, float, float] = (1.0, 1.0, 1.0)  # the light's gain per channel, RGB
    noise: float = 0.0  # the camera's sensor noise, σ in 8-bit levels
    distractor_inside: bool = False  # the distractor's hue inside the detector's window


@dataclass(frozen=True)
class _Places:
    """Where the robot starts (and its heading), the object and the receptacle stand."""

    start: Point
    heading: float
    object: Point
    receptacle: Point


@dataclass(frozen=True)
class _Hues:
    object: float
    receptacle: float
    distractor: float


@dataclass(frozen=True)
class _Light:
    """The light and the sensor, drawn from a stream of their own (so the places stay what
    they were for a seed): brightness, warmth (+ warm, tungsten; − cold, shade), noise, and
    whether the distractor takes a hue inside the detector's window (and which)."""

    lighting: float
    warmth: float
    noise: float
    inside: bool
    distractor_hue: float


def _rgb(hue: float, saturation: float = 0.85, value: float = 0.85) -> tuple[int, int, int]:
    r, g, b = colorsys.hsv_to_rgb(hue / 360.0, saturation, value)
    return (round(r * 255), round(g * 255), round(b * 255))


def segment_distance(p: Point, a: Point, b: Point) -> float:
    """The distance from ``p`` to the segment from ``a`` to ``b``."""
    ax, ay = a
    dx, dy = b[0] - ax, b[1] - ay
    t = max(0.0, min(1.0, ((p[0] - ax) * dx + (p[1] - ay) * dy) / max(dx * dx + dy * dy, 1e-12)))
    return math.hypot(p[0] - ax - t * dx, p[1] - ay - t * dy)


def in_room(p: Point) -> bool:
    """Whether ``p`` is where things may stand: in :data:`ROOM`, clear of the partition."""
    x0, x1, y0, y1 = ROOM
    # the partition wall from (4, 6) to (4, 8)
    return x0 <= p[0] <= x1 and y0 <= p[1] <= y1 and not (2.6 <= p[0] <= 5.4 and p[1] >= 4.8)


def along(a: Point, b: Point, k: float) -> Point:
    """The point ``k`` of the way from ``a`` to ``b``."""
    return (a[0] + k * (b[0] - a[0]), a[1] + k * (b[1] - a[1]))


def _in_room_all_along(ways: tuple[tuple[Point, Point], ...]) -> bool:
    return all(in_room(along(a, b, k / 20)) for a, b in ways for k in range(21))


def _room_point(rng: np.random.Generator) -> Point:
    return (float(rng.uniform(*ROOM[:2])), float(rng.uniform(*ROOM[2:])))


def _draw_places(rng: np.random.Generator, clear: float) -> _Places:
    """The start, the object 2.6–4.2 m from it and the receptacle 2.8–4.2 m from the object,
    drawn until the ways there are in the open and the receptacle is off the way to the
    object."""
    while True:
        start = _room_point(rng)
        heading = float(rng.uniform(-math.pi, math.pi))
        a = float(rng.uniform(-math.pi, math.pi))
        d = float(rng.uniform(2.6, 4.2))
        obj = (start[0] + d * math.cos(a), start[1] + d * math.sin(a))
        a2 = float(rng.uniform(-math.pi, math.pi))
        d2 = float(rng.uniform(2.8, 4.2))
        rec = (obj[0] + d2 * math.cos(a2), obj[1] + d2 * math.sin(a2))
        if (
            _in_room_all_along(((start, obj), (obj, rec)))
            and math.dist(start, rec) > 2.5
            and segment_distance(rec, start, obj) > clear + 0.5
        ):
            return _Places(start, heading, obj, rec)


def _draw_hues(rng: np.random.Generator) -> _Hues:
    """The object's and the receptacle's hues from the palette, at least 60° apart, and a
    distractor's 28–38° off the object's (outside the detector's ±12°)."""
    hues = list(PALETTE)
    object_hue = hues.pop(int(rng.integers(len(hues))))
    far = [h for h in hues if abs((h - object_hue + 180) % 360 - 180) >= 60]
    receptacle_hue = far[int(rng.integers(len(far)))]
    distractor_hue = (object_hue + float(rng.choice((-1, 1))) * float(rng.uniform(28, 38))) % 360
    return _Hues(object_hue, receptacle_hue, distractor_hue)


def _targets(
    rng: np.random.Generator, places: _Places, hues: _Hues, big: bool, max_opening: float
) -> list[WorldObject]:
    """The object (a box the gripper can hold) and the receptacle (a cylinder)."""
    obj, rec = places.object, places.receptacle
    width = float(rng.uniform(0.5, 0.75)) * max_opening
    length = width * float(rng.uniform(1.0, 1.3))
    height = float(rng.uniform(0.18, 0.24)) if big else float(rng.uniform(0.13, 0.18))
    radius = float(rng.uniform(0.25, 0.35)) if big else float(rng.uniform(0.2, 0.28))
    return [
        WorldObject(
            "suspicious object", "box", obj[0], obj[1], height, _rgb(hues.object),
            size_x=length, size_y=width, yaw=float(rng.uniform(-math.pi, math.pi)), movable=True,
        ),
        WorldObject(
            "receptacle", "cylinder", rec[0], rec[1], float(rng.uniform(0.4, 0.55)) if big
            else float(rng.uniform(0.3, 0.4)), _rgb(hues.receptacle), radius=radius,
        ),
    ]  # fmt: skip


def _scatter(
    rng: np.random.Generator,
    places: _Places,
    distractor_hue: float,
    big: bool,
    clear: float,
    objects: list[WorldObject],
) -> None:
    """Adds the distractor and 3–5 pieces of grey clutter to ``objects``, each at a free place
    ``clear`` off the robot's paths (a place not found in 200 draws is left out)."""
    start, obj, rec = places.start, places.object, places.receptacle
    placed = [start, obj, rec]
    # where the robot grasps (about its reach short of the object) to the receptacle, too
    reach = 1.7 if big else 1.1
    back = math.dist(start, obj)
    spot = (
        obj[0] + (start[0] - obj[0]) * reach / back,
        obj[1] + (start[1] - obj[1]) * reach / back,
    )
    paths = [(start, obj), (obj, rec), (spot, rec)]
    wanted = [("distractor", distractor_hue)] + [("clutter", -1.0)] * int(rng.integers(3, 6))
    for name, hue in wanted:
        for _ in range(200):
            p = _room_point(rng)
            if not in_room(p) or min(math.dist(p, q) for q in placed) < clear + 0.3:
                continue
            if big and math.dist(p, start) < 2.3:  # clear of the arm's ready pose at the start
                continue
            if min(segment_distance(p, s, e) for s, e in paths) < clear:
                continue
            if name == "distractor":
                color = _rgb(hue)
            else:  # grey-brown, barely saturated: not any target's colour
                color = _rgb(float(rng.uniform(0, 360)), 0.12, float(rng.uniform(0.35, 0.7)))
            size = float(rng.uniform(0.25, 0.5))
            objects.append(
                WorldObject(
                    f"{name} {len(objects)}", "box", p[0], p[1], float(rng.uniform(0.25, 0.6)),
                    color, size_x=size, size_y=size * float(rng.uniform(0.6, 1.0)),
                    yaw=float(rng.uniform(-math.pi, math.pi)),
                )
            )  # fmt: skip
            placed.append(p)
            break


def _draw_light(
    seed: int, rng: np.random.Generator, hues: _Hues, placed_distractor: bool
) -> _Light:
    """The brightness from the scene's stream, the rest from the light's own."""
    lighting = float(rng.uniform(0.45, 1.2))
    light = np.random.default_rng([seed, 2003])
    warmth = float(light.uniform(-WARMTH, WARMTH))
    noise = float(light.uniform(*NOISE))
    inside = bool(light.random() < INSIDE_SHARE) and placed_distractor
    offset = float(light.choice((-1, 1))) * float(light.uniform(*INSIDE_OFFSET))
    distractor_hue = (hues.object + offset) % 360 if inside else hues.distractor
    return _Light(lighting, warmth, noise, inside, distractor_hue)


def eod_scenario(seed: int, robot: str = "taros") -> EodScenario:
    """The eod room with this seed's start, object, receptacle, distractor, clutter, light."""
    config = load_robot(robot)
    rng = np.random.default_rng([seed, 2002])
    base = load_world("eod")
    assert config.arm is not None
    model = load_arm(config.arm.urdf, config.arm.srdf)
    max_opening = 2 * float(model.upper[model.gripper_joints[0]])
    big = config.footprint.length > 1.2
    clear = 1.5 if big else 1.0  # clutter kept this far off the robot's paths
    places = _draw_places(rng, clear)
    hues = _draw_hues(rng)
    objects = _targets(rng, places, hues, big, max_opening)
    _scatter(rng, places, hues.distractor, big, clear, objects)
    placed_distractor = any(o.name.startswith("distractor") for o in objects)
    light = _draw_light(seed, rng, hues, placed_distractor)
    if light.inside:
        objects = [
            dataclasses.replace(o, color=_rgb(light.distractor_hue))
            if o.name.startswith("distractor")
            else o
            for o in objects
        ]
    world = dataclasses.replace(base, objects=tuple(objects), source="", _obstacles=None)
    return EodScenario(
        seed,
        robot,
        world,
        (places.start[0], places.start[1], places.heading),
        hues.object,
        hues.receptacle,
        light.distractor_hue,
        light.lighting,
        (1.0 + light.warmth, 1.0, 1.0 - light.warmth),
        light.noise,
        light.inside,
    )

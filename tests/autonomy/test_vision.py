"""Colour-blob vision on the simulator's frames, JPEG-coded as the link sends them: the
object found and placed on the floor, a look-alike distractor ignored, hostile input refused."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import simplejpeg
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from freelook.autonomy import (
    CameraModel,
    ColorTarget,
    Perception,
    Sighting,
    Tracker,
    color_mask,
    detect_blobs,
    locate,
)
from freelook.autonomy._vision import _mask
from freelook.config import load_robot
from freelook.geometry import Pose
from freelook.maps import WorldObject, load_world
from freelook.sim.camera import Camera

RED = ColorTarget(0.0)


def _scene(
    objects: list[WorldObject], brightness: float = 1.0, tilt: float = -0.2
) -> tuple[np.ndarray, CameraModel]:
    config = load_robot("taros")
    assert config.pan_tilt is not None
    world = dataclasses.replace(load_world("eod"), objects=tuple(objects), _obstacles=None)
    camera = Camera(config.camera, config.pan_tilt, world)
    camera.brightness = brightness
    frame = camera.render(2.0, 2.0, 0.0, 0.0, tilt)
    jpeg = simplejpeg.encode_jpeg(frame, quality=config.camera.jpeg_quality, colorspace="RGB")
    decoded = simplejpeg.decode_jpeg(jpeg, colorspace="RGB", min_width=320, min_height=240)
    pt = config.pan_tilt
    model = CameraModel(
        config.camera.width, config.camera.height, math.radians(config.camera.fov_deg),
        pt.mount_forward, pt.mount_left, pt.mount_height,
    )  # fmt: skip
    return decoded, model


def _box(x: float, y: float, color: tuple[int, int, int], name: str = "box") -> WorldObject:
    return WorldObject(name, "box", x, y, 0.22, color, size_x=0.22, size_y=0.22)


@pytest.mark.parametrize("brightness", [0.45, 1.0, 1.2])
def test_a_box_is_placed_on_the_floor_where_it_stands(brightness: float) -> None:
    image, model = _scene([_box(5.0, 2.4, (216, 32, 32))], brightness)
    blobs = detect_blobs(image, RED, (model.width, model.height))
    assert len(blobs) == 1
    sighting = locate(blobs[0], model, 0.0, -0.2)
    assert sighting is not None
    # the robot stands at (2, 2) facing +x: the box is 3.0 m ahead and 0.4 m to the left
    assert math.hypot(sighting.x - 3.0, sighting.y - 0.4) < 0.08
    assert sighting.height == pytest.approx(0.22, abs=0.03)


def test_a_distractor_of_a_near_hue_is_not_taken_for_the_object() -> None:
    orange = (216, 105, 32)  # hue 25°, the object's red ± 12° is looked for
    image, model = _scene([_box(5.0, 1.4, orange, "distractor"), _box(5.0, 2.6, (216, 32, 32))])
    blobs = detect_blobs(image, RED, (model.width, model.height))
    assert len(blobs) == 1
    sighting = locate(blobs[0], model, 0.0, -0.2)
    assert sighting is not None
    assert sighting.y > 0.3


def test_nothing_of_the_colour_nothing_found() -> None:
    image, model = _scene([_box(5.0, 2.0, (32, 180, 60))])
    assert detect_blobs(image, RED, (model.width, model.height)) == []


@settings(max_examples=30, deadline=None)
@given(arrays(np.uint8, (12, 9, 3)), st.floats(0, 359), st.floats(1, 40))
def test_the_compiled_mask_is_the_numpy_one(image: np.ndarray, hue: float, tol: float) -> None:
    target = ColorTarget(hue, tol, 0.3, 0.1, 1)
    assert np.array_equal(_mask(image, target), color_mask(image, target))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"hue": math.nan}, "hue is nan"),
        ({"hue": 0.0, "hue_tolerance": 0.0}, "hue tolerance"),
        ({"hue": 0.0, "min_area": 0}, "blob area"),
    ],
)
def test_a_colour_target_that_makes_no_sense_is_refused(
    kwargs: dict[str, float], match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        ColorTarget(**kwargs)


@pytest.mark.parametrize(
    "image",
    [np.zeros((10, 10), np.uint8), np.zeros((10, 10, 4), np.uint8), np.zeros((4, 4, 3))],
)
def test_an_image_that_is_not_rgb_bytes_is_refused(image: np.ndarray) -> None:
    with pytest.raises(ValueError, match="RGB uint8"):
        detect_blobs(image, RED)


def test_a_target_is_believed_after_three_agreeing_frames_and_lost_after_two_seconds() -> None:
    image, model = _scene([_box(5.0, 2.4, (216, 32, 32))])
    perception = Perception(model, RED, ColorTarget(125.0))
    odom = Pose(2.0, 2.0, 0.0)
    tracks = [perception.update(0.2 * k, image, odom, 0.0, -0.2)[0] for k in range(3)]
    assert tracks[0] is None
    assert tracks[1] is None
    assert tracks[2] is not None
    assert math.hypot(tracks[2].x - 5.0, tracks[2].y - 2.4) < 0.1
    empty = np.zeros_like(image)
    assert perception.update(1.0, empty, odom, 0.0, -0.2)[0] is not None
    assert perception.update(2.7, empty, odom, 0.0, -0.2)[0] is None


def test_a_sighting_far_from_the_track_is_not_averaged_in() -> None:
    image, model = _scene([_box(5.0, 2.4, (216, 32, 32))])
    tracker = Tracker()
    perception = Perception(model, RED, ColorTarget(125.0))
    perception.object = tracker
    for k in range(3):
        perception.update(0.2 * k, image, Pose(2.0, 2.0, 0.0), 0.0, -0.2)
    assert tracker.track is not None
    before = tracker.track
    # the same frame seen from 1 m further on: the box appears 1 m beyond the track
    perception.update(0.8, image, Pose(3.0, 2.0, 0.0), 0.0, -0.2)
    assert tracker.track.x == before.x
    assert tracker.rejected == 1


def test_a_track_keeps_the_tallest_sighting_apart_from_its_smoothed_height() -> None:
    """A rim lost to shade in later frames lowers the smoothed height, never the tallest."""
    tracker = Tracker(confirm=1, smoothing=0.3)
    odom = Pose(0.0, 0.0, 0.0)
    for k, height in enumerate((0.55, 0.3, 0.3, 0.3, 0.3)):
        tracker.update(0.2 * k, odom, [Sighting(2.0, 0.0, 2.0, 0.0, 0.4, height, 900)])
    assert tracker.track is not None
    assert tracker.track.tallest == 0.55
    assert tracker.track.height < 0.4

"""Separating axes against python-fcl on the same boxes, and forward kinematics against yourdfpy.

``FREELOOK_FCL_EXAMPLES`` raises the number of random pairs each property tries (CI runs a few
thousand in all; ``FREELOOK_FCL_EXAMPLES=34000`` makes it over 10⁵).
"""

from __future__ import annotations

import math
import os

import fcl
import numpy as np
import pytest
import yourdfpy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freelook.arm import (
    box_poses,
    link_transforms,
    load_arm,
    obb_overlap,
    obb_separation,
    pair_separations,
)
from freelook.config import load_robot

EXAMPLES = int(os.environ.get("FREELOOK_FCL_EXAMPLES", "1200"))
SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
#: |separation| below this is a tie no two floating-point implementations agree on
TIE = 1e-9

unit = st.floats(-1.0, 1.0, allow_nan=False)
quaternions = st.tuples(unit, unit, unit, unit).filter(lambda v: math.hypot(*v) > 0.1)
halves = st.tuples(*[st.floats(0.01, 1.0)] * 3)
centres = st.tuples(*[st.floats(-2.0, 2.0)] * 3)


def rotation(q: tuple[float, float, float, float]) -> np.ndarray:
    w, x, y, z = np.asarray(q) / math.hypot(*q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def axis_rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    k = axis / np.linalg.norm(axis)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


def fcl_collide(ca, ra, ha, cb, rb, hb) -> bool:  # type: ignore[no-untyped-def]
    a = fcl.CollisionObject(fcl.Box(*(2 * np.asarray(ha))), fcl.Transform(ra, ca))
    b = fcl.CollisionObject(fcl.Box(*(2 * np.asarray(hb))), fcl.Transform(rb, cb))
    return bool(fcl.collide(a, b, fcl.CollisionRequest(), fcl.CollisionResult()))


def fcl_distance(ca, ra, ha, cb, rb, hb) -> float:  # type: ignore[no-untyped-def]
    a = fcl.CollisionObject(fcl.Box(*(2 * np.asarray(ha))), fcl.Transform(ra, ca))
    b = fcl.CollisionObject(fcl.Box(*(2 * np.asarray(hb))), fcl.Transform(rb, cb))
    return float(fcl.distance(a, b, fcl.DistanceRequest(), fcl.DistanceResult()))


def sat(ca, ra, ha, cb, rb, hb) -> float:  # type: ignore[no-untyped-def]
    arrays = [np.asarray(x, dtype=float)[None] for x in (ca, ra, ha, cb, rb, hb)]
    return float(obb_separation(*arrays)[0])


def agree(ca, ra, ha, cb, rb, hb) -> float:  # type: ignore[no-untyped-def]
    s = sat(ca, ra, ha, cb, rb, hb)
    if abs(s) > TIE:
        assert (s <= 0) == fcl_collide(ca, ra, ha, cb, rb, hb), s
    return s


@SETTINGS
@given(centres, quaternions, halves, centres, quaternions, halves)
def test_random_pairs_agree_with_fcl(ca, qa, ha, cb, qb, hb) -> None:  # type: ignore[no-untyped-def]
    ra, rb = rotation(qa), rotation(qb)
    s = agree(np.array(ca), ra, ha, np.array(cb), rb, hb)
    if s > 1e-6:  # apart: the separation never claims more room than there is
        assert s <= fcl_distance(np.array(ca), ra, ha, np.array(cb), rb, hb) + 1e-6


@SETTINGS
@given(
    centres,
    quaternions,
    halves,
    halves,
    st.integers(0, 5),
    st.floats(-math.pi, math.pi),
    st.tuples(st.floats(-0.9, 0.9), st.floats(-0.9, 0.9)),
    st.sampled_from([-1e-6, -1e-8, 1e-8, 1e-6, 1e-3]),
)
def test_touching_faces_agree_with_fcl(ca, qa, ha, hb, face, spin, slide, gap) -> None:  # type: ignore[no-untyped-def]
    """B lies on one of A's faces (turned about the face normal, slid along it), ``gap`` off."""
    ra = rotation(qa)
    axis, sign = face // 2, 1 if face % 2 == 0 else -1
    normal = sign * ra[:, axis]
    rb = axis_rotation(normal, spin) @ ra
    # B's extent along the normal: its own axes are A's turned about the normal
    depth = hb[axis]
    others = [i for i in range(3) if i != axis]
    along = sum(s * ha[i] * ra[:, i] for s, i in zip(slide, others, strict=True))
    cb = np.array(ca) + normal * (ha[axis] + depth + gap) + along
    s = agree(np.array(ca), ra, ha, cb, rb, hb)
    assert s == pytest.approx(gap, abs=1e-9 + 1e-9 * max(*ha, *hb))


@SETTINGS
@given(
    centres,
    quaternions,
    halves,
    halves,
    st.tuples(unit, unit, unit).filter(lambda v: math.hypot(*v) > 0.1),
    st.floats(1e-12, 1e-3),
    st.tuples(*[st.floats(-1.0, 1.0)] * 3),
)
def test_near_parallel_boxes_agree_with_fcl(ca, qa, ha, hb, tilt_axis, tilt, offset) -> None:  # type: ignore[no-untyped-def]
    """B turned by at most a milliradian from A, placed about where they would touch."""
    ra = rotation(qa)
    rb = axis_rotation(np.array(tilt_axis), tilt) @ ra
    reach = np.array(ha) + np.array(hb)
    cb = np.array(ca) + ra @ (np.array(offset) * reach * 1.05)
    agree(np.array(ca), ra, ha, cb, rb, hb)


def test_identical_boxes_intersect_and_far_boxes_do_not() -> None:
    eye = np.eye(3)[None]
    half = np.array([[0.1, 0.2, 0.3]])
    zero = np.zeros((1, 3))
    assert obb_overlap(zero, eye, half, zero, eye, half).all()
    far = np.array([[1.0, 0.0, 0.0]])
    assert obb_separation(zero, eye, half, far, eye, half)[0] == pytest.approx(0.8)


@pytest.mark.parametrize("name", ["taros", "m2p2"])
def test_forward_kinematics_agrees_with_yourdfpy(name: str) -> None:
    arm = load_robot(name).arm
    assert arm is not None
    model = load_arm(arm.urdf, arm.srdf)
    urdf = yourdfpy.URDF.load(str(arm.urdf))
    rng = np.random.default_rng(7)
    q = rng.uniform(model.lower, model.upper, (30, model.n_joints))
    frames = link_transforms(model, q)
    for k in range(len(q)):
        urdf.update_cfg(dict(zip(model.joint_names, q[k], strict=True)))
        for i, link in enumerate(model.link_names):
            expected = urdf.get_transform(link, model.link_names[0])
            np.testing.assert_allclose(frames[k, i], expected, atol=1e-12)


def test_box_pairs_of_the_model_agree_with_fcl() -> None:
    """Every checked pair of the TAROS model in random poses, box by box against fcl."""
    arm = load_robot("taros").arm
    assert arm is not None
    model = load_arm(arm.urdf, arm.srdf)
    rng = np.random.default_rng(11)
    q = rng.uniform(model.lower, model.upper, (40, model.n_joints))
    centres_, rotations = box_poses(model, q)
    seps = pair_separations(model, q)
    hits = 0
    for k in range(len(q)):
        for p, (a, b) in enumerate(zip(model.pair_a, model.pair_b, strict=True)):
            args = (
                centres_[k, a], rotations[k, a], model.half_extents[a],
                centres_[k, b], rotations[k, b], model.half_extents[b],
            )  # fmt: skip
            assert seps[k, p] == pytest.approx(sat(*args), abs=1e-12)
            if abs(seps[k, p]) > TIE:
                assert (seps[k, p] <= 0) == fcl_collide(*args)
            hits += seps[k, p] <= 0
    assert hits > 0  # random poses do reach into the body: the comparison covers both answers

"""Benchmarks of the arm: one anti-collision check against python-fcl on the same boxes, and
reach planning against the damped-least-squares baseline."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from freelook.arm._guard import ArmGuard, ArmPhase
from freelook.arm._kinematics import box_poses
from freelook.arm._model import ArmModel
from freelook.arm._planner import GradientPlanner, ReachGoal, dls_ik
from freelook.arm._sat import pair_separations
from freelook.arm._urdf import load_arm
from freelook.bench import Case, benchmark

F64 = npt.NDArray[np.float64]


def _load(robot: str) -> tuple[ArmModel, ArmGuard]:
    from freelook.config import load_robot

    config = load_robot(robot).arm
    assert config is not None
    model = load_arm(config.urdf, config.srdf)
    return model, ArmGuard.from_config(model, config)


def _fcl_check(model: ArmModel, horizons: F64) -> Callable[[F64, F64], int] | None:
    """python-fcl doing the same work: the same boxes at the same extrapolated poses, every
    checked pair collided; None when python-fcl is not installed."""
    try:
        import fcl
    except ImportError:
        return None
    objects = [fcl.CollisionObject(fcl.Box(*(2 * h)), fcl.Transform()) for h in model.half_extents]
    pairs = list(zip(model.pair_a.tolist(), model.pair_b.tolist(), strict=True))
    request = fcl.CollisionRequest()

    def check(q: F64, v: F64) -> int:
        poses = q[None, :] + horizons[:, None] * v[None, :]
        centres, rotations = box_poses(model, poses)
        hits = 0
        for k in range(len(horizons)):
            for i, obj in enumerate(objects):
                obj.setTransform(fcl.Transform(rotations[k, i], centres[k, i]))
            for a, b in pairs:
                hits += fcl.collide(objects[a], objects[b], request, fcl.CollisionResult())
        return hits

    return check


def _check_case(robot: str) -> Case:
    model, guard = _load(robot)
    # a jog from the ready pose toward a pose where boxes meet, until the check acts: some
    # pairs in a phase, as when it matters
    rng = np.random.default_rng(4)
    poses = rng.uniform(model.lower, model.upper, (200, model.n_joints))
    target = poses[(pair_separations(model, poses) <= 0).any(axis=1)][0]
    q = model.ready.copy()
    v = np.zeros(model.n_joints)
    for _ in range(1000):
        arm = model.arm_joints
        v[:] = 0.0
        v[arm] = (target - q)[arm] / np.max(np.abs(target - q)[arm] / model.max_velocity[arm])
        d = guard.check(q, v, 0.0)
        if d.phase != ArmPhase.CLEAR:
            break
        q = model.clip(q + d.velocities * 0.01)
    decision = guard.check(q, v, 0.0)
    horizons = np.array([r.horizon for r in guard.rules])
    baseline = _fcl_check(model, horizons)

    def run() -> object:
        return guard.check(q, v, 0.0)

    def extra() -> dict[str, float]:
        return {
            "pairs": float(model.n_pairs),
            "boxes": float(model.n_boxes),
            "slow_pairs": float(len(decision.slow_pairs)),
            "stop_pairs": float(len(decision.stop_pairs)),
        }

    return Case(
        run=run,
        baseline=None if baseline is None else (lambda: baseline(q, v)),
        target_s=50e-6,
        unit="check",
        extra=extra,
    )


@benchmark("arm.check_taros")
def check_taros() -> Case:
    """One anti-collision check of TAROS (26 boxes, every checked pair, both phases) with limits
    and the phase decision, vs python-fcl colliding the same pairs at the same poses."""
    return _check_case("taros")


@benchmark("arm.check_m2p2")
def check_m2p2() -> Case:
    """The same for M2P2."""
    return _check_case("m2p2")


def reach_goals(model: ArmModel) -> list[ReachGoal]:
    """Grasp points of an object on the floor in the eod world (its centre 0.15 m up, the box
    0.3 m tall) where the robot may have stopped in front of it, fingers pointing down."""
    return [
        ReachGoal((x, y, 0.15), (0.0, 0.0, -1.0))
        for x, y in itertools.product((1.2, 1.4, 1.6, 1.8), (-0.5, 0.0, 0.5))
    ]


@benchmark("arm.plan_reach_taros")
def plan_reach_taros() -> Case:
    """Seed 002's gradient descent from the ready pose to floor grasp points, vs DLS IK."""
    model, _ = _load("taros")
    planner = GradientPlanner(model)
    goals = reach_goals(model)
    start = model.ready
    cycle = itertools.cycle(goals)
    cycle_dls = itertools.cycle(goals)
    plans = [planner.plan(start, g) for g in goals]
    baselines = [dls_ik(model, start, g) for g in goals]

    def clear(poses: F64) -> bool:
        return bool((pair_separations(model, poses) > 0).all())

    def extra() -> dict[str, float]:
        return {
            "goals": float(len(goals)),
            "reached": sum(p.reached and clear(p.poses) for p in plans) / len(goals),
            "dls_reached": sum(p.reached and clear(p.poses) for p in baselines) / len(goals),
            "median_error_mm": float(np.median([p.error for p in plans]) * 1000),
        }

    return Case(
        run=lambda: planner.plan(start, next(cycle)),
        baseline=lambda: dls_ik(model, start, next(cycle_dls)),
        target_s=50e-3,
        unit="plan",
        extra=extra,
    )

"""Anti-collision: the arm slows, stops short of the body, and can always be jogged back out;
limits and bad commands; the planner's reach plans run through the check."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freelook.arm import (
    ArmGuard,
    ArmModel,
    ArmPhase,
    GradientPlanner,
    PlanFollower,
    ReachGoal,
    dls_ik,
    load_arm,
    pair_separations,
    tool_pose,
)
from freelook.config import load_robot

CFG = load_robot("taros").arm
assert CFG is not None
MODEL = load_arm(CFG.urdf, CFG.srdf)
DT = 0.01


def guard(model: ArmModel = MODEL) -> ArmGuard:
    return ArmGuard.from_config(model, CFG)  # type: ignore[arg-type]


def jog(
    g: ArmGuard, q: np.ndarray, command: np.ndarray, seconds: float, tau: float = 0.05
) -> tuple[np.ndarray, list[ArmPhase], float]:
    """Run the check and a first-order-lag arm for ``seconds``; returns the last pose, the
    phases seen and the smallest separation of any checked pair (unpadded) on the way."""
    qd = np.zeros_like(q)
    phases = []
    worst = math.inf
    for k in range(round(seconds / DT)):
        d = g.check(q, command, k * DT)
        phases.append(d.phase)
        qd += (d.velocities - qd) * (1 - math.exp(-DT / tau))
        q = g.model.clip(q + qd * DT)
        worst = min(worst, float(pair_separations(g.model, q).min()))
    return q, phases, worst


def test_shoulder_down_onto_the_toolbox_slows_then_stops_short() -> None:
    g = guard()
    down = np.zeros(MODEL.n_joints)
    down[1] = -10.0  # far beyond the limit: held to 45 °/s
    q, phases, worst = jog(g, MODEL.home(), down, 3.0)
    assert ArmPhase.SLOW in phases
    assert phases[-1] == ArmPhase.STOP
    assert phases.index(ArmPhase.SLOW) < phases.index(ArmPhase.STOP)
    assert worst > 0.0
    d = g.check(q, down, 3.0)
    assert ("toolbox", "upper_arm_actuator") in d.stop_pairs
    assert not d.velocities.any()
    # back out: the reverse jog moves the pair apart, so it passes in full
    out = g.check(q, -down, 3.0)
    assert out.phase == ArmPhase.CLEAR
    assert out.velocities[1] == pytest.approx(MODEL.max_velocity[1])
    q2, _, _ = jog(g, q, -down, 0.5)
    assert q2[1] > q[1] + 0.1


def test_folding_the_elbow_onto_the_upper_arm_stops_short() -> None:
    g = guard()
    fold = np.zeros(MODEL.n_joints)
    fold[2] = 1.0
    q, phases, worst = jog(g, MODEL.home(), fold, 6.0)
    assert phases[-1] == ArmPhase.STOP
    assert worst > 0.0
    assert q[2] < MODEL.upper[2] - 0.1  # stopped by a box pair, not by the joint limit


def test_without_the_check_the_same_jogs_collide() -> None:
    """The control: the jogs above do reach into the body when nothing stops them."""
    for joint, speed in ((1, -1.0), (2, 1.0)):
        command = np.zeros(MODEL.n_joints)
        command[joint] = speed
        q = MODEL.home()
        for _ in range(600):
            q = MODEL.clip(q + command * DT)
        assert pair_separations(MODEL, q).min() < 0


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_commands_are_refused(bad: float) -> None:
    command = np.zeros(MODEL.n_joints)
    command[0] = bad
    d = guard().check(MODEL.home(), command, 0.0)
    assert d.refused == "non-finite joint velocity or position"
    assert not d.velocities.any()


def test_wrong_length_is_refused() -> None:
    d = guard().check(MODEL.home(), np.zeros(3), 0.0)
    assert "expected 6 joint values" in d.refused
    assert d.velocities.shape == (MODEL.n_joints,)
    assert not d.velocities.any()


def test_velocity_limits_scale_the_whole_command() -> None:
    command = np.array([2.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    q = MODEL.home()
    q[1] = 0.5  # arm raised, far from everything
    d = guard().check(q, command, 0.0)
    assert d.limited
    assert d.velocities[0] == pytest.approx(MODEL.max_velocity[0])
    assert d.velocities[2] / d.velocities[0] == pytest.approx(0.5)


def test_position_limits_hold_a_joint_at_its_end() -> None:
    q = MODEL.home()
    q[1] = 0.5
    q[0] = MODEL.upper[0]
    command = np.zeros(MODEL.n_joints)
    command[0] = 0.5
    assert guard().check(q, command, 0.0).velocities[0] == 0.0
    command[0] = -0.5
    assert guard().check(q, command, 0.0).velocities[0] == -0.5


def _free_poses(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    q = rng.uniform(MODEL.lower, MODEL.upper, (n * 4, MODEL.n_joints))
    keep = pair_separations(MODEL, q, CFG.padding).min(axis=1) > 0  # type: ignore[union-attr]
    return q[keep][:n]


POSES = _free_poses(200, 5)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(0, len(POSES) - 1),
    st.lists(st.floats(-3.0, 3.0), min_size=MODEL.n_joints, max_size=MODEL.n_joints),
)
def test_decisions_respect_limits_and_a_stop_is_always_escapable(
    index: int, command_list: list[float]
) -> None:
    g = guard()
    q = POSES[index]
    command = np.array(command_list)
    d = g.check(q, command, 0.0)
    assert (np.abs(d.velocities) <= MODEL.max_velocity + 1e-12).all()
    if d.phase == ArmPhase.STOP:
        assert not d.velocities.any()
        assert d.stop_pairs
        back = g.check(q, -command, 0.0)
        assert back.velocities.any(), "a stopped arm must be able to back out"
        assert back.phase != ArmPhase.STOP
    if d.phase == ArmPhase.SLOW:
        slow = CFG.slow_factor * MODEL.max_velocity  # type: ignore[union-attr]
        assert (np.abs(d.velocities) <= slow + 1e-12).all()


def test_gradient_planner_reaches_goals_without_touching_the_body() -> None:
    planner = GradientPlanner(MODEL)
    rng = np.random.default_rng(21)
    goals = []
    for q in _free_poses(400, 21):
        p = tool_pose(MODEL, q)[:3, 3]
        if p[0] > 0.5 and 0.1 < p[2] < 1.6:
            goals.append(tuple(float(x) for x in p))
    rng.shuffle(goals)
    reached = 0
    for goal in goals[:15]:
        plan = planner.plan(MODEL.home(), ReachGoal(goal, (0.0, 0.0, -1.0)))
        assert (pair_separations(MODEL, plan.poses) > 0).all()
        # each move is one fixed step of one joint
        steps = np.abs(np.diff(plan.poses, axis=0))
        assert ((steps > 0).sum(axis=1) <= 1).all()
        reached += plan.reached
    assert reached >= 12


def test_dls_baseline_reaches_a_point_in_front() -> None:
    plan = dls_ik(MODEL, MODEL.home(), ReachGoal((1.5, 0.3, 0.4)))
    assert plan.reached
    assert float(np.linalg.norm(tool_pose(MODEL, plan.poses[-1])[:3, 3] - (1.5, 0.3, 0.4))) < 0.03


def test_a_plan_runs_as_velocity_chunks_through_the_check() -> None:
    goal = ReachGoal((1.5, 0.3, 0.4), (0.0, 0.0, -1.0))
    plan = GradientPlanner(MODEL).plan(MODEL.home(), goal)
    assert plan.reached
    follower = PlanFollower(MODEL, plan, chunk=5)
    g = guard()
    q = MODEL.home()
    for k in range(3000):
        d = g.check(q, follower.command(q), k * DT)
        q = MODEL.clip(q + d.velocities * DT)
        if follower.done:
            break
    assert follower.done
    assert float(np.linalg.norm(tool_pose(MODEL, q)[:3, 3] - goal.position)) < 0.05


def test_m2p2_planar_arm_reaches_points_in_its_plane() -> None:
    config = load_robot("m2p2").arm
    assert config is not None
    model = load_arm(config.urdf, config.srdf)
    planner = GradientPlanner(model)
    for goal in ((0.8, 0.0, 0.1), (0.6, 0.0, 0.8), (1.0, 0.0, 0.5)):
        plan = planner.plan(model.ready, ReachGoal(goal))
        assert plan.reached, (goal, plan.error)
        assert (pair_separations(model, plan.poses) > 0).all()

"""Reach planning: Kievit-Kylar's gradient descent in joint space, a damped-least-squares baseline,
and a follower that runs a plan as joint-velocity chunks.

Gradient descent (Kievit-Kylar §IV): from the current pose every arm joint tries a fixed small step
each way; the fittest of these poses is kept, until no step improves the fitness (a local
optimum). There the step is halved and the climb goes on, down to ``min_step``: coarse steps
make the plan short, the finest sets how close the tool gets. Fitness is minus the tool's
distance to the goal, minus a weighted orientation error (the tool's x axis against the wanted
approach direction), minus a penalty for every checked box pair closer than ``clearance``.
The baseline moves the tool with the damped-least-squares step Δq = Jᵀ(JJᵀ + λ²I)⁻¹·e and
knows nothing of collisions. A plan's poses are grouped into chunks of fixed size and each
chunk is run as joint velocities; the caller passes them through
:class:`~freelook.arm.ArmGuard`, so no plan can drive the arm into the body.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from freelook.arm._kinematics import tool_pose
from freelook.arm._model import ArmModel
from freelook.arm._sat import pair_separations

__all__ = ["GradientPlanner", "Plan", "PlanFollower", "ReachGoal", "dls_ik"]

F64 = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class ReachGoal:
    """Where the tool should go (root frame, m) and, optionally, which way its x axis points."""

    position: tuple[float, float, float]
    approach: tuple[float, float, float] | None = None


@dataclass(frozen=True, slots=True)
class Plan:
    """Joint poses from the start (row 0) to the end; ``reached`` when within tolerance."""

    poses: F64  # (K, J)
    reached: bool
    error: float  # tool distance to the goal at the end, m
    iterations: int


def _orientation_error(frames: F64, approach: F64 | None) -> F64:
    if approach is None:
        return np.zeros(frames.shape[0])
    return 1.0 - frames[:, :3, 0] @ approach


class GradientPlanner:
    """Kievit-Kylar's planner for one arm; moves only the ``arm`` group's joints."""

    def __init__(
        self,
        model: ArmModel,
        *,
        step: float = 0.04,
        min_step: float = 0.005,
        orientation_weight: float = 0.3,
        clearance: float = 0.05,
        clearance_weight: float = 1.0,
        tolerance: float = 0.03,
        max_iterations: int = 2000,
    ) -> None:
        self.model = model
        self.step = step
        self.min_step = min_step
        self.orientation_weight = orientation_weight
        self.clearance = clearance
        self.clearance_weight = clearance_weight
        self.tolerance = tolerance
        self.max_iterations = max_iterations
        joints = model.arm_joints
        moves = np.zeros((2 * len(joints), model.n_joints))
        for k, j in enumerate(joints.tolist()):
            moves[2 * k, j] = 1.0
            moves[2 * k + 1, j] = -1.0
        self._moves = moves

    def fitness(self, q: F64, goal: ReachGoal) -> F64:
        """Fitness of each pose of the batch ``q`` (B, J); higher is better."""
        frames = tool_pose(self.model, q).reshape(-1, 4, 4)
        distance = np.linalg.norm(frames[:, :3, 3] - np.asarray(goal.position), axis=1)
        approach = None if goal.approach is None else np.asarray(goal.approach, dtype=float)
        if approach is not None:
            approach = approach / np.linalg.norm(approach)
        seps = pair_separations(self.model, q, 0.0, self.clearance).reshape(frames.shape[0], -1)
        penalty = np.maximum(self.clearance - seps, 0.0).sum(axis=1) / self.clearance
        return np.asarray(
            -distance
            - self.orientation_weight * _orientation_error(frames, approach)
            - self.clearance_weight * penalty
        )

    def plan(self, start: F64, goal: ReachGoal) -> Plan:
        """Climb from ``start`` until no step of any size down to ``min_step`` improves the
        fitness."""
        m = self.model
        q = m.clip(np.asarray(start, dtype=np.float64))
        poses = [q]
        best = float(self.fitness(q[None], goal)[0])
        step = self.step
        iterations = 0
        while iterations < self.max_iterations:
            iterations += 1
            candidates = np.clip(q[None, :] + step * self._moves, m.lower, m.upper)
            scores = self.fitness(candidates, goal)
            k = int(np.argmax(scores))
            if scores[k] <= best + 1e-12:
                if step / 2 < self.min_step:
                    break
                step /= 2
                continue
            q, best = candidates[k], float(scores[k])
            poses.append(q)
        error = float(np.linalg.norm(tool_pose(m, q)[:3, 3] - np.asarray(goal.position)))
        return Plan(np.array(poses), error <= self.tolerance, error, iterations)


def dls_ik(
    model: ArmModel,
    start: F64,
    goal: ReachGoal,
    *,
    damping: float = 0.05,
    tolerance: float = 0.03,
    max_iterations: int = 300,
) -> Plan:
    """Damped-least-squares inverse kinematics on the tool position (the baseline)."""
    q = model.clip(np.asarray(start, dtype=np.float64))
    joints = model.arm_joints
    target = np.asarray(goal.position, dtype=np.float64)
    poses = [q]
    h = 1e-6
    iterations = 0
    error = np.inf
    for iterations in range(1, max_iterations + 1):  # noqa: B007 - reported
        probe = np.repeat(q[None], len(joints) + 1, axis=0)
        probe[np.arange(1, len(joints) + 1), joints] += h
        p = tool_pose(model, probe)[:, :3, 3]
        e = target - p[0]
        error = float(np.linalg.norm(e))
        if error <= tolerance / 10:
            break
        J = ((p[1:] - p[0]) / h).T  # (3, n)
        dq = J.T @ np.linalg.solve(J @ J.T + damping**2 * np.eye(3), e)
        q = q.copy()
        q[joints] += dq
        q = model.clip(q)
        poses.append(q)
    error = float(np.linalg.norm(tool_pose(model, q)[:3, 3] - target))
    return Plan(np.array(poses), error <= tolerance, error, iterations)


class PlanFollower:
    """Runs a plan as joint-velocity chunks of ``chunk`` poses each, at ``speed`` of the joints'
    velocity limits; sans-I/O: call :meth:`command` every control cycle."""

    def __init__(
        self, model: ArmModel, plan: Plan, *, chunk: int = 5, speed: float = 0.5, tol: float = 0.01
    ) -> None:
        self.model = model
        self.targets = plan.poses[chunk::chunk]
        if len(plan.poses) > 1 and (len(plan.poses) - 1) % chunk:
            self.targets = np.vstack([self.targets, plan.poses[-1:]])
        self.speed = speed
        self.tol = tol
        self.index = 0

    @property
    def done(self) -> bool:
        return self.index >= len(self.targets)

    def command(self, q: F64) -> F64:
        """Velocities toward the current chunk's end pose; zero once the plan is done."""
        joints = self.model.arm_joints
        v = np.zeros(self.model.n_joints)
        while not self.done and np.max(np.abs(self.targets[self.index] - q)[joints]) <= self.tol:
            self.index += 1
        if self.done:
            return v
        delta = (self.targets[self.index] - q)[joints]
        limit = self.model.max_velocity[joints] * self.speed
        # one duration for the whole chunk: every joint arrives together
        duration = max(float(np.max(np.abs(delta) / limit)), 0.05)
        v[joints] = delta / duration
        return v

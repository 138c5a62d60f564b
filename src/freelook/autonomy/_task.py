"""Seed 002's bomb-disposal task as an explicit state machine (sans-I/O, stamps given).

Phases (:class:`freelook.types.TaskPhase`): search for the object (turn in place), approach it
by visual servoing (turn by its bearing, drive by its floor-plane range; a holonomic base also
slides sideways) until it lies where the arm reaches best, reach and grasp it with the
gradient-descent planner (over it, down to it, close, lift to the carrying pose), search for
the receptacle, approach it, and drop (the tool over the receptacle, the gripper opens).

Each phase has a success test, a timeout and a recovery: a target lost during an approach
sends the task back to that target's search; an approach that takes too long searches again;
a grasp that closes on nothing opens, rises and tries again with the goal nudged along the
line of sight, then approaches again; a search that finds nothing, or too many recoveries,
fail the task. Pausing (the operator took over, an e-stop, a lost link) keeps the phase: the
time paused does not count against its timeout, and the arm's motion is planned again from
where the arm then is.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from freelook.arm import ArmModel, GradientPlanner, PlanFollower, ReachGoal, box_poses, tool_pose
from freelook.autonomy._steps import ARM_ORDER, TaskStep
from freelook.autonomy._tracking import Track
from freelook.geometry import Pose
from freelook.types import TaskPhase

__all__ = [
    "DisposalTask",
    "PhaseRecord",
    "TaskCommand",
    "TaskInputs",
    "TaskSettings",
    "phase_durations",
]

F64 = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class TaskSettings:
    """How the task moves; the robot program derives the reach-specific ones from the arm."""

    holonomic: bool
    object_standoff: float  # m ahead of the reference point where the object is grasped
    receptacle_standoff: float
    carry: tuple[float, float, float]  # tool position while carrying (robot frame)
    max_speed: float = 0.35
    max_turn_rate: float = 0.6
    search_turn_rate: float = 0.4
    gain: float = 0.8
    turn_gain: float = 1.5
    position_tolerance: float = 0.04
    bearing_tolerance: float = 0.03
    settle_time: float = 1.0
    search_timeout: float = 45.0
    approach_timeout: float = 60.0
    arm_timeout: float = 25.0
    max_recoveries: int = 6
    grasp_attempts: int = 3
    drop_clearance: float = 0.2  # m of the tool over the receptacle's rim
    pregrasp_height: float = 0.15  # m over the object's top before going down
    palm_clearance: float = 0.03  # m between the object's top and the arm above the fingers
    min_grip: float = 0.03  # m of the fingers' length that must reach down the object's sides
    search_tilt: float = -0.2  # rad
    tilt_gain: float = 2.0


@dataclass(frozen=True, slots=True)
class TaskInputs:
    """What the robot knows this cycle."""

    odom: Pose
    tilt: float
    pan: float
    q: F64  # the arm model's joints (encoders, the gripper's half opening)
    holding: bool
    object: Track | None
    receptacle: Track | None
    camera_forward: float
    camera_height: float


@dataclass(frozen=True, slots=True)
class TaskCommand:
    """What the task asks for this cycle; it still goes through the robot's safety."""

    vx: float = 0.0
    vy: float = 0.0
    omega: float = 0.0
    pan_rate: float = 0.0
    tilt_rate: float = 0.0
    arm: tuple[float, ...] | None = None  # velocities of the jogged joints
    gripper: float | None = None  # opening, m


@dataclass(slots=True)
class PhaseRecord:
    phase: TaskPhase
    start: float
    end: float | None = None
    outcome: str = ""


class ArmMotion(NamedTuple):
    """The arm's joint velocities toward a goal this cycle, and whether it is there."""

    velocities: tuple[float, ...] | None
    there: bool


@dataclass(slots=True)
class _ArmMove:
    follower: PlanFollower
    goal: ReachGoal
    error: float


_STEPS = {
    TaskPhase.SEARCH_OBJECT: 0,
    TaskPhase.APPROACH_OBJECT: 1,
    TaskPhase.GRASP: 2,
    TaskPhase.SEARCH_RECEPTACLE: 3,
    TaskPhase.APPROACH_RECEPTACLE: 4,
    TaskPhase.DROP: 5,
}


class DisposalTask:
    """The five-phase task for one robot and arm."""

    def __init__(self, settings: TaskSettings, arm: ArmModel) -> None:
        self.settings = settings
        self.model = arm
        self.planner = GradientPlanner(arm)
        self.phase = TaskPhase.IDLE
        self.history: list[PhaseRecord] = []
        self.recoveries = 0
        self.progress = 0.0
        self.failure = ""
        self._entered = 0.0
        self._step = TaskStep.NONE  # the phase's own step
        self._step_since = 0.0
        self._move: _ArmMove | None = None
        self._attempt = 0
        self._settled_since: float | None = None
        self._approach_start = 1.0
        self._grasp_at: tuple[float, float, float] | None = None
        self._paused_at: float | None = None
        self._down: tuple[float, float, float] | None = None
        self._palm, self._fingers = _hand_boxes(arm)
        self._approach_left = 1.0
        self._target_height = 0.0
        self._target_at = (0.0, 0.0, 0.0)

    # -- life cycle --------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.phase not in (TaskPhase.IDLE, TaskPhase.DONE, TaskPhase.FAILED)

    def start(self, now: float) -> None:
        self.history.clear()
        self.recoveries = 0
        self.failure = ""
        self._enter(TaskPhase.SEARCH_OBJECT, now)

    def pause(self, now: float) -> None:
        """Stop where it is; the phase is kept."""
        if self._paused_at is None:
            self._paused_at = now

    def resume(self, now: float) -> None:
        """Go on from the phase it was in; the pause does not count against its timeout."""
        if self._paused_at is not None:
            gap = now - self._paused_at
            self._entered += gap
            self._step_since += gap
            self._paused_at = None
        self._settled_since = None
        if self._move is not None:  # the arm may have been moved meanwhile: plan again
            self._move = None
            self._step_since = now

    def _enter(self, phase: TaskPhase, now: float, outcome: str = "") -> None:
        if self.history and self.history[-1].end is None:
            self.history[-1].end = now
            self.history[-1].outcome = outcome
        self.phase = phase
        self._entered = now
        self._step = TaskStep.NONE
        self._step_since = now
        self._move = None
        self._settled_since = None
        if phase in _STEPS:
            self.history.append(PhaseRecord(phase, now))
        if phase in (TaskPhase.DONE, TaskPhase.FAILED):
            self.progress = 1.0 if phase == TaskPhase.DONE else self.progress

    def _fail(self, now: float, why: str) -> TaskCommand:
        self.failure = f"{self.phase.name.lower()}: {why}"
        self._enter(TaskPhase.FAILED, now, why)
        return TaskCommand()

    def _recover(self, phase: TaskPhase, now: float, why: str) -> TaskCommand:
        self.recoveries += 1
        if self.recoveries > self.settings.max_recoveries:
            return self._fail(now, f"{why}, after {self.recoveries - 1} recoveries")
        self._enter(phase, now, why)
        return TaskCommand()

    # -- the cycle ---------------------------------------------------------------------------

    def step(self, now: float, inputs: TaskInputs) -> TaskCommand:
        """One control cycle of the task."""
        phase = self.phase
        if not self.running:
            return TaskCommand()
        elapsed = now - self._entered
        if phase in (TaskPhase.SEARCH_OBJECT, TaskPhase.SEARCH_RECEPTACLE):
            command = self._search(now, elapsed, inputs)
        elif phase in (TaskPhase.APPROACH_OBJECT, TaskPhase.APPROACH_RECEPTACLE):
            command = self._approach(now, elapsed, inputs)
        elif phase == TaskPhase.GRASP:
            command = self._grasp(now, inputs)
        else:
            command = self._drop(now, inputs)
        if self.phase != phase and command.arm is None:
            # the arm keeps the last velocities it was given: a phase left mid-move (the
            # object seen while the arm stows) would leave it running into its stops
            command = dataclasses.replace(command, arm=self._still())
        if self.phase in _STEPS:
            index = _STEPS[self.phase]
            self.progress = (index + min(max(self._phase_progress(elapsed), 0.0), 1.0)) / 6
        return command

    def _phase_progress(self, elapsed: float) -> float:
        if self.phase in (TaskPhase.SEARCH_OBJECT, TaskPhase.SEARCH_RECEPTACLE):
            return 0.0
        if self.phase in (TaskPhase.APPROACH_OBJECT, TaskPhase.APPROACH_RECEPTACLE):
            return 1.0 - self._approach_left / max(self._approach_start, 1e-6)
        step = self._step
        return ARM_ORDER.index(step) / len(ARM_ORDER) if step in ARM_ORDER else 0.0

    def _target(self, inputs: TaskInputs) -> Track | None:
        if self.phase in (TaskPhase.SEARCH_OBJECT, TaskPhase.APPROACH_OBJECT):
            return inputs.object
        return inputs.receptacle

    def _tilt_toward(self, inputs: TaskInputs, wanted: float) -> float:
        wanted = min(0.0, max(-0.5, wanted))
        return max(-1.0, min(1.0, self.settings.tilt_gain * (wanted - inputs.tilt)))

    def _search(self, now: float, elapsed: float, inputs: TaskInputs) -> TaskCommand:
        s = self.settings
        if self._target(inputs) is not None:
            nxt = (
                TaskPhase.APPROACH_OBJECT
                if self.phase == TaskPhase.SEARCH_OBJECT
                else TaskPhase.APPROACH_RECEPTACLE
            )
            self._enter(nxt, now, "seen")
            self._approach_start = math.inf
            return TaskCommand()
        if self._step == TaskStep.NONE and self.phase == TaskPhase.SEARCH_OBJECT:
            self._next(TaskStep.STOW, now)  # the arm high and close before the base turns
        if self._step == TaskStep.STOW:
            arm, there = self._run_arm(now, inputs, s.carry)
            if there or now - self._step_since > s.arm_timeout:
                self._next(TaskStep.TURN, now)
            return TaskCommand(arm=arm, tilt_rate=self._tilt_toward(inputs, s.search_tilt))
        if elapsed > s.search_timeout:
            return self._fail(now, f"nothing seen in {s.search_timeout:g} s")
        return TaskCommand(
            omega=s.search_turn_rate,
            pan_rate=max(-1.0, min(1.0, -2.0 * inputs.pan)),
            tilt_rate=self._tilt_toward(inputs, s.search_tilt),
        )

    def _approach(self, now: float, elapsed: float, inputs: TaskInputs) -> TaskCommand:
        s = self.settings
        track = self._target(inputs)
        back = (
            TaskPhase.SEARCH_OBJECT
            if self.phase == TaskPhase.APPROACH_OBJECT
            else TaskPhase.SEARCH_RECEPTACLE
        )
        if track is None:
            return self._recover(back, now, "target lost")
        if elapsed > s.approach_timeout:
            return self._recover(back, now, f"not reached in {s.approach_timeout:g} s")
        x, y = track.in_robot_frame(inputs.odom)
        standoff = (
            s.object_standoff if self.phase == TaskPhase.APPROACH_OBJECT else s.receptacle_standoff
        )
        bearing = math.atan2(y, x)
        ex = x - standoff
        left = math.hypot(ex, y)
        self._approach_left = left
        if not math.isfinite(self._approach_start):
            self._approach_start = max(left, 1e-3)
        omega = max(-s.max_turn_rate, min(s.max_turn_rate, s.turn_gain * bearing))
        slow = min(1.0, 0.3 + abs(ex))  # creep over the last few decimetres
        vx = max(-s.max_speed, min(s.max_speed, s.gain * ex)) * slow
        vy = 0.0
        if s.holonomic:
            vy = max(-s.max_speed, min(s.max_speed, s.gain * y)) * slow
            aligned = abs(y) <= s.position_tolerance / 2
        else:
            vx *= max(0.0, math.cos(bearing)) ** 4 if abs(bearing) < 0.6 else 0.0
            aligned = abs(bearing) <= s.bearing_tolerance
        camera_range = max(0.3, x - inputs.camera_forward)
        tilt = -math.atan2(inputs.camera_height - 0.1, camera_range) + 0.05
        tilt_rate = self._tilt_toward(inputs, tilt)
        pan_rate = max(-1.0, min(1.0, -2.0 * inputs.pan))
        if abs(ex) <= s.position_tolerance and aligned:
            if self._settled_since is None:
                self._settled_since = now
            if now - self._settled_since >= s.settle_time:
                nxt = TaskPhase.GRASP if self.phase == TaskPhase.APPROACH_OBJECT else TaskPhase.DROP
                self._enter(nxt, now, "in reach")
                self._grasp_at = None
                self._attempt = 0
                # grasped at its height as seen; passed over at the tallest seen (a receptacle's
                # rim lost to shade would put the fingers into it)
                self._target_height = track.height if nxt == TaskPhase.GRASP else track.tallest
                self._target_at = (x, y, track.width)
            return TaskCommand(tilt_rate=tilt_rate, pan_rate=pan_rate)
        if self._settled_since is not None and (abs(ex) > 2 * s.position_tolerance or not aligned):
            self._settled_since = None
        return TaskCommand(vx=vx, vy=vy, omega=omega, pan_rate=pan_rate, tilt_rate=tilt_rate)

    # -- the arm -----------------------------------------------------------------------------

    def _plan(self, q: F64, position: tuple[float, float, float]) -> _ArmMove:
        goal = ReachGoal(position)
        plan = self.planner.plan(q, goal)
        return _ArmMove(PlanFollower(self.model, plan, speed=0.5), goal, plan.error)

    def _run_arm(
        self, now: float, inputs: TaskInputs, position: tuple[float, float, float]
    ) -> ArmMotion:
        """Velocities toward ``position`` (planned on first call); whether it is there."""
        if self._move is None or self._move.goal.position != position:
            self._move = self._plan(inputs.q, position)
        velocities = self._move.follower.command(inputs.q)
        joints = self.model.arm_joints
        if self._move.follower.done:
            return ArmMotion(tuple(0.0 for _ in joints), True)
        return ArmMotion(tuple(velocities[joints].tolist()), False)

    def _tool(self, q: F64) -> F64:
        return np.asarray(tool_pose(self.model, q)[:3, 3])

    def _next(self, step: TaskStep, now: float) -> None:
        self._step = step
        self._step_since = now
        self._move = None
        self._down = None

    def _lowest(self, q: F64, boxes: npt.NDArray[np.intp]) -> float:
        """The lowest point of the arm's ``boxes`` at ``q`` (robot frame, m)."""
        centres, rotations = box_poses(self.model, q)
        reach_down = np.abs(rotations[boxes, 2, :]) * self.model.half_extents[boxes]
        return float(np.min(centres[boxes, 2] - reach_down.sum(axis=1)))

    def _grasp_height(
        self, q: F64, goal: tuple[float, float, float], top: float
    ) -> tuple[float, float, float]:
        """The grasp goal raised until the arm's boxes other than the fingers stay
        :attr:`TaskSettings.palm_clearance` over the object's top (short fingers grasp a tall
        object above its middle), but no higher than where the fingers still reach
        :attr:`TaskSettings.min_grip` down its sides (the arm's own boxes, at the planned
        pose)."""
        s = self.settings
        x, y, z = goal
        for _ in range(4):
            end = self.planner.plan(q, ReachGoal((x, y, z))).poses[-1]
            palm = self._lowest(end, self._palm)
            grip = top - self._lowest(end, self._fingers)
            rise = min(top + s.palm_clearance - palm, grip - s.min_grip)
            if rise <= 1e-3:
                break
            z += rise
        return (x, y, max(z, goal[2]))

    def _grasp(self, now: float, inputs: TaskInputs) -> TaskCommand:
        s = self.settings
        x, y, _ = self._target_at
        nudge = (0.0, 0.05, -0.05)[self._attempt % 3]
        r = math.hypot(x, y)
        gx, gy = x + nudge * x / r, y + nudge * y / r
        centre_z = max(0.05, self._target_height / 2)
        over = (gx, gy, centre_z * 2 + s.pregrasp_height)
        opening = float(2 * self.model.upper[self.model.gripper_joints[0]])
        if now - self._step_since > s.arm_timeout:
            return self._recover(
                TaskPhase.APPROACH_OBJECT, now, f"arm step {self._step.value} timed out"
            )
        if self._step == TaskStep.NONE:
            self._next(TaskStep.OPEN, now)
        if self._step == TaskStep.OPEN:
            if inputs.q[self.model.gripper_joints[0]] * 2 >= opening - 0.005:
                self._next(TaskStep.OVER, now)
            return TaskCommand(gripper=opening, arm=self._still())
        if self._step == TaskStep.OVER:
            arm, there = self._run_arm(now, inputs, over)
            if there:
                self._next(TaskStep.DOWN, now)
            return TaskCommand(arm=arm, gripper=opening)
        if self._step == TaskStep.DOWN:
            if self._down is None:
                self._down = self._grasp_height(inputs.q, (gx, gy, centre_z), centre_z * 2)
            arm, there = self._run_arm(now, inputs, self._down)
            if there:
                self._next(TaskStep.CLOSE, now)
            return TaskCommand(arm=arm, gripper=opening)
        if self._step == TaskStep.CLOSE:
            if inputs.holding:
                self._next(TaskStep.LIFT, now)
            elif inputs.q[self.model.gripper_joints[0]] <= 1e-3:
                self._attempt += 1  # closed on nothing: open, rise and try again
                if self._attempt >= s.grasp_attempts:
                    return self._recover(TaskPhase.APPROACH_OBJECT, now, "grasp missed")
                self._next(TaskStep.OPEN, now)
            return TaskCommand(arm=self._still(), gripper=0.0)
        arm, there = self._run_arm(now, inputs, s.carry)  # TaskStep.LIFT
        if there:
            if not inputs.holding:
                return self._recover(TaskPhase.APPROACH_OBJECT, now, "object slipped")
            self._enter(TaskPhase.SEARCH_RECEPTACLE, now, "grasped")
        return TaskCommand(arm=arm, gripper=0.0)

    def _drop(self, now: float, inputs: TaskInputs) -> TaskCommand:
        s = self.settings
        x, y, _ = self._target_at
        if now - self._step_since > s.arm_timeout:
            return self._recover(
                TaskPhase.APPROACH_RECEPTACLE, now, f"arm step {self._step.value} timed out"
            )
        opening = float(2 * self.model.upper[self.model.gripper_joints[0]])
        if self._step == TaskStep.NONE:
            self._next(TaskStep.OVER, now)
        if self._step == TaskStep.OVER:
            over = (x, y, self._target_height + s.drop_clearance)
            arm, there = self._run_arm(now, inputs, over)
            if there:
                self._next(TaskStep.RELEASE, now)
            return TaskCommand(arm=arm, gripper=0.0)
        if self._step == TaskStep.RELEASE:
            if not inputs.holding:
                self._next(TaskStep.BACK, now)
            return TaskCommand(arm=self._still(), gripper=opening)
        arm, there = self._run_arm(now, inputs, s.carry)  # TaskStep.BACK
        if there:
            self._enter(TaskPhase.DONE, now, "dropped")
        return TaskCommand(arm=arm, gripper=opening)

    def _still(self) -> tuple[float, ...]:
        return tuple(0.0 for _ in self.model.arm_joints)


def phase_durations(history: list[PhaseRecord]) -> dict[TaskPhase, float]:
    """Seconds spent in each phase (all its visits summed)."""
    out: dict[TaskPhase, float] = {}
    for record in history:
        if record.end is not None:
            out[record.phase] = out.get(record.phase, 0.0) + record.end - record.start
    return out


def _hand_boxes(model: ArmModel) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """The palm (the boxes near the tool that move with the arm but not with the fingers) and
    the fingers (the boxes that move with them)."""
    q = model.ready.copy()
    still, _ = box_poses(model, q)
    moved = q.copy()
    moved[model.arm_joints] += 0.02
    arm_moved, _ = box_poses(model, moved)
    fingers = q.copy()
    fingers[model.gripper_joints] += 0.01
    finger_moved, _ = box_poses(model, fingers)
    arm = np.linalg.norm(arm_moved - still, axis=1) > 1e-9
    finger = np.linalg.norm(finger_moved - still, axis=1) > 1e-9
    near = np.linalg.norm(still - tool_pose(model, q)[:3, 3], axis=1) < 0.2
    return np.flatnonzero(arm & ~finger & near), np.flatnonzero(finger)

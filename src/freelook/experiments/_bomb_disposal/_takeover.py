"""The operator's takeover in a bomb-disposal trial: when it is due (by the task's phase) and
what it shows (the robot stopped within a cycle, the task resumed where it was)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from freelook.hardware.sim import SimulatedRobot
from freelook.link import Heartbeat, ModeChange, VelocityCommand
from freelook.types import Mode, TaskPhase

__all__ = ["TASK_PHASES", "Takeover", "TakeoverOutcome", "take_over"]

TASK_PHASES = (
    TaskPhase.SEARCH_OBJECT,
    TaskPhase.APPROACH_OBJECT,
    TaskPhase.GRASP,
    TaskPhase.SEARCH_RECEPTACLE,
    TaskPhase.APPROACH_RECEPTACLE,
    TaskPhase.DROP,
)


@dataclass(frozen=True)
class Takeover:
    """When the operator takes over: ``after`` seconds into ``phase`` (0: in the first control
    cycle the task is in it), or in the first cycle of a later phase when the task has left
    ``phase`` before that. Drawn by phase, not by the clock: a takeover set by the clock may
    fall after the task has ended, and then proves nothing."""

    phase: TaskPhase
    after: float = 0.0

    @classmethod
    def drawn(cls, rng: np.random.Generator) -> Takeover:
        """A phase of the six, uniformly; a third of the time at the phase change itself,
        otherwise up to 4 s into the phase."""
        phase = TASK_PHASES[int(rng.integers(len(TASK_PHASES)))]
        return cls(phase, 0.0 if rng.random() < 1 / 3 else float(rng.uniform(0.0, 4.0)))

    def due(self, phase: TaskPhase, in_phase: float) -> bool:
        """Whether to take over now, the task ``in_phase`` seconds into ``phase``."""
        if phase not in TASK_PHASES:
            return False
        wanted, now = TASK_PHASES.index(self.phase), TASK_PHASES.index(phase)
        return now > wanted or (now == wanted and in_phase >= self.after - 1e-9)


@dataclass(frozen=True)
class TakeoverOutcome:
    """What a takeover showed: the phase it came in, whether the robot was commanded still
    one control cycle after the stop, and whether the hand-back resumed that phase."""

    phase: TaskPhase
    stopped_in_one_cycle: bool
    resumed_phase: bool


def take_over(sim_robot: SimulatedRobot) -> TakeoverOutcome:
    """An operator's stop command mid-task, 2 s of standing, then the hand-back.

    Stopped: one control cycle after the stop the base, the camera and the arm are commanded
    still. Resumed: the hand-back finds the task in the phase it was in, with no recovery
    spent on the pause, and its first cycle goes on in that phase or on to the next."""
    core = sim_robot.core
    autonomy = core.autonomy
    assert autonomy is not None
    before = autonomy.task.phase
    recoveries = autonomy.task.recoveries
    sim_robot.send(VelocityCommand(0.0, 0.0))
    sim_robot.run_for(core.period)
    out = core.control.last_output
    arm = core.arm.last if core.arm is not None else None
    arm_still = arm is None or not np.any(arm.velocities)
    stopped = (
        core.modes.mode != Mode.AUTONOMY
        and (out.v, out.omega, out.v_left, out.v_right, out.pan_rate, out.tilt_rate) == (0.0,) * 6
        and arm_still
    )
    for _ in range(20):
        sim_robot.send(VelocityCommand(0.0, 0.0))
        sim_robot.run_for(0.1)
    sim_robot.send(ModeChange(Mode.AUTONOMY))
    kept = core.modes.mode == Mode.AUTONOMY and autonomy.task.phase == before
    sim_robot.send(Heartbeat())
    sim_robot.run_for(core.period)
    after = autonomy.task.phase
    onward = TASK_PHASES.index(before) + 1
    going_on = after == before or after == (*TASK_PHASES, TaskPhase.DONE)[onward]
    resumed = kept and going_on and autonomy.task.recoveries == recoveries
    return TakeoverOutcome(before, stopped, resumed)

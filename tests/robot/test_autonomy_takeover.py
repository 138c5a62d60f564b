"""An operator takes over the disposal task at every phase and at every phase change, cycle
by cycle: the robot stops within one control cycle, the hand-back resumes the phase the task
was in, and the task goes on from there to its end.

A run without a takeover gives the cycles at which the task changes phase (a lock-step run is
repeatable from its seed); each case runs the same scene again and takes over in the middle of
a phase's cycles, or in the very cycle the task would change phase.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from freelook.autonomy import ColorTarget
from freelook.config import load_robot
from freelook.experiments._bomb_disposal import eod_scenario
from freelook.hardware.sim import SimulatedRobot
from freelook.link import Heartbeat, ModeChange, VelocityCommand
from freelook.types import Mode, TaskPhase

SEED, ROBOT = 64, "taros"  # the scene whose takeover came after the task had ended
LIMIT = 120.0  # s; the scene's task ends in about 40
PHASES = (
    TaskPhase.SEARCH_OBJECT,
    TaskPhase.APPROACH_OBJECT,
    TaskPhase.GRASP,
    TaskPhase.SEARCH_RECEPTACLE,
    TaskPhase.APPROACH_RECEPTACLE,
    TaskPhase.DROP,
)
FINAL = (TaskPhase.DONE, TaskPhase.FAILED)


def _robot() -> SimulatedRobot:
    scenario = eod_scenario(SEED, ROBOT)
    robot = SimulatedRobot(
        load_robot(ROBOT), scenario.world, seed=SEED, pose=scenario.start, camera=True,
        robot_map=None, use_localization=False,
    )  # fmt: skip
    robot.sim.lighting = scenario.lighting
    assert robot.core.autonomy is not None
    robot.core.autonomy.set_colors(
        ColorTarget(scenario.object_hue), ColorTarget(scenario.receptacle_hue)
    )
    robot.send(ModeChange(Mode.AUTONOMY))
    return robot


def _cycle(robot: SimulatedRobot) -> None:
    """One control cycle, the station's heartbeat before it (the link alive)."""
    robot.send(Heartbeat())
    robot.run_for(robot.core.period)


def _phase(robot: SimulatedRobot) -> TaskPhase:
    assert robot.core.autonomy is not None
    return robot.core.autonomy.phase


@functools.cache
def _changes() -> tuple[tuple[int, TaskPhase], ...]:
    """(cycle, phase entered in it) of a run with no takeover, to its end."""
    robot = _robot()
    changes = [(0, _phase(robot))]
    cycles = round(LIMIT / robot.core.period)
    for k in range(1, cycles):
        _cycle(robot)
        if _phase(robot) != changes[-1][1]:
            changes.append((k, _phase(robot)))
        if _phase(robot) in FINAL:
            break
    return tuple(changes)


def test_the_scene_without_a_takeover_goes_through_every_phase_once() -> None:
    assert [phase for _, phase in _changes()] == [*PHASES, TaskPhase.DONE]


def _take_over_at(cycle: int) -> None:
    """Run the scene to just before ``cycle``; the operator's stop arrives then: one cycle
    later the base, the camera and the arm are commanded still; 2 s later the hand-back
    resumes the phase the task was in, and the task goes on to its end."""
    robot = _robot()
    core = robot.core
    for _ in range(1, cycle):
        _cycle(robot)
    before = _phase(robot)
    assert before in PHASES
    assert core.autonomy is not None
    recoveries = core.autonomy.task.recoveries
    robot.send(VelocityCommand(0.0, 0.0))
    robot.run_for(core.period)  # the one control cycle
    out = core.control.last_output
    assert core.modes.mode != Mode.AUTONOMY
    assert (out.v, out.omega, out.v_left, out.v_right) == (0.0, 0.0, 0.0, 0.0)
    assert (out.pan_rate, out.tilt_rate) == (0.0, 0.0)
    assert core.arm is not None
    assert core.arm.last is not None
    assert not np.any(core.arm.last.velocities)
    assert _phase(robot) == before  # paused, not moved on
    for _ in range(20):  # 2 s of the operator standing still
        robot.send(VelocityCommand(0.0, 0.0))
        robot.run_for(0.1)
    assert _phase(robot) == before
    robot.send(ModeChange(Mode.AUTONOMY))  # the hand-back
    assert core.modes.mode == Mode.AUTONOMY
    assert _phase(robot) == before
    _cycle(robot)  # the first cycle after it goes on in the phase, or on to the next
    assert _phase(robot) in (before, (*PHASES, TaskPhase.DONE)[PHASES.index(before) + 1])
    for _ in range(round(LIMIT / core.period)):
        if _phase(robot) in FINAL:
            break
        _cycle(robot)
    assert _phase(robot) == TaskPhase.DONE, core.autonomy.task.failure
    assert core.autonomy.task.recoveries == recoveries  # the pause cost no recovery


def _middle(phase: TaskPhase) -> int:
    changes = _changes()
    k = [p for _, p in changes].index(phase)
    return (changes[k][0] + changes[k + 1][0]) // 2


@pytest.mark.slow
@pytest.mark.parametrize("phase", PHASES, ids=lambda p: p.name.lower())
def test_a_takeover_in_the_middle_of_each_phase(phase: TaskPhase) -> None:
    _take_over_at(_middle(phase))


@pytest.mark.slow
@pytest.mark.parametrize(
    "entered", [*PHASES[1:], TaskPhase.DONE], ids=lambda p: f"into_{p.name.lower()}"
)
def test_a_takeover_in_the_cycle_the_phase_changes(entered: TaskPhase) -> None:
    """The stop arrives for the cycle in which the task would have changed phase."""
    cycle = {p: k for k, p in _changes()}[entered]
    _take_over_at(cycle)

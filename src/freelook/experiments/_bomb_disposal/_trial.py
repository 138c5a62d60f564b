"""One bomb-disposal trial: the robot program in its autonomy mode in a seeded scene, seeing
only its camera, HAL and arm, judged every 0.1 s on the simulator's truth."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from freelook.autonomy import ColorTarget, phase_durations
from freelook.config import RobotConfig, load_robot, physical_robot
from freelook.experiments._bomb_disposal._judge import TruthJudge
from freelook.experiments._bomb_disposal._scene import (
    ROOM,
    EodScenario,
    along,
    eod_scenario,
    in_room,
    segment_distance,
)
from freelook.experiments._bomb_disposal._takeover import Takeover, take_over
from freelook.experiments._faults import simulated_robot
from freelook.geometry import Pose
from freelook.hardware.sim import SimulatedRobot
from freelook.link import Heartbeat, ModeChange
from freelook.types import Mode, TaskPhase

__all__ = ["ARM_SPEED_ERROR", "WEBCAM_RATE", "DisposalResult", "disposal_trial"]

#: an open-loop arm's joints run this much (±, a share) faster or slower than the speed the
#: program presumes: Kievit-Kylar measured the M2P2 arm's speed by experiment, and says its
#: acceleration was small but not nil
ARM_SPEED_ERROR = 0.05
#: s between the judge's looks
STEP = 0.1
#: frames a second of the M2P2's webcam on the laptop (Kievit-Kylar give no rate; a USB
#: webcam of the time at 640 × 480 gives 15 to 30)
WEBCAM_RATE = 15.0


@dataclass
class DisposalResult:
    seed: int
    robot: str
    success: bool
    phase: TaskPhase
    duration: float
    phase_times: dict[str, float]
    base_contacts: int  # physics steps against walls or fixed objects
    base_box_overlaps: int  # looks at which the footprint overlapped the box
    arm_collisions: int  # looks at which an arm box was inside an object
    recoveries: int
    false_detections: int  # frames with an object sighting > 0.5 m from the true object
    frames: int
    distractor_inside: bool = False  # the scene's distractor inside the detector's hue window
    open_loop: bool = False  # the arm without encoders, counted from its resting pose
    local_camera: bool = False  # seen through a webcam on the program's computer, not the link
    takeover: str = ""  # the takeover asked for ("grasp +1.2 s"), if any
    took_over: bool = False  # it happened (the task still running when it was due)
    takeover_phase: str = ""  # the phase the task was in when the operator took over
    stopped_in_one_cycle: bool | None = None
    resumed_phase: bool | None = None
    moved: bool = False
    failure: str = ""
    drop_error: float = math.nan  # box centre to receptacle centre after the drop, m
    #: with ``timeline``: (t, phase) at each change, and every 0.1 s the objects' true poses
    phases: list[tuple[float, str]] = field(default_factory=list)
    objects: list[tuple[float, str]] = field(default_factory=list)  # (t, JSON)

    @property
    def collisions(self) -> int:
        return self.base_contacts + self.base_box_overlaps + self.arm_collisions


def _robot_in_scene(
    scenario: EodScenario,
    config: RobotConfig,
    *,
    open_loop: bool,
    speed_error: float,
    camera_off: bool,
) -> SimulatedRobot:
    """The simulated robot at the scene's start under its light, its base the error model's
    draw for the scene's seed (told where it was put, not where it stands); an ``open_loop``
    arm has no encoders and its drives run off the presumed speed by a factor per joint drawn
    from the seed within ±``speed_error``; ``camera_off``: every frame black."""
    seed = scenario.seed
    truth = physical_robot(config, seed)
    if open_loop and config.arm is not None:
        arm_config = config.arm.model_copy(update={"encoders": False})
        config = config.model_copy(update={"arm": arm_config})
    sim_robot = simulated_robot(
        config,
        scenario.world,
        seed=seed,
        pose=scenario.start,
        camera=True,
        robot_map=None,
        use_localization=False,
        truth=truth,
        believed_pose=truth.believed(scenario.start) if truth is not None else None,
    )
    assert sim_robot.sim.arm is not None
    if open_loop:
        drives = np.random.default_rng([seed, 2004])
        arm_joints = len(sim_robot.sim.arm.speed_scale)
        sim_robot.sim.arm.speed_scale = 1.0 + drives.uniform(-speed_error, speed_error, arm_joints)
    sim_robot.sim.lighting = scenario.lighting
    sim_robot.sim.light_tint = scenario.tint
    sim_robot.sim.camera_noise = scenario.noise
    if camera_off:
        sim_robot.sim.lighting, sim_robot.sim.camera_noise = 0.0, 0.0
    return sim_robot


def _elsewhere(
    centre: npt.NDArray[np.float64],
    scenario: EodScenario,
    sim_robot: SimulatedRobot,
    rng: np.random.Generator,
) -> npt.NDArray[np.float64] | None:
    """A new place for the object, away from the robot and from where it stood, with the
    straight ways to it and on to the receptacle as clear as the scene's first ones (the
    task has no path planning: an obstacle on its way stops it at the approach check)."""
    v = sim_robot.sim.vehicle
    here = (v.x, v.y)
    rec = next(o for o in scenario.world.objects if o.name == "receptacle")
    others = [(o.x, o.y) for o in scenario.world.objects if not o.movable and o is not rec]
    clear = 1.2 if sim_robot.config.footprint.length > 1.2 else 0.9
    for _ in range(300):
        p = (float(rng.uniform(*ROOM[:2])), float(rng.uniform(*ROOM[2:])))
        if not in_room(p) or math.dist(p, here) < 2.0 or math.dist(p, centre[:2]) < 1.5:
            continue
        if math.dist(p, (rec.x, rec.y)) < 2.8:
            continue
        ways = ((here, p), (p, (rec.x, rec.y)))
        if any(segment_distance(o, a, b) < clear for o in others for a, b in ways):
            continue
        if not all(in_room(along(a, b, k / 20)) for a, b in ways for k in range(21)):
            continue
        return np.array([p[0], p[1], centre[2]])
    return None  # none this time: tried again as the robot goes on


class _Run:
    """A trial as it runs: the robot in its scene, the box it must move, the takeover still
    to come, and what the judge has counted so far (in ``result``)."""

    def __init__(
        self,
        sim_robot: SimulatedRobot,
        scenario: EodScenario,
        result: DisposalResult,
        takeover: Takeover | None,
        *,
        move_object: bool,
        timeline: bool,
    ) -> None:
        assert sim_robot.core.autonomy is not None
        assert sim_robot.sim.arm is not None
        self.sim_robot = sim_robot
        self.core = sim_robot.core
        self.autonomy = sim_robot.core.autonomy
        self.arm = sim_robot.sim.arm
        self.scenario = scenario
        self.result = result
        self.pending = takeover
        self.move_object = move_object
        self.timeline = timeline
        self.move_rng = np.random.default_rng([scenario.seed, 7])
        self.box = next(o for o in self.arm.objects if o.name == "suspicious object")
        self.judge = TruthJudge(self.autonomy.arm, sim_robot.config.footprint, scenario.world)
        self.seen_frames = 0

    def advance(self) -> None:
        """:data:`STEP` seconds of the task; cycle by cycle while a takeover is to come."""
        sim_robot, core = self.sim_robot, self.core
        if self.pending is None:
            sim_robot.send(Heartbeat())
            sim_robot.run_for(STEP)
            return
        for _ in range(round(STEP / core.period)):
            task = self.autonomy.task
            entered = task.history[-1].start if task.history else core.control.now
            if self.pending is not None and self.pending.due(
                task.phase, core.control.now - entered
            ):
                self.pending = None
                self._take_over()
            sim_robot.send(Heartbeat())
            sim_robot.run_for(core.period)

    def _take_over(self) -> None:
        result = self.result
        result.took_over = True
        outcome = take_over(self.sim_robot)
        result.takeover_phase = outcome.phase.name.lower()
        result.stopped_in_one_cycle = outcome.stopped_in_one_cycle
        result.resumed_phase = outcome.resumed_phase

    def look(self, t: float) -> None:
        """The judge's look at ``t``: false sightings in a new frame (before the box may be
        moved), the box carried away during the approach, the base and the arm against the
        objects, and the timeline."""
        result, box, v = self.result, self.box, self.sim_robot.sim.vehicle
        task = self.autonomy.task
        perception = self.autonomy.perception
        base = Pose(v.x, v.y, v.theta)
        if perception.frames > self.seen_frames:
            self.seen_frames = perception.frames
            sightings = perception.sightings[0]
            result.false_detections += self.judge.false_sighting(sightings, base, box)
        if (
            self.move_object
            and not result.moved
            and task.phase == TaskPhase.APPROACH_OBJECT
            and math.dist(box.centre[:2], (v.x, v.y)) < 3.0
        ):
            moved = _elsewhere(box.centre, self.scenario, self.sim_robot, self.move_rng)
            if moved is not None:
                box.centre = moved
                result.moved = True
        result.base_box_overlaps += self.judge.base_on_box(base, box)
        result.arm_collisions += self.judge.arm_hits(self.arm.q, base, box)
        if self.timeline:
            self._log(t, task.phase)

    def _log(self, t: float, phase: TaskPhase) -> None:
        result, box, v = self.result, self.box, self.sim_robot.sim.vehicle
        name = phase.name.lower()
        if not result.phases or result.phases[-1][1] != name:
            result.phases.append((t, name))
        fixed = [
            {"name": o.name, "x": o.x, "y": o.y, "z": o.height / 2, "yaw": o.yaw}
            for o in self.scenario.world.objects
            if not o.movable
        ]
        moving = {"name": box.name, "x": float(box.centre[0]), "y": float(box.centre[1]),
                  "z": float(box.centre[2]), "yaw": box.yaw, "held": box.held}  # fmt: skip
        robot = {"name": "robot", "x": v.x, "y": v.y, "yaw": v.theta}
        result.objects.append((t, json.dumps([moving, *fixed, robot])))

    @property
    def over(self) -> bool:
        """The task has ended in its own mode (not while the operator holds the robot)."""
        return not self.autonomy.task.running and self.core.modes.mode == Mode.AUTONOMY

    def finish(self, t: float) -> DisposalResult:
        """The result after ``t`` seconds: where the task ended, and where the box lies."""
        result, task, box = self.result, self.autonomy.task, self.box
        receptacle = next(o for o in self.scenario.world.objects if o.name == "receptacle")
        result.phase = task.phase
        result.duration = t
        result.recoveries = task.recoveries
        result.failure = task.failure
        result.frames = self.autonomy.perception.frames
        result.base_contacts = self.sim_robot.sim.vehicle.contacts
        result.phase_times = {p.name.lower(): d for p, d in phase_durations(task.history).items()}
        result.drop_error = math.dist(box.centre[:2], (receptacle.x, receptacle.y))
        result.success = (
            task.phase == TaskPhase.DONE and not box.held and result.drop_error < receptacle.radius
        )
        return result


def disposal_trial(
    seed: int,
    robot: str = "taros",
    *,
    takeover: Takeover | bool | None = None,
    move_object: bool = False,
    limit: float = 300.0,
    config: RobotConfig | None = None,
    timeline: bool = False,
    camera_off: bool = False,
    hue_tolerance: float = 12.0,
    open_loop: bool | None = None,
    speed_error: float = ARM_SPEED_ERROR,
    describe_height: bool = True,
    local_camera: bool | None = None,
) -> DisposalResult:
    """One seeded trial; ``takeover``: an operator takes over for 2 s and hands back, when
    :class:`Takeover` says (True: one drawn from the seed); ``move_object``: the object is
    carried away while the robot approaches it. To break it on purpose: ``camera_off`` (every
    frame black), ``hue_tolerance`` (the detector's window, ± degrees; 12 as configured).
    ``open_loop`` (default: on the M2P2 only, as Kievit-Kylar ran it): the arm has no encoders,
    the program counts its joints from the resting pose by the velocities it commanded and
    their times, and each joint's true speed differs from the commanded one by a factor
    drawn from the seed within ±``speed_error``. ``describe_height``: the operator tells the
    robot the object's height (to the centimetre) beside the colours, as an operator who has
    seen it on the camera would; False: the colours alone (a look-alike of the object's hue
    is then as likely to be grasped as the object). ``local_camera`` (default: on the M2P2
    only, as Kievit-Kylar ran it): the task sees through a webcam wired to the program's
    computer at :data:`WEBCAM_RATE`, its frames as captured, not through the link's JPEG."""
    scenario = eod_scenario(seed, robot)
    config = config or load_robot(robot)
    if open_loop is None:
        open_loop = robot == "m2p2"
    if local_camera is None:
        local_camera = robot == "m2p2"
    sim_robot = _robot_in_scene(
        scenario, config, open_loop=open_loop, speed_error=speed_error, camera_off=camera_off
    )
    autonomy = sim_robot.core.autonomy
    assert autonomy is not None
    if local_camera:
        autonomy.use_local_camera(WEBCAM_RATE)
    box = next(o for o in scenario.world.objects if o.name == "suspicious object")
    autonomy.set_colors(
        ColorTarget(scenario.object_hue, hue_tolerance),
        ColorTarget(scenario.receptacle_hue, hue_tolerance),
        round(box.height, 2) if describe_height else None,
    )
    if takeover is True:
        takeover = Takeover.drawn(np.random.default_rng([seed, 8]))
    pending = takeover or None
    result = DisposalResult(
        seed, robot, False, TaskPhase.IDLE, 0.0, {}, 0, 0, 0, 0, 0, 0,
        distractor_inside=scenario.distractor_inside, open_loop=open_loop,
        local_camera=local_camera,
    )  # fmt: skip
    if pending is not None:
        result.takeover = f"{pending.phase.name.lower()} +{pending.after:.1f} s"
    run = _Run(sim_robot, scenario, result, pending, move_object=move_object, timeline=timeline)
    sim_robot.send(ModeChange(Mode.AUTONOMY))
    t = 0.0
    while t < limit:
        run.advance()
        t += STEP
        run.look(t)
        if run.over:
            break
    return run.finish(t)

"""``arm-fuzz``: a careless operator jogs the arm at full speed toward the robot's body, the
ground and the arm itself, with the anti-collision check on and, as the control, off.

Each trial is a seeded sequence of jogs on the simulated arm (first-order lag, joint limits;
physics every 5 ms, the check every 20 ms as a robot's control cycle would run it). A jog
steers every arm joint at full speed toward a pose where boxes of a checked pair intersect
(a pose in the body, the ground or the arm itself, drawn at random), or drives one joint at full
speed. With the check on, every stop is answered the way an operator would: the reverse jog,
which must move the arm away (else the arm is *wedged*). Every physics step a judge apart from
the check (:class:`~freelook.experiments._arm_contact.ContactJudge`: the URDF's visual
geometry, its own kinematics, python-fcl) says which link pairs are in contact: the pairs the
check is given, and every other pair that can meet by motion (those the SRDF leaves out),
counted apart.

Where the checked pairs come from: the URDF's collision boxes, every pair of them (325 for
TAROS's 26), minus the pairs the SRDF disables (182: 130 adjacent, 52 never in contact), 143
for TAROS; the TAROS paper (TAROS 2018) checked 94 pairs of its own model.

``record`` writes every trial's joint states to one MCAP file, per control cycle:
``/joint_states`` for the trials with the check, ``/control/joint_states`` for the same
trials without it (``sensor_msgs/JointState``, the URDF's joint names), the trials laid end to
end in time (each starts a second after the longer of the pair before it ended; the check-on
and the check-off run of a seed start together), ``/arm_fuzz/trials`` saying which trial
starts when, and the URDF on ``/robot_description``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from freelook.arm import ArmGuard, ArmModel, ArmPhase, load_arm, pair_separations
from freelook.config import ArmConfig, load_robot
from freelook.experiments._arm_contact import ContactJudge
from freelook.experiments._faults import active, arm_check_off, arm_config
from freelook.experiments._result import ExperimentResult, Row
from freelook.sim.arm import SimulatedArm

__all__ = ["ArmFuzzTrial", "arm_fuzz", "arm_fuzz_trial"]

F64 = npt.NDArray[np.float64]

PHYSICS_DT = 0.005
CONTROL_EVERY = 4  # physics steps per control cycle (20 ms)
TRIAL_SECONDS = 8.0
BACK_OUT_SECONDS = 0.4
KINDS = ("body", "ground", "self", "joint")


@dataclass
class ArmFuzzTrial:
    """What one trial saw."""

    intersecting_steps: int = 0  # physics steps with a judged contact on a checked pair
    unchecked_steps: int = 0  # physics steps with a contact on a pair the check is not given
    unchecked_pairs: set[tuple[str, str]] = field(default_factory=set)
    stops: int = 0
    slowdowns: int = 0  # control cycles in the slow phase
    wedged: int = 0  # stops the reverse jog could not leave
    kinds: dict[str, int] = field(default_factory=dict)
    travel: float = 0.0  # rad the arm's joints truly moved, summed over joints and steps


def _pair_kinds(model: ArmModel) -> dict[str, npt.NDArray[np.bool_]]:
    """Which checked pairs are arm–body, arm–ground and arm–arm."""
    moving = np.zeros(len(model.link_names), dtype=bool)
    for i in range(len(model.link_names)):  # topological order: parents first
        parent = model.link_parent[i]
        moving[i] = model.link_q[i] >= 0 or (parent >= 0 and moving[parent])
    box_moving = moving[model.box_link]
    ground = np.array([name == "ground" for name in model.box_links])
    a, b = model.pair_a, model.pair_b
    both = box_moving[a] & box_moving[b]
    with_ground = ground[a] | ground[b]
    return {"self": both, "ground": with_ground, "body": ~both & ~with_ground}


def _targets(model: ArmModel, rng: np.random.Generator, kind: str, n: int) -> F64:
    """Random poses within the limits where some checked pair of ``kind`` intersects."""
    mask = _pair_kinds(model)[kind]
    if not mask.any():
        return np.zeros((0, model.n_joints))
    q = rng.uniform(model.lower, model.upper, (n * 20, model.n_joints))
    q[:, model.gripper_joints] = model.upper[model.gripper_joints]
    hit = (pair_separations(model, q)[:, mask] <= 0).any(axis=1)
    return q[hit][:n]


def _jogs(model: ArmModel, rng: np.random.Generator) -> list[tuple[float, F64 | int]]:
    """The operator's plan: (duration, target pose or ±(joint number)) per jog."""
    pools = {kind: _targets(model, rng, kind, 8) for kind in KINDS[:3]}
    jogs: list[tuple[float, F64 | int]] = []
    total = 0.0
    while total < TRIAL_SECONDS:
        duration = float(rng.uniform(0.5, 2.0))
        kind = KINDS[int(rng.integers(len(KINDS)))]
        pool = pools.get(kind)
        if pool is not None and len(pool):
            jogs.append((duration, pool[int(rng.integers(len(pool)))]))
        else:
            joint = int(rng.integers(len(model.arm_joints))) + 1
            jogs.append((duration, joint if rng.random() < 0.5 else -joint))
        total += duration
    return jogs


def _full_speed(model: ArmModel, q: F64, target: F64 | int) -> F64:
    """The operator's stick pushed all the way: toward ``target`` or along one joint."""
    v = np.zeros(model.n_joints)
    arm = model.arm_joints
    if isinstance(target, int):
        j = arm[abs(target) - 1]
        v[j] = np.sign(target) * model.max_velocity[j]
        return v
    delta = (target - q)[arm]
    ratio = float(np.max(np.abs(delta) / model.max_velocity[arm]))
    if ratio > 1e-9:
        v[arm] = delta / ratio
    return v


#: a drive's true speed for a commanded one is off by up to this share (±), per joint
DRIVE_ERROR = 0.05
#: the joints' true lag is the description's times a factor in this range
LAG_SPREAD = (0.8, 1.25)

#: the least share of a session's unguarded joint travel the guarded session must achieve
PROGRESS = 0.5

StepListener = Callable[[float, F64, F64], None]  # (trial time, joint positions, velocities)


def arm_fuzz_trial(
    model: ArmModel,
    guard: ArmGuard | None,
    seed: int,
    time_constant: float,
    on_cycle: StepListener | None = None,
    judge: ContactJudge | None = None,
) -> ArmFuzzTrial:
    """One operator session: ``guard`` None runs the control, without the check;
    ``on_cycle`` sees the arm every control cycle; ``judge`` says which pairs are in contact
    (None: the model's own boxes, unpadded, on the checked pairs only)."""
    rng = np.random.default_rng(seed)
    # the arm as built differs from its description: each drive runs a little faster or
    # slower than commanded, and the joints lag by more or less than the description says
    drives = np.random.default_rng([seed, 2003])
    arm = SimulatedArm(model, time_constant=time_constant * drives.uniform(*LAG_SPREAD))
    arm.speed_scale = 1.0 + drives.uniform(-DRIVE_ERROR, DRIVE_ERROR, len(model.arm_joints))
    result = ArmFuzzTrial()
    arm_joints = model.arm_joints
    for duration, target in _jogs(model, rng):
        left = round(duration / PHYSICS_DT)
        back_out: F64 | None = None  # the reverse jog after a stop, and where it started
        stopped_at = arm.q.copy()
        k = 0
        while left > 0:
            if k % CONTROL_EVERY == 0:
                measured = arm.q.copy()
                measured[arm_joints] = arm.encoders()
                wanted = _full_speed(model, measured, target) if back_out is None else back_out
                if guard is None:
                    sent = wanted
                else:
                    d = guard.check(measured, wanted, arm.now)
                    sent = d.velocities
                    result.slowdowns += d.phase == ArmPhase.SLOW
                    if d.phase == ArmPhase.STOP and back_out is None and wanted.any():
                        result.stops += 1
                        back_out, stopped_at = -wanted, arm.q.copy()
                        left = round(BACK_OUT_SECONDS / PHYSICS_DT)
                arm.command_velocities(sent[arm_joints])
                if on_cycle is not None:
                    on_cycle(arm.now, arm.q, arm.qd)
            before = arm.q[arm_joints].copy()
            arm.step(PHYSICS_DT)
            result.travel += float(np.sum(np.abs(arm.q[arm_joints] - before)))
            k += 1
            left -= 1
            if judge is None:
                result.intersecting_steps += pair_separations(model, arm.q, 0.0, 0.0).min() <= 0
                continue
            contacts = judge.contacts(arm.q)
            result.intersecting_steps += bool(contacts.checked)
            result.unchecked_steps += bool(contacts.unchecked)
            result.unchecked_pairs.update(contacts.unchecked)
        if back_out is not None and np.max(np.abs(arm.q - stopped_at)) < 0.01:
            result.wedged += 1
    return result


class _TrialRecorder:
    """Every trial's joint states into one MCAP file, the trials laid end to end in time."""

    def __init__(self, path: Path, model: ArmModel, urdf: str) -> None:
        from freelook.record import Recorder

        self.start = 0.0  # when the current trial starts in the file
        self.end = 0.0  # the latest stamp written
        self.recorder = Recorder(path, clock=lambda: self.end)
        self.names = [model.joint_names[j] for j in (*model.arm_joints, *model.gripper_joints)]
        self.joints = np.array([*model.arm_joints, *model.gripper_joints], dtype=np.int64)
        self.recorder.robot_description(0.0, urdf)

    def trial(self, index: int, seed: int) -> tuple[StepListener, StepListener]:
        """Listeners for trial ``index`` with the check and without it."""
        self.start = self.end + (1.0 if index else 0.0)
        note = {"data": f"trial {index}: seed {seed}, starts at {self.start:.3f} s"}
        self.end = self.start
        self.recorder.write("/arm_fuzz/trials", "std_msgs/String", note, self.start)

        def listener(topic: str) -> StepListener:
            def write(t: float, q: F64, qd: F64) -> None:
                stamp = self.start + t
                self.end = max(self.end, stamp)
                positions, velocities = q[self.joints].tolist(), qd[self.joints].tolist()
                with self.recorder.logged_at(stamp):
                    self.recorder.joint_states(stamp, self.names, positions, velocities, topic)

            return write

        return listener("/joint_states"), listener("/control/joint_states")

    def close(self) -> None:
        self.recorder.close()


@dataclass(frozen=True)
class _Tally:
    """The trials with the check on and off, counted for the table."""

    trials: int
    hit_on: int  # trials with a contact on a checked pair
    hit_off: int
    loose_on: int  # trials with a contact on a pair the check is not given
    loose_off: int
    loose_pairs: list[tuple[str, str]]
    wedged: int  # trials with a wedged arm, check on
    stops: int  # stops in all, check on
    steps_on: int  # physics steps with a contact on a checked pair
    steps_off: int
    slowdowns: float  # control cycles slowed per trial, check on
    #: the least trial's joint travel with the check on over the same session's without it
    progress: float = 0.0

    @classmethod
    def of(cls, on: list[ArmFuzzTrial], off: list[ArmFuzzTrial]) -> _Tally:
        trials = len(on)
        return cls(
            trials,
            hit_on=sum(t.intersecting_steps > 0 for t in on),
            hit_off=sum(t.intersecting_steps > 0 for t in off),
            loose_on=sum(t.unchecked_steps > 0 for t in on),
            loose_off=sum(t.unchecked_steps > 0 for t in off),
            loose_pairs=sorted(set().union(*(t.unchecked_pairs for t in on + off))),
            wedged=sum(t.wedged > 0 for t in on),
            stops=sum(t.stops for t in on),
            steps_on=sum(t.intersecting_steps for t in on),
            steps_off=sum(t.intersecting_steps for t in off),
            slowdowns=sum(t.slowdowns for t in on) / max(trials, 1),
            progress=min(
                (a.travel / b.travel for a, b in zip(on, off, strict=True) if b.travel > 0),
                default=0.0,
            ),
        )


def _sessions(
    model: ArmModel,
    guard: ArmGuard | None,
    judge: ContactJudge,
    time_constant: float,
    trials: int,
    seed: int,
    progress: Callable[[int, int], None],
    recording: _TrialRecorder | None,
) -> _Tally:
    """``trials`` seeded sessions with ``guard``, each beside the same session without it."""
    on: list[ArmFuzzTrial] = []
    off: list[ArmFuzzTrial] = []
    try:
        for k in range(trials):
            checked = unchecked = None
            if recording is not None:
                checked, unchecked = recording.trial(k, seed + k)
            on.append(arm_fuzz_trial(model, guard, seed + k, time_constant, checked, judge))
            off.append(arm_fuzz_trial(model, None, seed + k, time_constant, unchecked, judge))
            progress(k + 1, trials)
    finally:
        if recording is not None:
            recording.close()
    return _Tally.of(on, off)


def _conditions(
    robot: str, model: ArmModel, config: ArmConfig, judge: ContactJudge, seeds: str, broken: bool
) -> str:
    every = model.n_boxes * (model.n_boxes - 1) // 2
    return (
        f"{robot}: {model.n_boxes} boxes, {model.n_pairs} checked pairs (all {every} pairs of"
        f" freelook's URDF's collision boxes minus the SRDF's {every - model.n_pairs} disabled"
        " ones; not the paper's own model"
        + (", whose TAROS checked 94 pairs" if robot == "taros" else "")
        + "),"
        f" t_ext {config.slow_time:g} s slow / {config.stop_time:g} s stop;"
        f" the arm as built: each drive ±{100 * DRIVE_ERROR:g} % off its commanded speed, the"
        f" joints' lag {LAG_SPREAD[0]:g}–{LAG_SPREAD[1]:g} × the description's,"
        f" {seeds}; contact judged on the URDF's visual geometry with"
        f" python-fcl on {len(judge.checked_pairs)} checked and {len(judge.unchecked_pairs)}"
        " unchecked link pairs"
        + (" (broken on purpose: the check off in the check-on sessions)" if broken else "")
        + (f" (broken on purpose: {fault.value})" if (fault := active()) is not None else "")
    )


def _rows(tally: _Tally, conditions: str) -> list[Row]:
    trials, loose_pairs = tally.trials, tally.loose_pairs
    return [
        Row(
            "trials with a contact on a checked pair, check on",
            "none (qualitative)",
            f"{tally.hit_on} of {trials} ({tally.steps_on} physics steps)",
            "0",
            tally.hit_on == 0,
            conditions,
        ),
        Row(
            "trials with a contact on a pair the check is not given (SRDF-disabled), check on"
            " / off",
            "",
            f"{tally.loose_on} / {tally.loose_off} of {trials}"
            + (f" ({', '.join('–'.join(p) for p in loose_pairs[:6])})" if loose_pairs else ""),
            "",
            None,
            "reported, not judged: the SRDF disables these as adjacent (links joined through"
            " fixed links, the usual setup-assistant rule), whose shapes meet at the joint by"
            " design, so the check never looks at them; the judge counts them when the shapes"
            " reach more than 1 mm into each other (a pair touching only at a joint's end stop"
            " may still be a real self-collision the SRDF hides)",
        ),
        Row(
            "trials with a wedged arm (a stop the reverse jog cannot leave)",
            "",
            f"{tally.wedged} of {trials} ({tally.stops} stops in all)",
            "0",
            tally.wedged == 0,
        ),
        Row(
            "trials with a contact on a checked pair, check off (control)",
            "",
            f"{tally.hit_off} of {trials} ({tally.steps_off} physics steps)",
            "> 0",
            tally.hit_off > 0,
        ),
        Row(
            "commanded motion achieved with the check on: joint travel over the same"
            " session's without the check, the least trial",
            "",
            f"{tally.progress:.0%}",
            f"≥ {PROGRESS:.0%}",
            tally.progress >= PROGRESS,
            "a guard that holds the arm still never collides: the jogs must move it",
        ),
        Row(
            "control cycles slowed (phase 1) per trial, check on",
            "",
            f"{tally.slowdowns:.1f}",
        ),
    ]


def arm_fuzz(
    trials: int,
    seed: int,
    progress: Callable[[int, int], None],
    robot: str = "taros",
    record: Path | None = None,
    *,
    guard_off: bool = False,
) -> ExperimentResult:
    """``trials`` sessions with the check on and the same sessions with it off; ``record``:
    every trial's joint states into this MCAP file; ``guard_off`` breaks it on purpose (the
    "check on" sessions run without it)."""
    described = load_robot(robot).arm
    if described is None:
        raise ValueError(f"robot {robot!r} has no arm")
    config = arm_config(described)
    model = load_arm(config.urdf, config.srdf)
    guard_off = guard_off or arm_check_off()
    guard = None if guard_off else ArmGuard.from_config(model, config)
    judge = ContactJudge(config.urdf, model)
    recording = _TrialRecorder(record, model, config.urdf.read_text()) if record else None
    tau = config.joint_time_constant
    tally = _sessions(model, guard, judge, tau, trials, seed, progress, recording)
    result = ExperimentResult(
        "arm-fuzz",
        f"Careless arm jogging on {robot}: anti-collision check on, and off as the control",
        "TAROS 2018 (TAROS anti-collision: boxes, extrapolation, two phases)",
        "",
    )
    seeds = f"seeds {seed}–{seed + trials - 1}"
    result.rows += _rows(tally, _conditions(robot, model, config, judge, seeds, guard_off))
    result.details.update(
        robot=robot,
        pairs=model.n_pairs,
        boxes=model.n_boxes,
        stops=tally.stops,
        intersecting_trials_on=tally.hit_on,
        intersecting_trials_off=tally.hit_off,
        unchecked_contact_trials_on=tally.loose_on,
        unchecked_contact_trials_off=tally.loose_off,
        unchecked_pairs_in_contact=[list(p) for p in tally.loose_pairs],
        judged_pairs={"checked": len(judge.checked_pairs), "unchecked": len(judge.unchecked_pairs)},
        wedged_trials=tally.wedged,
        progress=tally.progress,
    )
    return result

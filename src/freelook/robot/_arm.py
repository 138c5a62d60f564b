"""The robot program's arm (sans-I/O): the operator's joint-velocity and gripper commands pass
through the anti-collision check every control cycle, on their way to the HAL's arm.

Nothing reaches the joints unchecked: each cycle the measured joints (the encoders, the
gripper's opening) and the newest command are checked by :class:`freelook.arm.ArmGuard`, and
only what it lets through is commanded. A command is refused outright (the arm keeps standing)
when it names the wrong number of joints, is not finite, or asks a joint for more than its
URDF velocity limit; a gripper opening outside the fingers' travel likewise; a refusal also
forgets the command held before it. Outside the arm mode, and while the e-stop, the watchdog
or a lost hardware connection holds the robot, the check is run with a zero command and the
held command is forgotten: the arm stands, the gripper keeps its opening, and nothing resumes
until the station sends a new command.

An arm without encoders (``encoders = false``, Kievit-Kylar's M2P2) is counted instead: it
starts at its resting pose (held there by physical stops) and each cycle's checked velocities
times the cycle's period are added up, clipped at the joints' limits; the check, the task and
telemetry see that count, and any drive speed unlike the commanded one shows as an error
nothing here measures.

Telemetry reports the most restrictive phase, and every pair in a phase, since the previous
report: a slow phase between two reports is not lost to the operator.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import numpy.typing as npt

from freelook.arm import ArmDecision, ArmGuard, ArmModel, ArmPhase, load_arm
from freelook.config import ArmConfig
from freelook.hal import Arm
from freelook.link import ARM_PHASES, ArmTelemetry, ArmVelocityCommand, GripperCommand

__all__ = ["RobotArm"]

F64 = npt.NDArray[np.float64]


class RobotArm:
    """One arm's commands, held and checked once per control cycle."""

    def __init__(
        self, model: ArmModel, guard: ArmGuard, arm: Arm, period: float, *, encoders: bool = True
    ) -> None:
        self.model = model
        self.encoders = encoders
        self.guard = guard
        self.hw = arm
        self.period = period
        names = tuple(model.joint_names[j] for j in model.arm_joints)
        if tuple(arm.joint_names) != names:
            raise ValueError(f"the arm's joints {arm.joint_names} are not the URDF's {names}")
        self._jogged = model.arm_joints
        self._finger = int(model.gripper_joints[0]) if len(model.gripper_joints) else -1
        self.max_opening = 2 * float(model.upper[self._finger]) if self._finger >= 0 else 0.0
        self._q = model.ready.copy()
        #: without encoders: the joints as counted from the resting pose
        self._counted = model.ready[model.arm_joints].copy()
        self._commanded = np.zeros(len(model.arm_joints))
        self._velocities = np.zeros(len(self._jogged))  # the newest accepted command
        self._opening: float | None = None  # the newest accepted gripper opening
        self._pair_index = {pair: k for k, pair in enumerate(model.pair_names)}
        self.last: ArmDecision | None = None
        self._phase = ArmPhase.CLEAR  # since the last report
        self._phases: list[int] = [ArmPhase.CLEAR]  # gone through since then, the newest kept
        self._slow: set[int] = set()
        self._stop: set[int] = set()

    @classmethod
    def from_config(cls, config: ArmConfig, arm: Arm, period: float) -> RobotArm:
        model = load_arm(config.urdf, config.srdf)
        guard = ArmGuard.from_config(model, config)
        return cls(model, guard, arm, period, encoders=config.encoders)

    # -- commands ----------------------------------------------------------------------------

    def command(self, message: ArmVelocityCommand) -> str | None:
        """Take the operator's joint velocities (held until the next); the reason it is
        refused, or None."""
        refusal = self._refusal(message)
        if refusal is not None:
            self.stop()  # a refused command never leaves an older one running
            return refusal
        self._velocities = np.array(message.velocities, dtype=np.float64)
        return None

    def _refusal(self, message: ArmVelocityCommand) -> str | None:
        v = message.velocities
        n = len(self._jogged)
        if len(v) != n:
            return f"arm command of {len(v)} joints; {self.model.name} jogs {n}"
        limits = self.model.max_velocity[self._jogged]
        for name, value, limit in zip(self.hw.joint_names, v, limits.tolist(), strict=True):
            if not abs(value) <= limit:  # NaN fails too
                return f"arm joint {name} at {value!r}, beyond its limit of {limit:g}"
        return None

    def grip(self, message: GripperCommand) -> str | None:
        """Take a gripper opening (held until the next); the reason it is refused, or None."""
        if self._finger < 0:
            return f"{self.model.name} has no gripper"
        if not 0.0 <= message.opening <= self.max_opening:
            self.stop()
            return f"gripper opening {message.opening!r} outside 0…{self.max_opening:g} m"
        self._opening = message.opening
        return None

    def stop(self) -> None:
        """Forget the held command: the arm stands until the next."""
        self._velocities = np.zeros(len(self._jogged))
        self._opening = None

    def joints(self) -> F64:
        """The model's joint vector as measured: the encoders, the gripper's half opening."""
        q = self._q.copy()
        q[self._jogged] = self._positions()
        if self._finger >= 0:
            q[self._finger] = self.hw.gripper_state().opening / 2
        return q

    # -- the control cycle -------------------------------------------------------------------

    def step(self, now: float, *, active: bool, held: bool) -> ArmDecision:
        """Check the held command (zero unless ``active`` and not ``held``) at the measured
        joints and command what the check lets through."""
        q = self._q
        q[self._jogged] = self._positions()
        wanted = np.zeros(self.model.n_joints)
        if not active or held:
            # out of the arm mode, or stopped by safety: a jog never resumes by itself
            self.stop()
        moving = active and not held
        if moving:
            wanted[self._jogged] = self._velocities
        target = None
        if self._finger >= 0:
            opening = self.hw.gripper_state().opening
            q[self._finger] = opening / 2
            if moving and self._opening is not None:
                target = self._opening
                # the fingers' motion toward the target within one cycle, checked like a jog
                rate = (target - opening) / 2 / self.period
                limit = float(self.model.max_velocity[self._finger])
                wanted[self._finger] = max(-limit, min(limit, rate))
        decision = self.guard.check(q, wanted, now)
        commanded = decision.velocities[self._jogged]
        self.hw.command_velocities(commanded.tolist())
        self._commanded = commanded
        if not self.encoders:  # this cycle's motion, as commanded, in the count
            jogged = self._jogged
            self._counted = np.clip(
                self._counted + commanded * self.period,
                self.model.lower[jogged],
                self.model.upper[jogged],
            )
        if self._finger >= 0:
            finger = decision.velocities[self._finger]
            if target is not None and (wanted[self._finger] == 0 or finger != 0):
                self.hw.command_gripper(target)
            else:
                self.hw.command_gripper(q[self._finger] * 2)  # the fingers stay where they are
        self.last = decision
        self._phase = max(self._phase, decision.phase)
        if self._phases[-1] != decision.phase:
            self._phases.append(int(decision.phase))
            del self._phases[:-ARM_PHASES]
        self._slow.update(self._indices(decision.slow_pairs))
        self._stop.update(self._indices(decision.stop_pairs))
        return decision

    def _positions(self) -> F64:
        """The arm joints' positions: the encoders', or the count without them."""
        if self.encoders:
            return np.asarray(self.hw.state().positions, dtype=np.float64)
        return self._counted.copy()

    # -- telemetry ---------------------------------------------------------------------------

    def telemetry(self) -> ArmTelemetry:
        """The arm's state for the operator; a broken encoder's non-finite reading is sent as
        0 (the check has refused to move the arm on it), so telemetry still goes out."""
        state = self.hw.state()
        if not self.encoders:  # nothing measured: the count, and the velocities commanded
            state = dataclasses.replace(
                state,
                positions=tuple(self._counted.tolist()),
                velocities=tuple(self._commanded.tolist()),
            )
        gripper = self.hw.gripper_state()
        phase, slow, stop = self._phase, tuple(sorted(self._slow)), tuple(sorted(self._stop))
        phases = tuple(self._phases)
        last = self.last
        if last is not None:  # the next report starts from the check now
            self._phase = last.phase
            self._phases = [int(last.phase)]
            self._slow = set(self._indices(last.slow_pairs))
            self._stop = set(self._indices(last.stop_pairs))
        opening = gripper.opening if math.isfinite(gripper.opening) else 0.0
        return ArmTelemetry(
            positions=_sendable(state.positions, 1e3),
            velocities=_sendable(state.velocities, 20.0),
            gripper_opening=min(max(opening, 0.0), 1.0),
            gripper_holding=gripper.holding,
            phase=int(phase),
            slow_pairs=slow,
            stop_pairs=stop,
            phases=phases,
        )

    def _indices(self, pairs: tuple[tuple[str, str], ...]) -> tuple[int, ...]:
        return tuple(self._pair_index[p] for p in pairs)


def _sendable(values: tuple[float, ...], bound: float) -> tuple[float, ...]:
    array = np.nan_to_num(
        np.asarray(values, dtype=np.float64), nan=0.0, posinf=bound, neginf=-bound
    )
    return tuple(np.clip(array, -bound, bound).tolist())

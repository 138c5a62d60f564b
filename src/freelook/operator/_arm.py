"""The station's side of the arm (sans-I/O): the operator's jog inputs become arm commands,
and the arm the robot reports becomes boxes posed for the page's 3-D view.

Joint by joint, a deflection in [−1, 1] of each jogged joint is that share of ``speed`` times
the joint's URDF velocity limit. A Cartesian jog moves the tool point along a direction in
the robot's frame at ``tool_speed``: the joint velocities come from damped least squares on
the tool position's Jacobian at the measured joints (finite differences of the forward
kinematics), held to the joints' limits by one factor so the tool keeps its direction. The
robot checks every command against its own limits and its anti-collision check; nothing here
is trusted by it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from freelook.arm import ArmModel, box_poses, load_arm, tool_pose
from freelook.config import ArmConfig
from freelook.link import ArmTelemetry, ArmVelocityCommand, GripperCommand

__all__ = ["ArmJog"]

F64 = npt.NDArray[np.float64]
#: the phases kept between two of the page's views, the newest (a page that stalls for
#: seconds loses the oldest, never the newest)
_PHASES_KEPT = 64


class ArmJog:
    """One robot's arm as the operator station sees it."""

    def __init__(
        self,
        model: ArmModel,
        *,
        speed: float = 0.5,
        tool_speed: float = 0.15,
        damping: float = 0.05,
    ) -> None:
        self.model = model
        self.speed = speed
        self.tool_speed = tool_speed
        self.damping = damping
        self._jogged = model.arm_joints
        self._limits = model.max_velocity[model.arm_joints]
        self._phase = 0  # the most restrictive phase since the page's last view
        self._phases: list[int] = []  # every phase reported since then, in order
        self._slow: set[int] = set()
        self._stop: set[int] = set()
        g = model.gripper_joints
        self._finger = int(g[0]) if len(g) else -1
        self.max_opening = 2 * float(model.upper[self._finger]) if self._finger >= 0 else 0.0

    @classmethod
    def from_config(cls, config: ArmConfig) -> ArmJog:
        return cls(load_arm(config.urdf, config.srdf))

    @property
    def joint_names(self) -> tuple[str, ...]:
        return tuple(self.model.joint_names[j] for j in self._jogged)

    # -- commands ----------------------------------------------------------------------------

    def joints(self, deflections: tuple[float, ...]) -> ArmVelocityCommand | None:
        """Joint by joint: one deflection in [−1, 1] per jogged joint (None: wrong count)."""
        if len(deflections) != len(self._jogged):
            return None
        d = np.clip(np.asarray(deflections, dtype=np.float64), -1.0, 1.0)
        return ArmVelocityCommand(tuple((d * self._limits * self.speed).tolist()))

    def cartesian(
        self, direction: tuple[float, float, float], positions: tuple[float, ...]
    ) -> ArmVelocityCommand | None:
        """The tool point along ``direction`` (robot frame: x forward, y left, z up; each in
        [−1, 1]) from the measured ``positions`` (None: they do not fit this arm)."""
        if len(positions) != len(self._jogged):
            return None
        q = self.model.ready.copy()
        q[self._jogged] = positions
        wanted = np.clip(np.asarray(direction, dtype=np.float64), -1.0, 1.0) * self.tool_speed
        h = 1e-6
        probe = np.repeat(q[None], len(self._jogged) + 1, axis=0)
        probe[np.arange(1, len(self._jogged) + 1), self._jogged] += h
        p = tool_pose(self.model, probe)[:, :3, 3]
        jacobian = ((p[1:] - p[0]) / h).T  # (3, n)
        normal = jacobian @ jacobian.T + self.damping**2 * np.eye(3)
        dq = jacobian.T @ np.linalg.solve(normal, wanted)
        peak = float(np.max(np.abs(dq) / (self._limits * self.speed)))
        if peak > 1.0:
            dq /= peak
        return ArmVelocityCommand(tuple(dq.tolist()))

    def gripper(self, fraction: float) -> GripperCommand | None:
        """The fingers ``fraction`` (0 closed … 1 open) of their widest apart."""
        if self._finger < 0:
            return None
        return GripperCommand(min(max(fraction, 0.0), 1.0) * self.max_opening)

    # -- the page's 3-D view -----------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        """What the page draws once: the boxes (name, full size), the jogged joints."""
        m = self.model
        moving = np.zeros(len(m.link_names), dtype=bool)  # links an actuated joint carries
        for k in range(len(m.link_names)):  # parents come before their children
            parent = int(m.link_parent[k])
            moving[k] = m.link_q[k] >= 0 or (parent >= 0 and bool(moving[parent]))
        return {
            "name": m.name,
            "arm_links": [name for k, name in enumerate(m.box_links) if moving[m.box_link[k]]],
            "joints": list(self.joint_names),
            "limits": self._limits.tolist(),
            "boxes": [
                {"name": name, "size": (2 * m.half_extents[k]).round(5).tolist()}
                for k, name in enumerate(m.box_links)
            ],
            "max_opening": self.max_opening,
        }

    def observe(self, arm: ArmTelemetry) -> None:
        """One telemetry report: its phase and pairs count until the page's next view, and the
        phases it went through (a slow phase between two reports is not lost either)."""
        self._phase = max(self._phase, arm.phase)
        for phase in arm.phases or (arm.phase,):
            if not self._phases or self._phases[-1] != phase:
                self._phases.append(phase)
        del self._phases[:-_PHASES_KEPT]
        self._slow.update(arm.slow_pairs)
        self._stop.update(arm.stop_pairs)

    def view(self, arm: ArmTelemetry) -> dict[str, Any] | None:
        """The boxes posed at the newest encoders, the most restrictive phase and the pairs in
        a phase since the previous view (a phase between two views is not lost)."""
        m = self.model
        if len(arm.positions) != len(self._jogged):
            return None
        phase, slow_pairs, stop_pairs = self._phase, sorted(self._slow), sorted(self._stop)
        phases = self._phases or [arm.phase]
        self._phase, self._slow, self._stop = arm.phase, set(arm.slow_pairs), set(arm.stop_pairs)
        self._phases = []
        q = m.ready.copy()
        q[self._jogged] = arm.positions
        if self._finger >= 0:
            q[self._finger] = arm.gripper_opening / 2
        centres, rotations = box_poses(m, q)
        pairs = m.pair_names
        n = len(pairs)
        slow = [pairs[k] for k in slow_pairs if k < n]
        stop = [pairs[k] for k in stop_pairs if k < n]
        return {
            "positions": [round(x, 5) for x in arm.positions],
            "velocities": [round(x, 4) for x in arm.velocities],
            "gripper": {"opening": arm.gripper_opening, "holding": arm.gripper_holding},
            "phase": ("clear", "slow", "stop")[phase],
            "phases": [("clear", "slow", "stop")[p] for p in phases],
            "slow_pairs": [list(p) for p in slow],
            "stop_pairs": [list(p) for p in stop],
            "red": sorted({name for pair in slow + stop for name in pair}),
            "centres": centres.round(5).tolist(),
            "rotations": rotations.round(6).reshape(len(centres), 9).tolist(),
        }

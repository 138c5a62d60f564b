"""A simulated arm: velocity-controlled joints with limits and first-order lag, encoders, and a
two-finger gripper that grasps, carries and releases :class:`ArmObject` boxes. It implements
the robot program's ``Arm`` hardware interface.

The joints the operator jogs (the SRDF's ``arm`` group) follow their commanded velocity with a
first-order lag and stop at their position limits. The gripper joints (group ``gripper``; one
value is half the opening between the two fingers) move to a commanded opening at their velocity
limit. Closing on an object that lies between the fingers stops them at the object's width: the
object is held and follows the tool until the gripper opens again, when it drops. Time is
advanced by :meth:`SimulatedArm.step`; nothing here reads a clock.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numba
import numpy as np
import numpy.typing as npt

from freelook.arm import ArmModel, link_transforms, tool_pose
from freelook.sim.arm._objects import ArmObject
from freelook.types import ArmState, GripperState

__all__ = ["SimulatedArm"]

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


@numba.njit(cache=True, nogil=True)
def _joints_kernel(
    q: F64,
    qd: F64,
    command: F64,
    joints: I64,
    vmax: F64,
    lower: F64,
    upper: F64,
    lag: float,
    dt: float,
) -> None:
    """First-order lag toward the commanded velocity (held to its limit), then integrate and
    stop at the position limits; in place."""
    for k in range(joints.shape[0]):
        j = joints[k]
        target = min(max(command[k], -vmax[j]), vmax[j])
        v = qd[j] + (target - qd[j]) * lag
        x = q[j] + v * dt
        if x >= upper[j]:
            x = upper[j]
            v = min(v, 0.0)
        elif x <= lower[j]:
            x = lower[j]
            v = max(v, 0.0)
        q[j] = x
        qd[j] = v


class SimulatedArm:
    """One arm on a base at (x, y, θ) in the world; sans-I/O, stepped by the simulator."""

    def __init__(
        self,
        model: ArmModel,
        *,
        time_constant: float = 0.05,
        encoder_resolution: float = 2 * math.pi / 2**16,
        objects: Sequence[ArmObject] = (),
        grasp_reach: float = 0.08,
    ) -> None:
        self.model = model
        self.time_constant = time_constant
        self.encoder_resolution = encoder_resolution
        self.objects = list(objects)
        self.grasp_reach = grasp_reach
        self.now = 0.0
        self.q = model.ready.copy()
        self.q[model.gripper_joints] = model.upper[model.gripper_joints]  # open
        self.qd = np.zeros(model.n_joints)
        self._command = np.zeros(len(model.arm_joints))
        #: each arm joint's true speed for a commanded one (1: as commanded); a drive's speed
        #: the program presumes is never exactly its own
        self.speed_scale = np.ones(len(model.arm_joints))
        self._opening = self.max_opening
        self._held: ArmObject | None = None
        self._grip: F64 | None = None  # the held object's centre in the tool frame
        self._base = (0.0, 0.0, 0.0)
        self._dt = math.nan
        self._lag = 1.0
        g = model.gripper_joints
        self._finger = int(g[0]) if len(g) else -1  # the gripper joint's index into q
        self._finger_moving = False

    # --- commands ---------------------------------------------------------------------------

    @property
    def joint_names(self) -> tuple[str, ...]:
        return tuple(self.model.joint_names[j] for j in self.model.arm_joints)

    @property
    def max_opening(self) -> float:
        """The widest opening between the fingers, m (twice a finger's travel)."""
        g = self.model.gripper_joints
        return 2 * float(self.model.upper[g[0]]) if len(g) else 0.0

    def command_velocities(self, velocities: Sequence[float] | F64) -> None:
        """Velocities of the ``arm`` joints (rad/s or m/s); non-finite values stop the arm."""
        command = self._command
        if isinstance(velocities, np.ndarray):
            ok = velocities.shape == command.shape and bool(np.isfinite(velocities).all())
        else:  # a list from the HAL: cheaper without an array
            try:
                ok = len(velocities) == len(command) and all(map(math.isfinite, velocities))
            except TypeError:  # not numbers
                ok = False
        if ok:
            command[:] = velocities
            command *= self.speed_scale
        else:
            command[:] = 0.0

    def command_gripper(self, opening: float) -> None:
        """Open (or close) the fingers to ``opening`` metres apart; non-finite is ignored."""
        if math.isfinite(opening):
            self._opening = min(max(opening, 0.0), self.max_opening)

    def set_base_pose(self, x: float, y: float, theta: float) -> None:
        """Where the robot stands: the arm's root frame in the world."""
        self._base = (x, y, theta)

    # --- state ------------------------------------------------------------------------------

    def encoders(self) -> F64:
        """Arm joint positions as the encoders read them (quantised)."""
        q = self.q[self.model.arm_joints]
        return np.round(q / self.encoder_resolution) * self.encoder_resolution

    def state(self) -> ArmState:
        """The ``arm`` joints' encoders (positions quantised) and velocities."""
        return ArmState(
            self.now,
            self.joint_names,
            tuple(self.encoders().tolist()),
            tuple(self.qd[self.model.arm_joints].tolist()),
        )

    def gripper_state(self) -> GripperState:
        return GripperState(self.now, self.opening, self._held is not None)

    @property
    def opening(self) -> float:
        g = self.model.gripper_joints
        return 2 * float(self.q[g[0]]) if len(g) else 0.0

    @property
    def held(self) -> ArmObject | None:
        return self._held

    def _base_frame(self) -> F64:
        x, y, theta = self._base
        c, s = math.cos(theta), math.sin(theta)
        return np.array([[c, -s, 0, x], [s, c, 0, y], [0, 0, 1, 0], [0, 0, 0, 1.0]])

    def tool_in_world(self) -> F64:
        """The tool frame (4×4) in the world frame."""
        return np.asarray(self._base_frame() @ tool_pose(self.model, self.q))

    def link_in_world(self, link: int) -> F64:
        """A link's frame (4×4) in the world frame at the joints' true positions (what a
        camera on that link sees from), ``link`` an index into the model's ``link_names``."""
        return np.asarray(self._base_frame() @ link_transforms(self.model, self.q)[link])

    # --- physics ----------------------------------------------------------------------------

    def step(self, dt: float) -> None:
        """Advance ``dt`` seconds: joints, gripper, and whatever the gripper holds."""
        if dt != self._dt:
            self._dt = dt
            tau = self.time_constant
            self._lag = 1.0 - math.exp(-dt / tau) if tau > 0 else 1.0
        m = self.model
        _joints_kernel(
            self.q, self.qd, self._command, m.arm_joints, m.max_velocity, m.lower, m.upper,
            self._lag, dt,
        )  # fmt: skip
        if self._gripper_busy():
            self._step_gripper(dt)
        self.now += dt
        if self._held is not None and self._grip is not None:
            self._held.centre = (self.tool_in_world() @ np.append(self._grip, 1.0))[:3]

    def _gripper_busy(self) -> bool:
        if self._finger < 0:
            return False  # no gripper
        if self._held is not None:
            return self._opening / 2 > self._held.width / 2 + 1e-4  # about to let go
        return self._finger_moving or self.q[self._finger] != self._opening / 2

    def _step_gripper(self, dt: float) -> None:
        m = self.model
        g = m.gripper_joints
        half = float(self.q[g[0]])
        goal = self._opening / 2
        if self._held is not None:
            goal = max(goal, self._held.width / 2)  # the fingers rest on the object
        speed = float(m.max_velocity[g[0]])
        step = max(-speed * dt, min(speed * dt, goal - half))
        new = half + step
        if step < 0 and self._held is None:
            caught = self._between_fingers(new)
            if caught is not None:
                new = max(new, caught.width / 2)
                self._grasp(caught)
        if self._held is not None and self._opening / 2 > self._held.width / 2 + 1e-4:
            self._release()
        self.q[g] = new
        self.qd[g] = (new - half) / dt if dt > 0 else 0.0
        self._finger_moving = new != half

    def _between_fingers(self, half_opening: float) -> ArmObject | None:
        """An object that lies between the fingers and that they now touch: the tool point
        within ``grasp_reach`` of the object's vertical axis, from its middle up to
        ``grasp_reach / 2`` under its top (a tall object is held by its upper part as well as
        by its middle; a short one only by its middle, as before)."""
        tool = self.tool_in_world()[:3, 3]
        for obj in self.objects:
            if obj.held or half_opening > obj.width / 2:
                continue
            middle = float(obj.centre[2])
            high = max(middle, middle + obj.size[2] / 2 - self.grasp_reach / 2)
            axis = np.array([obj.centre[0], obj.centre[1], min(max(tool[2], middle), high)])
            if np.linalg.norm(tool - axis) <= self.grasp_reach:
                return obj
        return None

    def _grasp(self, obj: ArmObject) -> None:
        tool = self.tool_in_world()
        self._grip = tool[:3, :3].T @ (obj.centre - tool[:3, 3])
        obj.held = True
        self._held = obj

    def _release(self) -> None:
        if self._held is not None:
            self._held.drop()
        self._held = None
        self._grip = None

"""A ROS 2 manipulator arm behind the HAL's :class:`~freelook.hal.Arm`.

Its joints are the URDF's (the description's ``[arm]``): the jogged joints and the gripper's
finger, whose position is half the opening between the fingers. Positions and velocities come
on ``joint_states`` (the topic the pan-tilt shares); joint rates go to the arm's controller as a
forward command controller's ``std_msgs/Float64MultiArray`` or as a ``JointTrajectory`` point a
couple of cycles ahead, and the finger's position to the gripper's controller the same way.

A ROS gripper does not say whether it holds something; as with a stalled gripper action, the
fingers are taken to hold when they stopped wider than they were told to close to.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from freelook.arm import ArmModel
from freelook.config import RobotConfig
from freelook.types import ArmState, GripperState

__all__ = ["Ros2Arm"]

#: m the fingers may stop short of the opening they were told before they count as holding
HOLD_GAP = 0.004
#: m/s below which the fingers count as stopped
STILL = 0.002
#: s a gripper trajectory point takes to reach the commanded opening
GRIPPER_TIME = 0.5


class Ros2Arm:
    """The arm of a ROS 2 robot: :meth:`read` takes its joints from each ``JointState``.

    ``node``: the robot's rclpy node (publishers are made on it); ``r``: the loaded ROS
    messages (:func:`~freelook.hardware.ros2.ros`); ``clock``: the robot program's.
    """

    def __init__(
        self,
        config: RobotConfig,
        model: ArmModel,
        node: Any,
        r: Any,
        *,
        clock: Callable[[], float],
    ) -> None:
        self._r = r
        self._node = node
        self._clock = clock
        self._settings = config.ros2
        self._horizon = 2.0 * config.link.control_period
        self._names = tuple(model.joint_names[j] for j in model.arm_joints)
        g = model.gripper_joints
        self._finger = model.joint_names[int(g[0])] if len(g) else None
        self._max_finger = float(model.upper[int(g[0])]) if len(g) else 0.0
        self._state: ArmState | None = None
        self._finger_at: tuple[float, float] | None = None  # (position, velocity)
        self._finger_target: float | None = None
        reliable = r.qos.QoSProfile(depth=10, reliability=r.qos.ReliabilityPolicy.RELIABLE)
        trajectory = self._settings.arm_command == "trajectory"
        kind = r.JointTrajectory if trajectory else r.Float64MultiArray
        topics = self._settings.topics
        self._arm_pub = node.create_publisher(kind, topics.arm_command, reliable)
        self._gripper_pub = (
            node.create_publisher(kind, topics.gripper_command, reliable)
            if self._finger is not None
            else None
        )

    # -- readings (the executor's thread) ----------------------------------------------------

    def read(
        self,
        names: Sequence[str],
        positions: Sequence[float],
        velocities: Sequence[float],
        now: float,
    ) -> bool:
        """Take the arm's joints from one ``JointState``: False when it names none of them.

        Raises :class:`ValueError` saying why when they are there but unusable (some missing,
        a position not finite); the reading before stays.
        """
        index = {name: i for i, name in enumerate(names)}
        if not any(name in index for name in self._names):
            return False
        missing = [n for n in self._names if n not in index]
        if missing:
            raise ValueError(f"arm joints {', '.join(missing)} missing beside the others")
        at = [index[n] for n in self._names]
        if max(at) >= len(positions) or not all(math.isfinite(positions[i]) for i in at):
            raise ValueError("an arm joint without a finite position")
        rates = [velocities[i] if i < len(velocities) else 0.0 for i in at]
        rates = [v if math.isfinite(v) else 0.0 for v in rates]
        self._state = ArmState(
            now, self._names, tuple(float(positions[i]) for i in at), tuple(map(float, rates))
        )
        finger = index.get(self._finger) if self._finger is not None else None
        if finger is not None and finger < len(positions) and math.isfinite(positions[finger]):
            speed = velocities[finger] if finger < len(velocities) else 0.0
            speed = float(speed) if math.isfinite(speed) else 0.0
            self._finger_at = (float(positions[finger]), speed)
        return True

    @property
    def heard(self) -> bool:
        """Whether a ``JointState`` has given the arm's joints."""
        return self._state is not None

    # -- the HAL's Arm -----------------------------------------------------------------------

    @property
    def joint_names(self) -> tuple[str, ...]:
        return self._names

    def command_velocities(self, velocities: Sequence[float]) -> None:
        rates = [float(v) for v in velocities]
        if len(rates) != len(self._names) or not all(map(math.isfinite, rates)):
            rates = [0.0] * len(self._names)  # a malformed command stops the arm
        if self._settings.arm_command == "velocities":
            msg = self._r.Float64MultiArray()
            msg.data = rates
        else:
            # a point a cycle or two ahead along the commanded rates, reached at those rates
            state = self._state
            at = list(state.positions) if state is not None else [0.0] * len(rates)
            ahead = [p + w * self._horizon for p, w in zip(at, rates, strict=True)]
            msg = self._trajectory(self._names, ahead, rates, self._horizon)
        self._arm_pub.publish(msg)

    def state(self) -> ArmState:
        state = self._state
        if state is None:
            zeros = (0.0,) * len(self._names)
            return ArmState(self._clock(), self._names, zeros, zeros)
        return state

    def command_gripper(self, opening: float) -> None:
        if self._gripper_pub is None or self._finger is None or not math.isfinite(opening):
            return
        target = min(max(opening / 2.0, 0.0), self._max_finger)
        self._finger_target = target
        if self._settings.arm_command == "velocities":
            msg = self._r.Float64MultiArray()
            msg.data = [target]  # a position controller's command
        else:
            msg = self._trajectory((self._finger,), [target], [0.0], GRIPPER_TIME)
        self._gripper_pub.publish(msg)

    def gripper_state(self) -> GripperState:
        stamp = self._state.stamp if self._state is not None else self._clock()
        if self._finger_at is None:
            return GripperState(stamp, 0.0, False)
        position, speed = self._finger_at
        target = self._finger_target
        holding = target is not None and position - target > HOLD_GAP / 2 and abs(speed) < STILL
        return GripperState(stamp, 2.0 * position, holding)

    def stop(self) -> None:
        """Command the joints still (on closing)."""
        self.command_velocities([0.0] * len(self._names))

    def _trajectory(
        self, joints: Sequence[str], positions: list[float], rates: list[float], within: float
    ) -> Any:
        r = self._r
        msg = r.JointTrajectory()
        msg.header.stamp = self._node.get_clock().now().to_msg()
        msg.joint_names = list(joints)
        point = r.JointTrajectoryPoint()
        point.positions = positions
        point.velocities = rates
        point.time_from_start = r.Duration(seconds=within).to_msg()
        msg.points = [point]
        return msg

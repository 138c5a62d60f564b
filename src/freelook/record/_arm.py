"""What a recording holds of an arm, as ROS 2 publishes it: ``/joint_states``
(``sensor_msgs/JointState`` with the URDF's joint names), every link of the arm in ``/tf``
(parent to child, as ``robot_state_publisher`` would: the links a joint moves with each report,
the fixed ones once on ``/tf_static``), and the URDF itself on ``/robot_description``, so a
viewer such as Foxglove draws the arm from the recording alone."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from freelook.arm import ArmModel, link_transforms, load_arm
from freelook.config import ArmConfig
from freelook.link import ArmTelemetry

if TYPE_CHECKING:
    from freelook.record._streams import RosStreams

__all__ = ["ArmRecording"]

F64 = npt.NDArray[np.float64]


def quaternion(rotation: F64) -> dict[str, float]:
    """The unit quaternion (x, y, z, w) of a 3×3 rotation matrix (Shepperd's method)."""
    m = rotation
    trace = float(m[0, 0] + m[1, 1] + m[2, 2])
    if trace > 0:
        s = 2.0 * math.sqrt(trace + 1.0)
        w, x = 0.25 * s, (m[2, 1] - m[1, 2]) / s
        y, z = (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = 2.0 * math.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
        w, x = (m[2, 1] - m[1, 2]) / s, 0.25 * s
        y, z = (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s
    elif m[1, 1] > m[2, 2]:
        s = 2.0 * math.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
        w, x = (m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s
        y, z = 0.25 * s, (m[1, 2] + m[2, 1]) / s
    else:
        s = 2.0 * math.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
        w, x = (m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s
        y, z = (m[1, 2] + m[2, 1]) / s, 0.25 * s
    return {"x": float(x), "y": float(y), "z": float(z), "w": float(w)}


class ArmRecording:
    """One robot's arm, written to a recording or a live view from each telemetry report."""

    def __init__(self, model: ArmModel, urdf: str) -> None:
        self.model = model
        self.urdf = urdf
        jogged, fingers = model.arm_joints, model.gripper_joints
        self._joints = np.concatenate((jogged, fingers)).astype(np.int64)
        self.joint_names = tuple(model.joint_names[j] for j in self._joints)
        # every link below the root, on its joint to its parent: moved by a joint (a mimic
        # joint too) or fixed
        below_root = [k for k in range(len(model.link_names)) if model.link_parent[k] >= 0]
        self._moving = [k for k in below_root if model.link_q[k] >= 0]
        self._fixed = [k for k in below_root if model.link_q[k] < 0]
        self._static_written = False

    @classmethod
    def from_config(cls, config: ArmConfig) -> ArmRecording:
        return cls(load_arm(config.urdf, config.srdf), Path(config.urdf).read_text())

    def pose(self, arm: ArmTelemetry) -> F64 | None:
        """The joint vector of a report (the gripper from its opening); None if it does not
        fit this arm."""
        m = self.model
        if len(arm.positions) != len(m.arm_joints):
            return None
        q = m.ready.copy()
        q[m.arm_joints] = arm.positions
        if len(m.gripper_joints):
            q[m.gripper_joints] = arm.gripper_opening / 2
        return q

    def write(self, recorder: RosStreams, t: float, arm: ArmTelemetry) -> None:
        """``/joint_states`` and the arm's links in ``/tf`` (and once ``/tf_static``)."""
        q = self.pose(arm)
        if q is None:
            return
        velocities = np.zeros(len(self._joints))
        velocities[: len(arm.velocities)] = arm.velocities
        recorder.joint_states(t, self.joint_names, q[self._joints].tolist(), velocities.tolist())
        frames = link_transforms(self.model, q)
        if not self._static_written:
            recorder.transforms(t, self._links(frames, self._fixed), static=True)
            self._static_written = True
        recorder.transforms(t, self._links(frames, self._moving))

    def _links(self, frames: F64, links: list[int]) -> list[tuple[str, str, F64]]:
        """(parent, child, parent → child 4×4) of ``links`` at the link frames ``frames``."""
        m = self.model
        return [
            (
                m.link_names[int(m.link_parent[k])],
                m.link_names[k],
                np.linalg.solve(frames[int(m.link_parent[k])], frames[k]),
            )
            for k in links
        ]

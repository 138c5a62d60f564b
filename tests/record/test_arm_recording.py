"""A recording of the arm read back by an independent reader (rosbags): ``/joint_states``
with the URDF's joint names, the arm's links in ``/tf`` and ``/tf_static`` composing to the
same tool pose as the forward kinematics, and the URDF on ``/robot_description``."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
from rosbags.highlevel import AnyReader

from freelook.arm import link_transforms
from freelook.config import load_robot
from freelook.hardware.sim import SimulatedRobot
from freelook.link import ArmVelocityCommand, ControlRequest
from freelook.maps import load_world
from freelook.record import ArmRecording, Recorder

TAROS = load_robot("taros")


def _matrix(transform: object) -> np.ndarray:
    t, r = transform.translation, transform.rotation  # type: ignore[attr-defined]
    x, y, z, w = r.x, r.y, r.z, r.w
    rotation = np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )
    out = np.eye(4)
    out[:3, :3], out[:3, 3] = rotation, (t.x, t.y, t.z)
    return out


def test_joint_states_links_and_description_read_back_with_rosbags(tmp_path: Path) -> None:
    assert TAROS.arm is not None
    robot = SimulatedRobot(TAROS, load_world("eod"), seed=1, use_localization=False)
    robot.send(ControlRequest(1, 10), 1)
    arm = ArmRecording.from_config(TAROS.arm)
    path = tmp_path / "arm.mcap"
    reports = []
    with Recorder(path, clock=lambda: 1000.0) as recorder:
        recorder.robot_description(0.0, arm.urdf)
        for _ in range(20):  # the shoulder and the wrist roll move
            robot.send(ArmVelocityCommand((0.0, 0.3, 0.0, 0.0, 1.0)), 1)
            robot.run_for(0.05)
            telemetry = robot.core.telemetry(robot.now())
            reports.append(telemetry)
            recorder.telemetry(telemetry, arm=arm)

    urdf_joints = {
        j.get("name")
        for j in ET.parse(TAROS.arm.urdf).getroot().iter("joint")
        if j.get("type") != "fixed"
    }
    with AnyReader([path]) as reader:
        messages: dict[str, list[object]] = {}
        for connection, _, raw in reader.messages():
            message = reader.deserialize(raw, connection.msgtype)
            messages.setdefault(connection.topic, []).append(message)
    assert messages["/robot_description"][0].data == Path(TAROS.arm.urdf).read_text()  # type: ignore[attr-defined]
    states = messages["/joint_states"]
    assert len(states) == 20
    last = states[-1]
    names = list(last.name)  # type: ignore[attr-defined]
    assert set(names) <= urdf_joints
    assert names[:5] == [
        "turret_yaw",
        "shoulder_pitch",
        "elbow_pitch",
        "wrist_pitch",
        "wrist_roll_joint",
    ]
    final = reports[-1].arm
    assert final is not None
    assert list(last.position[:5]) == list(final.positions)  # type: ignore[attr-defined]
    assert list(last.velocity[:5]) == list(final.velocities)  # type: ignore[attr-defined]
    assert last.position[1] > 0.7  # type: ignore[attr-defined]  # the shoulder rose from 0.5

    # the tool's pose from /tf_static and the newest /tf, walked from base_link
    edges: dict[str, tuple[str, np.ndarray]] = {}
    (static,) = messages["/tf_static"]
    for message in (static, messages["/tf"][-1]):
        for stamped in message.transforms:  # type: ignore[attr-defined]
            if stamped.header.frame_id != "map":
                edges[stamped.child_frame_id] = (
                    stamped.header.frame_id,
                    _matrix(stamped.transform),
                )
    model = arm.model
    q = arm.pose(final)
    assert q is not None
    expected = link_transforms(model, q)
    for link in ("finger_left", "camera_right", "palm", "bumper"):
        frame, name = np.eye(4), link
        while name in edges:
            parent, matrix = edges[name]
            frame = matrix @ frame
            name = parent
        assert name == model.link_names[0]
        np.testing.assert_allclose(frame, expected[model.link_index(link)], atol=1e-9)

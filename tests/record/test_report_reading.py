"""The report's fast reading agrees with the ROS 2 decoder on every field it takes."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from mcap.writer import Writer as McapWriter

from freelook.link import LinkStatsReport, Mode, SafetyFlags, Telemetry
from freelook.record import (
    Recorder,
    RecordingError,
    build_report,
    full_definition,
    load_run,
    read_messages,
)


def _stamp(s: object) -> float:
    return float(s.sec) + float(s.nanosec) * 1e-9  # type: ignore[attr-defined]


def test_fast_reading_equals_the_decoder(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    path = tmp_path / "run.mcap"
    clock = [1_800_000_000.0]
    with Recorder(path, clock=lambda: clock[0], chunk_size=4096) as recorder:
        for i in range(300):
            clock[0] += 0.031
            t = clock[0]
            x, y, theta, v, w = (float(a) for a in rng.normal(0, 3, 5))
            recorder.telemetry(
                Telemetry(
                    stamp=t,
                    odom=(x, y, math.remainder(theta, math.tau)),
                    pose=(y, x, math.remainder(-theta, math.tau)),
                    v=v,
                    omega=w,
                    cmd_v=w,
                    cmd_omega=v,
                    pan=0.0,
                    tilt=0.0,
                    safety_flags=SafetyFlags(int(rng.integers(0, 64))),
                    safety_zone=int(rng.integers(-1, 3)),
                    safety_scale=float(rng.uniform(0, 1)),
                    mode=Mode(int(rng.integers(0, 8))),
                    estop=bool(i % 7 == 0),
                    controller=int(rng.integers(0, 5)),
                    link=LinkStatsReport(i, i // 3, 0, 0, i % 5, i % 3, 1.0, 2.0, 3.0, 0.1),
                ),
                reference=(x, y, theta, v, w) if i % 2 else None,
                sent=2 * i,
            )
            recorder.packet(
                "robot_to_operator" if i % 3 else "operator_to_robot",
                rng.bytes(int(rng.integers(1, 60))),
                send_time=t - 0.01,
                receive_time=t,
                wire="native" if i % 2 else "thesis",
                accepted=bool(i % 5),
                kind=("Telemetry", "PositionReport", "x" * int(rng.integers(0, 9)))[i % 3],
                stream=int(rng.integers(0, 4)),
                sequence=int(rng.integers(0, 2**32)),
            )
    run = load_run(path)
    odom: list[tuple[float, ...]] = []
    pose: list[tuple[float, ...]] = []
    cmd: list[tuple[float, ...]] = []
    ref: list[tuple[float, ...]] = []
    stats: list[tuple[float, ...]] = []
    modes: list[tuple[float, str, bool]] = []
    packets: dict[str, list[tuple[float, ...]]] = {}
    for item in read_messages(path):
        m, t = item.message, item.log_time
        if item.topic in ("/odom", "/localization"):
            p, q, tw = m.pose.pose.position, m.pose.pose.orientation, m.twist.twist
            row = (t, p.x, p.y, 2 * math.atan2(q.z, q.w), tw.linear.x, tw.angular.z)
            (odom if item.topic == "/odom" else pose).append(row)
        elif item.topic == "/cmd_vel":
            cmd.append((t, m.linear.x, m.angular.z))
        elif item.topic == "/freelook/reference":
            ref.append((t, m.x, m.y, m.theta))
        elif item.topic == "/freelook/mode":
            modes.append((t, m.mode, m.estop))
        elif item.topic.startswith("/freelook/link_stats/"):
            refused = m.crc_failures + m.auth_failures
            stats.append((t, m.packets_received, m.packets_lost, refused, m.packets_sent))
        elif item.topic.startswith("/link/"):
            packets.setdefault(item.topic.removeprefix("/link/"), []).append(
                (
                    _stamp(m.receive_stamp),
                    _stamp(m.send_stamp),
                    m.stream,
                    m.sequence,
                    m.accepted,
                    m.kind in ("Telemetry", "PositionReport"),
                )
            )
    np.testing.assert_allclose(run.odom, np.array(odom, dtype=float))
    np.testing.assert_allclose(run.pose, np.array(pose, dtype=float)[:, :4])
    np.testing.assert_allclose(run.cmd, np.array(cmd))
    np.testing.assert_allclose(run.reference, np.array(ref))
    assert run.modes == modes
    np.testing.assert_allclose(run.link_stats["operator_to_robot"], np.array(stats, dtype=float))
    for direction, rows in packets.items():
        expected = np.array(rows, dtype=float)
        np.testing.assert_allclose(run.packets[direction], expected[np.argsort(expected[:, 0])])
    # a trajectory ran: the page has its tracking panel, and every panel the run has data for
    page = build_report(path, tmp_path / "report").read_text()
    figures = [part.split('"')[0] for part in page.split('<figure id="')[1:]]
    assert figures == ["path", "tracking", "velocities", "link"]


@pytest.mark.parametrize(
    ("topic", "schema", "data"),
    [
        # a string length that points far beyond the message
        ("/link/robot_to_operator", "freelook_msgs/Packet", bytes(8) + b"\xf0\xff\xff\xff"),
        ("/odom", "nav_msgs/Odometry", bytes(12) + b"\xff\xff\xff\x7f"),
        ("/freelook/mode", "freelook_msgs/Mode", bytes(12) + b"\x01\x00\x00\x00"),
        ("/cmd_vel", "geometry_msgs/Twist", bytes(10)),  # cut short
    ],
)
def test_a_recording_with_malformed_messages_is_refused_by_name(
    tmp_path: Path, topic: str, schema: str, data: bytes
) -> None:
    path = tmp_path / "hostile.mcap"
    with open(path, "wb") as stream:
        writer = McapWriter(stream)
        writer.start(profile="ros2", library="test")
        schema_id = writer.register_schema(
            schema.replace("/", "/msg/"), "ros2msg", full_definition(schema).encode()
        )
        channel = writer.register_channel(topic, "cdr", schema_id)
        writer.add_message(channel, 1, data, 1)
        writer.finish()  # type: ignore[no-untyped-call]
    with pytest.raises(RecordingError, match="damaged"):
        load_run(path)

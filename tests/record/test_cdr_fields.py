"""The report's field reader gives what the ROS 2 decoder gives, at every string length (each
string moves the fields after it and their alignment), from the schemas the recorder writes."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcap.records import Schema
from mcap_ros2.decoder import DecoderFactory

from freelook.record import ros_schema
from freelook.record._cdr import CdrFields

names = st.text(st.characters(min_codepoint=97, max_codepoint=122), max_size=19)
floats = st.floats(allow_nan=False, allow_infinity=False, width=64)
u32 = st.integers(0, 2**32 - 1)


def _decode(typename: str, data: bytes) -> Any:
    schema = ros_schema(typename)
    record = Schema(id=1, name=schema.name, encoding="ros2msg", data=schema.text.encode())
    decoder = DecoderFactory().decoder_for("cdr", record)
    assert decoder is not None
    return decoder(data)


def _reader(typename: str, paths: tuple[str, ...], **defaults: Any) -> CdrFields:
    schema = ros_schema(typename)
    return CdrFields(schema.name, schema.text, paths, defaults)


@settings(max_examples=200, deadline=None)
@given(frame=names, child=names, x=floats, y=floats, yaw=floats, v=floats, omega=floats)
def test_odometry_fields_match_the_decoder(
    frame: str, child: str, x: float, y: float, yaw: float, v: float, omega: float
) -> None:
    message = {
        "header": {"stamp": {"sec": 5, "nanosec": 7}, "frame_id": frame},
        "child_frame_id": child,
        "pose": {
            "pose": {
                "position": {"x": x, "y": y, "z": 1.0},
                "orientation": {"x": 0.0, "y": 0.0, "z": math.sin(yaw), "w": math.cos(yaw)},
            },
            "covariance": [float(k) for k in range(36)],
        },
        "twist": {
            "twist": {
                "linear": {"x": v, "y": 2.0, "z": 3.0},
                "angular": {"x": 4.0, "y": 5.0, "z": omega},
            },
            "covariance": [0.0] * 36,
        },
    }
    data = ros_schema("nav_msgs/Odometry").encode(message)
    paths = (
        "pose.pose.position.x",
        "pose.pose.position.y",
        "pose.pose.orientation.z",
        "pose.pose.orientation.w",
        "twist.twist.linear.x",
        "twist.twist.angular.z",
    )
    m = _decode("nav_msgs/Odometry", data)
    expected = (
        m.pose.pose.position.x,
        m.pose.pose.position.y,
        m.pose.pose.orientation.z,
        m.pose.pose.orientation.w,
        m.twist.twist.linear.x,
        m.twist.twist.angular.z,
    )
    assert _reader("nav_msgs/Odometry", paths).read(data) == expected
    # asked for in another order, the same fields come in that order
    assert _reader("nav_msgs/Odometry", paths[::-1]).read(data) == expected[::-1]


@settings(max_examples=200, deadline=None)
@given(wire=names, kind=names, stream=u32, sequence=u32, sec=st.integers(-(2**31), 2**31 - 1))
def test_packet_fields_match_the_decoder(
    wire: str, kind: str, stream: int, sequence: int, sec: int
) -> None:
    message = {
        "direction": 1,
        "wire": wire,
        "stream": stream,
        "sequence": sequence,
        "send_stamp": {"sec": sec, "nanosec": 12},
        "receive_stamp": {"sec": 3, "nanosec": 999_999_999},
        "accepted": True,
        "kind": kind,
        "decoded": "{}",
        "data": b"\x01\x02",
    }
    data = ros_schema("freelook_msgs/Packet").encode(message)
    paths = ("wire", "stream", "sequence", "send_stamp.sec", "receive_stamp.nanosec", "accepted")
    m = _decode("freelook_msgs/Packet", data)
    expected = (m.wire, stream, sequence, sec, 999_999_999, True)
    assert _reader("freelook_msgs/Packet", paths).read(data) == expected


@settings(max_examples=100, deadline=None)
@given(frame=names, mode=names, estop=st.booleans())
def test_mode_fields_match_the_decoder(frame: str, mode: str, estop: bool) -> None:
    message = {
        "header": {"stamp": {"sec": 1, "nanosec": 2}, "frame_id": frame},
        "mode": mode,
        "estop": estop,
        "controller": "station 1",
    }
    data = ros_schema("freelook_msgs/Mode").encode(message)
    m = _decode("freelook_msgs/Mode", data)
    assert _reader("freelook_msgs/Mode", ("mode", "estop")).read(data) == (m.mode, m.estop)


def test_a_field_the_schema_lacks_reads_as_its_default() -> None:
    """A recording from before LinkStats had ``packets_sent``: its schema has no such field."""
    schema = ros_schema("freelook_msgs/LinkStats")
    old_text = schema.text.replace("\nuint32 packets_sent", "")
    assert old_text != schema.text
    message = {
        "header": {"stamp": {"sec": 1, "nanosec": 2}, "frame_id": "x"},
        "direction": "robot_to_operator",
        "packets_received": 10,
        "packets_lost": 2,
        "duplicates": 0,
        "reordered": 0,
        "crc_failures": 3,
        "auth_failures": 4,
        "packets_sent": 99,
        "rx_rate_hz": 1.0,
        "tx_rate_hz": 2.0,
        "drop_percent": 3.0,
        "latency_s": 4.0,
    }
    data = schema.encode(message)
    paths = ("packets_received", "crc_failures", "packets_sent")
    assert CdrFields(schema.name, schema.text, paths).read(data) == (10, 3, 99)
    old = CdrFields(schema.name, old_text, paths, {"packets_sent": -1})
    assert old.read(data) == (10, 3, -1)


def test_a_sequence_before_a_field_asked_for_is_refused() -> None:
    schema = ros_schema("sensor_msgs/LaserScan")
    CdrFields(schema.name, schema.text, ("range_max",))  # before the sequences: fine
    with pytest.raises(ValueError, match="ranges: a sequence"):
        CdrFields(schema.name, schema.text, ("intensities",))


def test_a_definition_that_is_not_ros2msg_is_refused() -> None:
    with pytest.raises(ValueError, match="not a field definition"):
        CdrFields("pkg/msg/T", "float-64 x", ("x",))
    with pytest.raises(ValueError, match="has no 'Missing'"):
        CdrFields("pkg/msg/T", "Missing inner\nfloat64 x", ("x",))

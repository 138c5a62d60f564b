"""A real session recorded: both readers decode it, counts match the link, the report agrees."""

from __future__ import annotations

import asyncio
import dataclasses
import struct
import time
from collections import defaultdict
from pathlib import Path

import pytest
from rosbags.highlevel import AnyReader

from freelook.config import load_robot
from freelook.hardware.sim import simulated_server
from freelook.link import FreeLookCommand, Telemetry, derive_key
from freelook.maps import load_world
from freelook.operator import OperatorStation
from freelook.record import BackgroundRecorder, Recorder, build_report, read_messages, topic_counts
from freelook.robot import ServerOptions
from loopback import robot_and_station


async def _session(path: Path, *, robot_runtime_stamps: bool = False) -> tuple[int, int]:
    """A few seconds of a real robot server and operator station, recorded to ``path``.

    ``robot_runtime_stamps``: the robot stamps its telemetry on its runtime clock instead of
    the wall clock (a robot without a set clock; the recording must not care)."""
    config, world = load_robot("pioneer3dx"), load_world("lab")
    background = BackgroundRecorder(
        Recorder(path, metadata={"robot": config.name, "world": world.name})
    )
    key = derive_key("session test")
    server, _ = simulated_server(
        config,
        world,
        ServerOptions(listen="udp://127.0.0.1:0", key=key, camera=True, camera_rate=10.0),
        recorder=background,
    )
    if robot_runtime_stamps:
        telemetry = server.session.periodic
        server.session.periodic = lambda now: [
            dataclasses.replace(m, stamp=now) if isinstance(m, Telemetry) else m
            for m in telemetry(now)
        ]
    async with robot_and_station(
        server,
        lambda address: OperatorStation(config, world, address, key=key, recorder=background),
    ) as station:
        station.drive_command = FreeLookCommand(0.2, 0.0, 0.1)
        await asyncio.sleep(2.5)  # a few seconds of driving to record
        station.tx_enabled = False
        await asyncio.sleep(0.3)  # the station silent for the last moments of the run
    stats = background.close()
    assert stats.dropped == 0
    return station.stats.received, server.stats.received


def _assert_one_time_base(path: Path, started: float, finished: float) -> None:
    """Every topic's log time is on the recorder's clock, inside the run."""
    log_times: dict[str, list[float]] = defaultdict(list)
    for item in read_messages(path):
        log_times[item.topic].append(item.log_time)
    spans = {topic: (min(times), max(times)) for topic, times in log_times.items()}
    first = min(low for low, _ in spans.values())
    last = max(high for _, high in spans.values())
    assert last - first <= finished - started + 1.0, spans
    assert started - 1.0 <= first, spans
    assert last <= finished + 1.0, spans


def test_a_robot_stamping_on_another_clock_still_records_one_timeline(tmp_path: Path) -> None:
    path = tmp_path / "run.mcap"
    started = time.time()
    asyncio.run(_session(path, robot_runtime_stamps=True))
    finished = time.time()
    _assert_one_time_base(path, started, finished)
    odom = next(read_messages(path, ["/odom"]))
    header = odom.message.header.stamp
    assert odom.publish_time == pytest.approx(header.sec + header.nanosec * 1e-9, abs=1e-6)
    assert abs(odom.publish_time - odom.log_time) > 1000  # the sender's clock, kept as it was


def test_recorded_session_is_complete_and_consistent(tmp_path: Path) -> None:
    path = tmp_path / "run.mcap"
    started = time.time()
    down_received, up_received = asyncio.run(_session(path))
    finished = time.time()
    counts = topic_counts(path)
    _assert_one_time_base(path, started, finished)
    assert counts["/link/robot_to_operator"] == down_received
    assert counts["/link/operator_to_robot"] == up_received
    for topic in ("/cmd_vel", "/odom", "/scan", "/sonar", "/camera/image/compressed", "/tf"):
        assert counts[topic] > 0, topic
    # the mcap reader with the ROS 2 decoder
    seen = defaultdict(int)
    per_stream: dict[tuple[str, int], list[int]] = defaultdict(list)
    for item in read_messages(path):
        seen[item.topic] += 1
        if item.topic.startswith("/link/"):
            m = item.message
            send = m.send_stamp.sec + m.send_stamp.nanosec * 1e-9
            receive = m.receive_stamp.sec + m.receive_stamp.nanosec * 1e-9
            assert send > 1e9  # a real time stamp from the sender
            assert receive >= send - 0.01
            # independent of the decoder: the sequence number straight from the raw header
            raw = bytes(m.data)
            stream, sequence = raw[5], struct.unpack_from("<I", raw, 8)[0]
            per_stream[(item.topic, stream)].append(sequence)
    assert dict(seen) == counts
    # rosbags decodes every topic too
    with AnyReader([path]) as reader:
        rosbags_counts: dict[str, int] = defaultdict(int)
        for connection, _, raw in reader.messages():
            reader.deserialize(raw, connection.msgtype)
            rosbags_counts[connection.topic] += 1
    assert dict(rosbags_counts) == counts
    # the report's drop table equals what the raw sequence numbers say
    out = build_report(path, tmp_path / "report")
    page = out.read_text()
    # one file: path, velocities, link plots and the camera's strip inline; no trajectory
    # ran, so no tracking
    assert page.count('<img src="data:image/png;base64,') == 4
    assert '<figure id="camera-strip" data-frames="8" data-source="JPEG">' in page
    assert 'id="tracking"' not in page
    assert sorted(p.name for p in out.parent.iterdir()) == ["index.html", "link_table.json"]
    import json

    table = {
        row["direction"]: row
        for row in json.loads((tmp_path / "report" / "link_table.json").read_text())
    }
    for direction in ("operator_to_robot", "robot_to_operator"):
        expected_lost = 0
        received = 0
        for (topic, _), seqs in per_stream.items():
            if topic != f"/link/{direction}":
                continue
            unique = sorted(set(seqs))
            received += len(unique)
            expected_lost += unique[-1] - unique[0] + 1 - len(unique)
        assert table[direction]["received"] == received
        assert table[direction]["lost"] == expected_lost
        assert table[direction]["drop_percent"] == pytest.approx(
            100 * expected_lost / (received + expected_lost) if received else 0.0
        )
    # the rates say what they count: the robot's link packets of all kinds (its camera's
    # fragments among them) and its telemetry messages, as the cockpit counts them (about the
    # robot's transmission spacing, 31 ms: 32 Hz, on a machine that keeps up)
    down = table["robot_to_operator"]
    telemetry = [
        item.log_time
        for item in read_messages(path, ["/link/robot_to_operator"])
        if item.message.accepted and item.message.kind in ("Telemetry", "PositionReport")
    ]
    spacing = load_robot("pioneer3dx").link.robot_tx_spacing
    assert down["telemetry_hz"] == pytest.approx(
        (len(telemetry) - 1) / (max(telemetry) - min(telemetry)), rel=0.05
    )
    # no faster than the robot's spacing lets it send, and more than half of that (a busy
    # machine sends late, never early)
    assert 0.5 / spacing < down["telemetry_hz"] <= 1.05 / spacing
    assert down["mean_rate_hz"] > down["telemetry_hz"] * 1.2
    assert table["operator_to_robot"]["telemetry_hz"] is None
    assert "link packets/s (all kinds)</th><th>telemetry/s</th>" in page

"""Recording: every stream decodes with two independent readers; killed runs are repairable."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
from rosbags.highlevel import AnyReader
from rosbags.typesys import Stores, get_typestore

from freelook.record import (
    BackgroundRecorder,
    Recorder,
    RepairError,
    full_definition,
    read_messages,
    repair,
    topic_counts,
)
from waiting import wait_until

ROS2_TYPES = [
    "geometry_msgs/Twist",
    "nav_msgs/Odometry",
    "sensor_msgs/LaserScan",
    "sensor_msgs/Range",
    "sensor_msgs/CompressedImage",
    "tf2_msgs/TFMessage",
]


def _write_everything(recorder: Recorder, n: int) -> None:
    rng = np.random.default_rng(7)
    for i in range(n):
        t = 100.0 + 0.05 * i
        recorder.cmd_vel(t, 0.3, -0.1)
        recorder.odom(t, 1.0 + i, 2.0, 0.5, 0.3, -0.1)
        recorder.scan(
            t,
            rng.uniform(0.1, 30, 181).tolist(),
            angle_min=-np.pi / 2,
            angle_increment=np.pi / 180,
            range_min=0.02,
            range_max=30.0,
        )
        recorder.sonar(t, i % 8, 1.25, field_of_view=0.26, min_range=0.1, max_range=5.0)
        recorder.image(t, b"\xff\xd8fake-jpeg\xff\xd9")
        recorder.tf(t, 1.0, 2.0, 0.5, "map", "base_link")
        recorder.packet(
            "operator_to_robot",
            bytes([i % 256, 1, 2]),
            send_time=t - 0.004,
            receive_time=t,
            wire="native",
            accepted=True,
            kind="VelocityCommand",
            decoded={"v": 0.3},
            sequence=i,
        )
        recorder.mode(t, "free_look", False, "station-1")
        recorder.safety_event(t, "zone", "B1", 1, 0.5)
        recorder.link_stats(t, "operator_to_robot", {"packets_received": i, "drop_percent": 1.5})


@pytest.mark.parametrize("typename", ROS2_TYPES)
def test_standard_definitions_match_ros2(typename: str) -> None:
    """Our embedded definitions equal ROS 2 Humble's, as an independent library generates them."""
    store = get_typestore(Stores.ROS2_HUMBLE)
    package, name = typename.split("/")
    expected, _ = store.generate_msgdef(f"{package}/msg/{name}", ros_version=2)
    assert _normalise(full_definition(typename)) == _normalise(expected)


def _normalise(text: str) -> list[str]:
    """Dependency blocks as a set-like sorted list (order and duplicates do not matter)."""
    blocks = [b.strip() for b in text.split("=" * 80)]
    return sorted(set(blocks))


def test_every_topic_decodes_with_mcap_and_rosbags(tmp_path: Path) -> None:
    path = tmp_path / "run.mcap"
    ticks = iter(range(10_000))
    with Recorder(path, clock=lambda: 5000.0 + 0.001 * next(ticks)) as recorder:
        _write_everything(recorder, 50)
    counts = topic_counts(path)
    assert set(counts.values()) == {50}
    decoded = list(read_messages(path, ["/odom"]))
    assert len(decoded) == 50
    assert decoded[3].message.pose.pose.position.x == pytest.approx(4.0)
    assert decoded[3].publish_time == pytest.approx(100.15)  # the sender's stamp
    assert decoded[3].log_time == pytest.approx(5000.0 + 0.001 * (3 * 10 + 1))  # the recorder's
    packet = next(read_messages(path, ["/link/operator_to_robot"]))
    assert packet.publish_time == pytest.approx(100.0 - 0.004)  # published when it was sent
    packets = list(read_messages(path, ["/link/operator_to_robot"]))
    first = packets[0].message
    assert (first.send_stamp.sec, first.receive_stamp.sec) == (99, 100)
    assert first.receive_stamp.nanosec == 0
    assert bytes(first.data) == bytes([0, 1, 2])

    seen: dict[str, int] = {}
    with AnyReader([path]) as reader:
        for connection, _, raw in reader.messages():
            message = reader.deserialize(raw, connection.msgtype)
            seen[connection.topic] = seen.get(connection.topic, 0) + 1
            if connection.topic == "/scan":
                assert len(message.ranges) == 181
    assert seen == counts


def test_log_time_is_taken_at_submit_not_when_the_writer_thread_drains(tmp_path: Path) -> None:
    now = [10.0]
    background = BackgroundRecorder(Recorder(tmp_path / "late.mcap", clock=lambda: now[0]))
    writer_busy, release = threading.Event(), threading.Event()

    def slow_write(r: Recorder) -> None:
        writer_busy.set()
        assert release.wait(10)
        r.cmd_vel(1.0, 0.0, 0.0)

    background.submit(slow_write)  # holds the writer thread
    assert writer_busy.wait(10)
    now[0] = 11.0
    background.submit(lambda r: r.cmd_vel(2.0, 0.1, 0.0))  # queued behind it at 11.0
    now[0] = 99.0  # the writer thread gets to it much later
    release.set()
    background.close()
    logged = [(m.log_time, m.publish_time) for m in read_messages(tmp_path / "late.mcap")]
    assert logged == [(10.0, 1.0), (11.0, 2.0)]


def test_background_recorder_counts_overflow(tmp_path: Path) -> None:
    recorder = Recorder(tmp_path / "bg.mcap")
    background = BackgroundRecorder(recorder, max_queue=1)
    # The writer thread is slower than this loop: some submissions must overflow, none block.
    results = [
        background.submit(lambda r, t=1.0 + i * 1e-3: r.cmd_vel(t, 0.1, 0.0)) for i in range(2000)
    ]
    stats = background.close()
    assert stats.submitted == 2000
    assert stats.dropped == results.count(False)
    assert stats.written + stats.dropped == 2000
    assert topic_counts(tmp_path / "bg.mcap")["/cmd_vel"] == stats.written


WRITER = textwrap.dedent(
    """
    import sys
    from freelook.record import Recorder
    rec = Recorder(sys.argv[1], flush_interval=0.2)
    i = 0
    reported = 0
    while True:
        rec.cmd_vel(10.0 + 0.01 * i, 0.1, 0.0)
        i += 1
        if rec.messages_flushed != reported:
            reported = rec.messages_flushed
            print(reported, flush=True)
    """
)


def test_kill_9_then_repair_recovers_every_flushed_chunk(tmp_path: Path) -> None:
    path = tmp_path / "killed.mcap"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True
    )
    stdout = proc.stdout
    assert stdout is not None
    said = [0]  # the writer's count of messages flushed, as it last said it

    def four_hundred_flushed() -> int:
        line = stdout.readline()  # blocks until the writer says more, or ends
        if not line:
            raise AssertionError(f"the writer ended after {said[-1]} messages flushed")
        said.append(int(line))
        return said[-1] if said[-1] >= 400 else 0

    flushed = wait_until(
        four_hundred_flushed,
        60,
        "the writer to say 400 messages flushed",
        every=0,
        show=lambda: f"{said[-1]} flushed",
    )
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    stdout.close()
    with pytest.raises(Exception):  # noqa: B017, PT011 - any reader error: the file is cut off
        list(read_messages(path))
    fixed = tmp_path / "fixed.mcap"
    report = repair(path, fixed)
    assert not report.clean_end
    assert report.messages_recovered >= flushed
    assert topic_counts(fixed)["/cmd_vel"] == report.messages_recovered
    with AnyReader([fixed]) as reader:
        assert sum(1 for _ in reader.messages()) == report.messages_recovered


def test_repair_of_a_corrupt_chunk_keeps_the_others(tmp_path: Path) -> None:
    path = tmp_path / "run.mcap"
    with Recorder(path, chunk_size=1024) as recorder:
        _write_everything(recorder, 40)
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0xFF
    broken = tmp_path / "broken.mcap"
    broken.write_bytes(bytes(data))
    report = repair(broken, tmp_path / "fixed.mcap")
    assert report.chunks_recovered > 0
    assert 0 < report.messages_recovered < 400
    assert sum(topic_counts(tmp_path / "fixed.mcap").values()) == report.messages_recovered


def test_repair_rejects_a_file_that_is_not_mcap(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.mcap"
    bogus.write_bytes(b"not an mcap file at all")
    with pytest.raises(RepairError, match=r"bogus\.mcap: not an MCAP file"):
        repair(bogus, tmp_path / "out.mcap")


def test_repair_cli(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from freelook.cli import app

    path = tmp_path / "run.mcap"
    with Recorder(path) as recorder:
        _write_everything(recorder, 5)
    cut = tmp_path / "cut.mcap"
    cut.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    runner = CliRunner()
    result = runner.invoke(app, ["record", "repair", str(cut), "-o", str(tmp_path / "ok.mcap")])
    assert result.exit_code == 0, result.output
    assert "messages from" in result.output
    assert runner.invoke(app, ["record", "repair", str(tmp_path / "missing.mcap")]).exit_code == 2


def test_a_failing_write_is_counted_logged_once_per_kind_and_the_rest_is_recorded(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    background = BackgroundRecorder(Recorder(tmp_path / "bad.mcap"))
    for k in range(5):
        background.submit(lambda r: r.cmd_vel(math.nan, 0.1, 0.0))  # no time stamp: refused
        background.submit(lambda r, t=1.0 + k: r.cmd_vel(t, 0.1, 0.0))
    stats = background.close()
    assert stats.errors == 5
    assert stats.written == 5
    assert topic_counts(tmp_path / "bad.mcap")["/cmd_vel"] == 5
    logged = [r.getMessage() for r in caplog.records if "recording failed" in r.getMessage()]
    assert logged == ["recording failed (ValueError); later failures of this kind counted"]

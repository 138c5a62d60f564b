"""The line a finished recording prints counts the messages its file holds: a real
``freelook sim`` session recorded, then the file read back with the mcap reader. (It counted
the writes queued for the recorder's thread, one per stream method's call, where a telemetry
alone writes a score of messages: the line said 21,789 where the file held 43,971.)"""

from __future__ import annotations

import asyncio
import re
import socket
from pathlib import Path
from typing import Any

from mcap.reader import make_reader

from freelook.config import load_robot
from freelook.launch import SessionOptions, recorded_line, run_session
from freelook.link import Telemetry
from freelook.maps import load_world
from freelook.record import BackgroundRecorder, Recorder, RecorderStats, RosStreams, Tee


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _file_messages(path: Path) -> tuple[int, int]:
    """(messages read one by one, the summary's count) of an MCAP file."""
    with path.open("rb") as stream:
        reader = make_reader(stream)
        summary = reader.get_summary()
        assert summary is not None
        assert summary.statistics is not None
        return sum(1 for _ in reader.iter_messages()), summary.statistics.message_count


def test_the_exit_line_counts_the_messages_the_file_holds(tmp_path: Path) -> None:
    path = tmp_path / "run.mcap"
    lines: list[str] = []

    async def session() -> None:
        started = asyncio.Event()
        options = SessionOptions(port=_free_port(), open_browser=False, record=path)
        task = asyncio.create_task(
            run_session(
                load_robot("pioneer3dx"),
                load_world("lab"),
                options,
                announce=lines.append,
                started=started,
            )
        )
        try:
            async with asyncio.timeout(60):
                await started.wait()
            await asyncio.sleep(3.0)  # a few seconds recorded: telemetry, packets, video
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    asyncio.run(session())
    (line,) = [line for line in lines if line.startswith("recorded ")]
    printed = re.fullmatch(r"recorded (\d+) messages", line)
    assert printed is not None, line
    read, summarised = _file_messages(path)
    assert read == summarised == int(printed.group(1))
    assert read > 1000


class LiveView(RosStreams):
    """A live view's streams (as the Foxglove bridge's): they go to no file."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = 0

    def write(self, topic: str, typename: str, message: dict[str, Any], t: float) -> None:
        self.seen += 1

    def close(self) -> None:
        pass


def _telemetry(i: int) -> Telemetry:
    return Telemetry(
        1000.0 + i,
        (0.1 * i, 0.0, 0.0),
        (0.1 * i, 0.0, 0.0),
        0.1,
        0.0,
        0.1,
        0.0,
        0.0,
        0.0,
        laser_angle_increment=0.01,
        laser_range_max=30.0,
        laser=(2.0,) * 181,
        sonar=(1.0,) * 16,
    )


def test_a_file_and_a_live_view_count_the_file_alone(tmp_path: Path) -> None:
    live = LiveView()
    background = BackgroundRecorder(Tee(Recorder(tmp_path / "run.mcap"), live))
    for i in range(10):
        background.submit(lambda r, i=i: r.telemetry(_telemetry(i)))  # a score of messages
        background.submit(lambda r, i=i: r.cmd_vel(1000.0 + i, 0.1, 0.0))  # one
    stats = background.close()
    assert stats.written == 20  # writes
    read, _ = _file_messages(tmp_path / "run.mcap")
    assert stats.messages == read == live.seen > 20 * 10
    assert recorded_line(stats) == f"recorded {read} messages"


def test_a_live_view_alone_records_nothing_and_lost_writes_are_said() -> None:
    background = BackgroundRecorder(LiveView())
    background.submit(lambda r: r.cmd_vel(1.0, 0.1, 0.0))
    assert background.close().messages is None
    assert recorded_line(RecorderStats(10, 7, 2, 1, 150)) == (
        "recorded 150 messages (2 writes dropped: the disk fell behind; 1 writes failed (logged))"
    )

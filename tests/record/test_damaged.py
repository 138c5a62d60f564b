"""Damaged recordings: ``freelook record info`` and ``freelook report`` name the file, say what
is wrong, exit 2 and point at ``freelook record repair``; a good file is summarised."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from freelook.cli import app
from freelook.record import Recorder, RecordingError, load_run, recording_info


def _good(path: Path, n: int = 400) -> Path:
    ticks = iter(range(100_000))
    with Recorder(
        path, chunk_size=2048, clock=lambda: 1_800_000_000.0 + 0.01 * next(ticks)
    ) as recorder:
        for i in range(n):
            recorder.cmd_vel(5.0 + 0.02 * i, 0.2, 0.1)
            recorder.odom(5.0 + 0.02 * i, 0.01 * i, 0.0, 0.0, 0.2, 0.1)
    return path


def _damaged(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / f"{kind}.mcap"
    if kind == "empty":
        path.write_bytes(b"")
    elif kind == "garbage":
        path.write_bytes(b"this is not a recording\n" * 40)
    elif kind == "truncated":
        data = _good(tmp_path / "whole.mcap").read_bytes()
        path.write_bytes(data[: len(data) // 2])
    elif kind == "magic-only":
        path.write_bytes(b"\x89MCAP0\r\n")
    return path


DAMAGE = ["empty", "garbage", "truncated", "magic-only"]


@pytest.mark.parametrize("kind", DAMAGE)
@pytest.mark.parametrize("command", [["record", "info"], ["report"]])
def test_a_damaged_file_is_named_with_exit_2_and_the_repair_command(
    tmp_path: Path, kind: str, command: list[str]
) -> None:
    path = _damaged(tmp_path, kind)
    result = CliRunner().invoke(app, [*command, str(path)])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert str(path) in result.output
    assert f"freelook record repair {path}" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / f"{kind}-report").exists()


@pytest.mark.parametrize(
    ("kind", "what"),
    [
        ("empty", "empty file"),
        ("garbage", "not an MCAP recording"),
        ("truncated", "damaged or cut off"),
        ("magic-only", "damaged or cut off"),
    ],
)
def test_the_reader_says_what_is_wrong(tmp_path: Path, kind: str, what: str) -> None:
    path = _damaged(tmp_path, kind)
    with pytest.raises(RecordingError, match=what) as info:
        recording_info(path)
    assert info.value.path == path
    with pytest.raises(RecordingError, match="freelook record repair"):
        load_run(path)


def test_info_gives_topics_counts_and_the_time_span(tmp_path: Path) -> None:
    path = _good(tmp_path / "run.mcap", 100)
    info = recording_info(path)
    assert info.counts == {"/cmd_vel": 100, "/odom": 100}
    assert info.start == pytest.approx(1_800_000_000.0)
    assert info.duration == pytest.approx(0.01 * 199)
    result = CliRunner().invoke(app, ["record", "info", str(path)])
    assert result.exit_code == 0, result.output
    assert "200 messages on 2 topics over 1.990 s from 2027-01-15T08:00:00.000+00:00" in (
        result.output
    )
    assert "     100  /cmd_vel" in result.output


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.mcap"
    for command in (["record", "info"], ["report"]):
        result = CliRunner().invoke(app, [*command, str(missing)])
        assert result.exit_code == 2
        assert str(missing) in result.output


@pytest.mark.parametrize(
    "command", [["record", "info"], ["report"], ["record", "repair"], ["link", "decode", "--file"]]
)
def test_a_fifo_given_as_a_recording_or_capture_is_refused_without_waiting(
    tmp_path: Path, command: list[str]
) -> None:
    fifo = tmp_path / "run.mcap"
    os.mkfifo(fifo)  # no writer: opening it to read would wait for ever
    result = CliRunner().invoke(app, [*command, str(fifo)])
    assert result.exit_code == 2, result.output
    assert "not a regular file" in result.output
    assert "Traceback" not in result.output

"""A wrong key as a user meets it: ``freelook robot`` with one key, ``freelook operator`` with
another, real UDP on loopback and real Chromium. The station's terminal and its cockpit say
that the robot does not answer the session request; the robot's log names the refused source;
the cockpit never shows a green "safety: clear" it has no report for. And the operator records
by default, saying where (README's fleet section), or not at all with ``--no-record``."""

from __future__ import annotations

import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

import pytest
from mcap.reader import make_reader

pytestmark = pytest.mark.browser

FREELOOK = [sys.executable, "-m", "freelook.cli"]


class Lines:
    """A process's output, line by line, read on a thread so a wait has a deadline."""

    def __init__(self, stream: IO[str]) -> None:
        self.seen: list[str] = []
        self._queue: queue.Queue[str] = queue.Queue()
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def all(self) -> list[str]:
        """Every line, once the process has ended (its output closed)."""
        self._thread.join(timeout=30)
        assert not self._thread.is_alive(), "the output did not close"
        while not self._queue.empty():
            self.seen.append(self._queue.get())
        return self.seen

    def _read(self, stream: IO[str]) -> None:
        with stream:
            for line in stream:
                self._queue.put(line.rstrip("\n"))

    def wait_for(self, text: str, within: float = 120.0) -> str:
        """The first line holding ``text``; raises, with what came instead, at the deadline."""
        for line in self.seen:
            if text in line:
                return line
        deadline = time.monotonic() + within
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._queue.get(timeout=left)
            except queue.Empty:
                break
            self.seen.append(line)
            if text in line:
                return line
        raise AssertionError(f"no line with {text!r} within {within} s; saw {self.seen}")


def _free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start(args: list[str], cwd: Path) -> tuple[subprocess.Popen[str], Lines, Lines]:
    process = subprocess.Popen(
        [*FREELOOK, *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "FREELOOK_LINK_KEY": ""},
    )
    assert process.stdout is not None
    assert process.stderr is not None
    return process, Lines(process.stdout), Lines(process.stderr)


def _stop(process: subprocess.Popen[str]) -> int:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            return process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
    return int(process.returncode)


def test_a_wrong_key_is_said_in_the_terminal_the_cockpit_and_the_robots_log(
    browser: Any, tmp_path: Path
) -> None:
    port = _free_udp_port()
    robot, _, robot_err = _start(
        [
            "robot",
            "--world",
            "square",
            "--listen",
            f"udp://127.0.0.1:{port}",
            "--key",
            "right",
            "--weak-key",
        ],
        tmp_path,
    )
    operator = None
    try:
        assert robot.poll() is None
        operator, out, _ = _start(
            [
                *("operator", "--robot", f"udp://127.0.0.1:{port}", "--key", "WRONG", "--weak-key"),
                *("--no-browser", "--port", "0"),
            ],
            tmp_path,
        )
        url = out.wait_for("— open http").split("open ", 1)[1]
        recording = out.wait_for("recording to runs/").split("recording to ", 1)[1]
        line = out.wait_for("no answer to session request")
        assert re.fullmatch(
            rf"no answer to session request from the robot at udp://127\.0\.0\.1:{port} "
            r"\([0-9]+ sent, as station 1\): wrong key or station id, or no robot there",
            line,
        ), line
        refused = robot_err.wait_for("refused packets from 127.0.0.1:")
        assert "(auth: tag does not verify" in refused
        assert "wrong key or station id" in refused

        page = browser.new_page(viewport={"width": 1500, "height": 900})
        try:
            page.goto(url)
            page.wait_for_function(
                "document.querySelector('#link-state').textContent.includes('no answer')",
                timeout=15_000,
            )
            link = page.locator("#link-state")
            assert link.inner_text() == (
                "link: no answer to session request (wrong key or station id, or no robot there)"
            )
            assert "bad" in (link.get_attribute("class") or "")
            safety = page.locator("#safety-chip")
            assert safety.inner_text() != "safety: clear"
            assert "ok" not in (safety.get_attribute("class") or "").split()
        finally:
            page.close()
        assert _stop(operator) == 0
        # a line when the state changes: one, as it stayed unanswered
        assert sum("no answer to session request" in seen for seen in out.all()) == 1
        assert any(seen.startswith("recorded ") for seen in out.seen)
        with (tmp_path / recording).open("rb") as stream:
            summary = make_reader(stream).get_summary()
        assert summary is not None
        topics = {channel.topic for channel in summary.channels.values()}
        assert "/robot_description" in topics
    finally:
        if operator is not None:
            _stop(operator)
        _stop(robot)
    # the robot logged the one source once (its period is 10 s)
    assert sum("refused packets from" in seen for seen in robot_err.all()) == 1


def test_no_record_records_nothing(tmp_path: Path) -> None:
    port = _free_udp_port()
    operator, out, _ = _start(
        [
            *("operator", "--robot", f"udp://127.0.0.1:{port}", "--key", "k", "--weak-key"),
            *("--no-browser", "--port", "0", "--no-record"),
        ],
        tmp_path,
    )
    try:
        out.wait_for("— open http")
    finally:
        assert _stop(operator) == 0
    assert not any("record" in line for line in out.all())
    assert list(tmp_path.iterdir()) == []

"""A running ``freelook sim`` and a headless Chromium driven by Playwright."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from waiting import wait_until

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


ANNOUNCED_URL = re.compile(r"open (https?://\S+)")


class Sim:
    """A running ``freelook sim``: ``url`` is the one it announced, token included."""

    def __init__(
        self, process: subprocess.Popen[str], url: str, port: int, record: Path | None
    ) -> None:
        self.process = process
        self.url = url
        self.port = port
        self.record = record
        self.lines: list[str] = []

    @property
    def token(self) -> str:
        return self.url.split("?token=", 1)[1]

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                return self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                raise
        return int(self.process.returncode)


def start_sim(
    tmp_path: Path, *extra: str, record: bool = False, announce_within: float = 90
) -> Sim:
    port = free_port()
    args = [
        sys.executable,
        "-m",
        "freelook.cli",
        "sim",
        "--no-browser",
        "--port",
        str(port),
        *extra,
    ]
    path = tmp_path / "run.mcap" if record else None
    args += ["--record", str(path)] if path else ["--no-record"]
    process = subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    stdout = process.stdout
    assert stdout is not None
    lines: list[str] = []

    def announced() -> re.Match[str] | None:
        line = stdout.readline()
        lines.append(line)
        if not line and process.poll() is not None:
            raise AssertionError(f"freelook sim ended ({process.returncode}): {lines}")
        return ANNOUNCED_URL.search(line)

    try:
        found = wait_until(  # each look reads a line of its output
            announced,
            announce_within,
            "freelook sim to announce its URL",
            every=0,
            show=lambda: lines[-5:],
        )
    except AssertionError:
        process.kill()
        raise
    sim = Sim(process, found.group(1), port, path)
    sim.lines = lines
    return sim


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    running = start_sim(tmp_path_factory.mktemp("sim"))
    yield running
    running.stop()
    if running.process.stdout is not None:
        running.process.stdout.close()


#: how every browser test runs Debian's Chromium (headless, no GPU, nothing from the network)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--use-fake-ui-for-media-stream",
]


class _Browser:
    """A Playwright browser whose pages let the test's own scripts run past the pages'
    Content-Security-Policy (Playwright evaluates some of its waits as strings, which the
    policy refuses as eval); a page made with ``bypass_csp=False`` runs under the policy as a
    user's does (tests/web/test_page_policy.py)."""

    def __init__(self, browser: Any) -> None:
        self._browser = browser

    def new_page(self, **options: Any) -> Any:
        options.setdefault("bypass_csp", True)
        return self._browser.new_page(**options)

    def new_context(self, **options: Any) -> Any:
        options.setdefault("bypass_csp", True)
        return self._browser.new_context(**options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._browser, name)


@contextmanager
def chromium() -> Iterator[Any]:
    """Debian's Chromium, headless, driven by Playwright (tools/screenshots.py uses it too)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield _Browser(instance)
        finally:
            instance.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed")
    with chromium() as instance:
        yield instance

"""A running ``freelook sim`` and a headless Chromium driven by Playwright.

A sim's output is read to its end on a thread of its own (:meth:`Sim.follow`) once it has
announced its URL: a sim whose output nobody reads would stop at its first write past the
pipe's 64 KiB, its robot frozen mid-test. What it said (the robot's refusals, a driver gone
blind) is in ``Sim.lines``, and a failing test can show it (:meth:`Sim.said`).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from steady_picture import STEADY_PICTURE
from waiting import wait_until

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


ANNOUNCED_URL = re.compile(r"open (https?://\S+)")
#: the sims started and not yet stopped, for a failing test's report
_RUNNING: list[Sim] = []


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
        self._reader: threading.Thread | None = None

    @property
    def token(self) -> str:
        return self.url.split("?token=", 1)[1]

    def follow(self) -> None:
        """Read the rest of the sim's output into ``lines``, on a thread, until it ends."""
        stdout = self.process.stdout
        assert stdout is not None
        assert self._reader is None

        def read() -> None:
            for line in stdout:
                self.lines.append(line)

        self._reader = threading.Thread(target=read, name="sim output", daemon=True)
        self._reader.start()

    def said(self, *words: str, last: int = 20) -> list[str]:
        """The last ``last`` lines of output holding any of ``words`` (all lines if none)."""
        found = [line.rstrip() for line in self.lines if not words or any(w in line for w in words)]
        return found[-last:]

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                # what every thread was doing: faulthandler's dump on SIGABRT (started with
                # PYTHONFAULTHANDLER), read into lines before the error names them
                self.process.send_signal(signal.SIGABRT)
                try:
                    self.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                if self._reader is not None:
                    self._reader.join(timeout=10)
                raise AssertionError(
                    "freelook sim did not stop within 20 s of SIGINT; its threads then:\n"
                    + "".join(self.lines[-80:])
                ) from None
        if self._reader is not None:
            self._reader.join(timeout=10)  # the output's end: all the sim said is in lines
        if self in _RUNNING:
            _RUNNING.remove(self)
        return int(self.process.returncode)


def start_sim(
    tmp_path: Path,
    *extra: str,
    record: bool = False,
    announce_within: float = 90,
    follow: bool = True,
) -> Sim:
    """A ``freelook sim`` started and announced; with ``follow`` (the default) its output is
    read on from then on (:meth:`Sim.follow`), else the test reads it itself. Its cockpit is
    on a port it binds itself (``--port 0``), read from the URL it announces: a port picked
    here and bound there could be taken in between by another test's connection."""
    args = [
        sys.executable,
        "-m",
        "freelook.cli",
        "sim",
        "--no-browser",
        "--port",
        "0",
        *extra,
    ]
    path = tmp_path / "run.mcap" if record else None
    args += ["--record", str(path)] if path else ["--no-record"]
    process = subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONFAULTHANDLER": "1"},
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
    url = found.group(1)
    port = urllib.parse.urlsplit(url).port
    assert port is not None, url
    sim = Sim(process, url, port, path)
    sim.lines = lines
    if follow:
        sim.follow()
    _RUNNING.append(sim)
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


#: what a failing browser test shows of each open cockpit page: its own motion stop (guard.js)
#: and how fresh its picture and telemetry were (freshness.js)
PAGE_STATE = """(() => { const f = window.freelook; if (!f) return null;
  return { guard: f.guard, stale: f.stale, pageBehind: f.pageBehind,
    telemetryAge: f.telemetryAge, frame: f.frame, mode: f.last && f.last.mode,
    safety: f.last && f.last.safety, now: Date.now() / 1000 }; })()"""
#: the robot's words a failing browser test shows: its judgement of whether the driver sees
#: (robot/_sight.py), its refusals, its watchdog and its stalls (runtime/_realtime.py)
ROBOT_SAID = ("cannot see", "sees again", "refused", "watchdog", "stalled", "Traceback", "Error")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Iterator[None] | Any:
    """A failed browser test's report shows, beside the failure, what its sims said of the
    driver's sight and each open page's motion stop and freshness: why a jog or a drive did
    not move the robot (a page's stop latched on a frozen picture; the robot judging its
    driver blind), in the run that failed."""
    report = yield
    if report.when != "call" or not report.failed:
        return report
    for sim in list(_RUNNING):
        said = "\n".join(sim.said(*ROBOT_SAID))
        report.sections.append((f"the sim on port {sim.port}: what its robot said", said))
    for value in getattr(item, "funcargs", {}).values():
        if isinstance(value, _Browser):
            shown = []
            try:
                for context in value.contexts:
                    for page in context.pages:
                        shown.append(f"{page.url}: {page.evaluate(PAGE_STATE)!r}")
            except Exception as err:  # a browser gone: say so rather than hide the failure
                shown.append(f"(no page state: {err!r})")
            report.sections.append(("the open pages", "\n".join(shown)))
    return report


class _Browser:
    """A Playwright browser whose pages let the test's own scripts run past the pages'
    Content-Security-Policy (Playwright evaluates some of its waits as strings, which the
    policy refuses as eval); a page made with ``bypass_csp=False`` runs under the policy as a
    user's does (tests/web/test_page_policy.py). Its cockpits stop motion on a picture frozen
    for 10 s rather than 1 (``STEADY_PICTURE``) unless made with ``steady_picture=False``."""

    def __init__(self, browser: Any) -> None:
        self._browser = browser

    def new_page(self, *, steady_picture: bool = True, **options: Any) -> Any:
        options.setdefault("bypass_csp", True)
        page = self._browser.new_page(**options)
        if steady_picture:
            page.add_init_script(STEADY_PICTURE)
        return page

    def new_context(self, *, steady_picture: bool = True, **options: Any) -> Any:
        options.setdefault("bypass_csp", True)
        context = self._browser.new_context(**options)
        if steady_picture:
            context.add_init_script(STEADY_PICTURE)
        return context

    def __getattr__(self, name: str) -> Any:
        return getattr(self._browser, name)


@contextmanager
def chromium(executable: str = CHROMIUM, args: list[str] = CHROMIUM_ARGS) -> Iterator[Any]:
    """Debian's Chromium, headless, driven by Playwright (tools/screenshots.py uses it too);
    ``executable``: a script that starts it another way (in a network namespace); ``args``:
    its switches (another GPU-less configuration)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=executable, headless=True, args=args)
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

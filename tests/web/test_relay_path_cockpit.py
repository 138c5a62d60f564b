"""The cockpit says which path carries a link through a relay, in real Chromium, as a user
runs it: ``freelook relay`` on TLS, ``freelook robot --listen zenoh+tls://…/r1?direct`` and
``freelook operator --robot zenoh+tls://…/r1?direct`` on loopback. Both ends punch a direct
path (loopback: nothing in the way); the path chip says "direct", the relay standing by, with
the session's round trip as the state the page was sent says."""

from __future__ import annotations

import os
import re
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from programs import ANNOUNCED_URL, Program, start, wait_for_line  # type: ignore[import-not-found]

from cli_processes import free_udp_port

sys.path.insert(0, str(Path(__file__).parents[1] / "link"))  # the relay tests' keys and CA
from test_relay import STATION_KEY, _keys_file

from freelook.link import TLS_CA_ENV

pytestmark = pytest.mark.browser

FIRST_START = 600.0  # s: a first start compiles the robot program's loops


@pytest.fixture(scope="module")
def cockpit(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    folder = tmp_path_factory.mktemp("relay-path")
    keys = _keys_file(folder)
    port = free_udp_port(socket.SOCK_STREAM)
    url = f"zenoh+tls://127.0.0.1:{port}/r1?direct"
    os.environ[TLS_CA_ENV] = str(folder / "ca.pem")  # the operator's root CA, inherited
    started: list[Program] = []
    try:
        relay = start("relay", "--listen", f"tls/127.0.0.1:{port}", "--users",
                      str(folder / "relay.toml"))  # fmt: skip
        started.append(relay)
        wait_for_line(relay, re.compile("STUN on udp/"), 60, "the relay to listen")
        robot = start("robot", "--hardware", "sim", "--listen", url, "--keys", str(keys))
        started.append(robot)
        wait_for_line(robot, re.compile("profile on"), FIRST_START, "the robot to serve")
        operator = start(
            *("operator", "--robot", url, "--key", STATION_KEY, "--no-browser", "--no-record"),
            *("--port", str(free_udp_port(socket.SOCK_STREAM))),
        )
        started.append(operator)
        line = wait_for_line(operator, ANNOUNCED_URL, 120, "the operator to serve its cockpit")
        found = ANNOUNCED_URL.search(line)
        assert found is not None
        yield found.group(1), port
    finally:
        os.environ.pop(TLS_CA_ENV, None)
        for program in reversed(started):
            program.stop()


def test_the_path_chip_says_direct_with_the_round_trip(
    browser: Any, cockpit: tuple[str, int]
) -> None:
    url, port = cockpit
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        page.goto(url)
        page.wait_for_function(
            "() => { const s = window.freelook && window.freelook.last;"
            " return !!s && !!s.link.path && s.link.path.via === 'direct'"
            " && typeof s.clock.rtt === 'number'; }",
            polling=100,
            timeout=60_000,
        )
        page.wait_for_timeout(300)  # the next state paints the chip from the same fields
        chip, told = page.evaluate(
            "() => [document.getElementById('path-chip').textContent, window.freelook.last]"
        )
        assert page.is_visible("#path-chip"), chip
        assert told["link"]["path"] == {"via": "direct", "relay": f"127.0.0.1:{port}"}, told
        found = re.fullmatch(
            rf"path: direct \(relay 127\.0\.0\.1:{port} standing by\) · round trip ([\d.]+) ms",
            chip,
        )
        assert found is not None, chip
        assert float(found[1]) < 100.0, chip  # loopback, direct
    finally:
        page.close()

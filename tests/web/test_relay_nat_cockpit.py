"""The cockpit drives a robot through a relay with both ends behind NAT, in real Chromium, as a
user runs it: ``freelook relay`` on TLS in the public namespace, ``freelook robot`` (native
profile, its keys file, VP9 video) behind one MASQUERADE NAT and ``freelook operator`` (the
station's key, the relay's CA) behind the other, the namespaces of
``tests/link/test_relay_nat.py``. Chromium runs in the station's namespace (started through
``ip netns exec``) and opens the operator's cockpit on that namespace's loopback, as a browser
on the operator's laptop does.

The page holds W in Tank: the robot's own odometry moves forward and stops once W is up;
telemetry comes at its usual rate (a spec bound with a wide margin: half the robot's spacing
allows), the camera's VP9 frames decode on the page through WebCodecs, and the path chip says
the relay carries the link. Mid-drive, W held, the robot's NAT forgets its mappings
(``conntrack -F``): the robot reaches the relay again from a new port, and every state the page
is sent meanwhile has the session open and telemetry less than a second old."""

from __future__ import annotations

import contextlib
import math
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cockpit_scenes import motion, state, wait_until  # type: ignore[import-not-found]

from conftest import CHROMIUM, chromium  # type: ignore[import-not-found]

sys.path.insert(0, str(Path(__file__).parents[1] / "link"))  # the NAT relay tests' helpers
from test_relay import STATION_KEY
from test_relay_nat import (
    FIRST_START,
    PORT,
    RELAY,
    ROBOT_NAT_OUTSIDE,
    RelayWorld,
    _files,
    _read_until,
    _start,
    _stop,
    relay_world,
)

from freelook.config import load_robot
from freelook.link import TLS_CA_ENV

pytestmark = pytest.mark.browser

#: s W is held after the flush: an input's length, not a wait
HOLD = 3.0
#: every state the page is sent from when ``window.__seen`` is emptied: (page's ms, the
#: robot's newest report's age, the session's status, the measured speed)
STATES = """
window.__seen = [];
const look = () => {
  const s = window.freelook && window.freelook.last;
  if (s && s !== window.__lastState) {
    window.__lastState = s;
    window.__seen.push([performance.now(), s.age, s.link.session, s.v]);
  }
  requestAnimationFrame(look);
};
requestAnimationFrame(look);
"""


def _drain(process: subprocess.Popen[str], said: list[str]) -> None:
    """The rest of ``process``'s output read into ``said`` on a thread: a program whose output
    nobody reads stops at its first write past the pipe's 64 KiB."""

    def read() -> None:
        assert process.stdout is not None
        with contextlib.suppress(ValueError, OSError):  # closed when the process is stopped
            for line in process.stdout:
                said.append(line)

    threading.Thread(target=read, name="program output", daemon=True).start()


@pytest.fixture
def world() -> Iterator[RelayWorld]:
    from netns import unavailable

    why = unavailable() or (None if shutil.which("openssl") else "openssl is not installed")
    if why is None and not Path(CHROMIUM).exists():
        why = "Debian's chromium is not installed"
    if why is not None:
        pytest.skip(why)
    with relay_world() as made:
        yield made


@pytest.mark.timeout(FIRST_START + 240)
def test_the_cockpit_drives_a_robot_behind_nat_through_a_tls_relay(
    world: RelayWorld, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = _files(tmp_path)
    url = f"zenoh+tls://{RELAY}:{PORT}/r1"
    monkeypatch.setenv(TLS_CA_ENV, str(tmp_path / "ca.pem"))  # the operator's root CA
    port = 8765  # the cockpit's, on the station namespace's own loopback: nothing else there
    started: list[subprocess.Popen[str]] = []
    said: dict[str, list[str]] = {"relay": [], "robot": [], "operator": []}
    # Chromium in the station's namespace: the operator's laptop
    browser_in_station = tmp_path / "chromium-in-station"
    browser_in_station.write_text(
        f'#!/bin/sh\nexec ip netns exec {world.station} {CHROMIUM} "$@"\n'
    )
    browser_in_station.chmod(0o755)
    try:
        relay = _start(world.public, "-m", "freelook.cli", "relay", "--listen",
                       f"tls/{RELAY}:{PORT}", "--users", str(tmp_path / "relay.toml"))  # fmt: skip
        started.append(relay)
        _read_until(relay, "listening on", 60, said["relay"])
        _drain(relay, said["relay"])
        robot = _start(world.robot, "-m", "freelook.cli", "robot", "--hardware", "sim",
                       "--listen", url, "--keys", str(keys), "--video", "vp9")  # fmt: skip
        started.append(robot)
        _read_until(robot, "profile on", FIRST_START, said["robot"])
        _drain(robot, said["robot"])
        operator = _start(world.station, "-m", "freelook.cli", "operator", "--robot", url,
                          "--key", STATION_KEY, "--no-browser", "--no-record",
                          "--port", str(port))  # fmt: skip
        started.append(operator)
        line = _read_until(operator, "open http", 120, said["operator"])
        _drain(operator, said["operator"])
        cockpit = line.split("open ", 1)[1].split()[0]
        assert cockpit.startswith(f"http://127.0.0.1:{port}/"), line
        with chromium(str(browser_in_station)) as browser:
            out = _drive(browser, cockpit, world)
    finally:
        for process in reversed(started):
            _stop(process)
    print(f"\nthe cockpit behind NAT through the relay: {out}")
    nominal = 1.0 / load_robot("pioneer3dx").link.robot_tx_spacing  # the robot's reports a second
    assert out["telemetry_hz"] > 0.5 * nominal, (out, nominal)
    assert out["forward"] > 0.1, out  # W drove the robot forward, by its own odometry
    assert out["stopped_v"] < 0.05, out  # and it stopped once W was up
    assert out["codec"].startswith("vp09"), out  # VP9, decoded by the page's WebCodecs
    assert out["decoded_per_s"] > 5.0, out  # frames decode all along, not one keyframe
    assert out["video_errors"] == 0, out
    assert out["path"].startswith(f"path: relay {RELAY}:{PORT}"), out
    # the flush: the robot on the relay from a new port, the same session all along
    robot_before = {p for p in out["peers_before"] if p.startswith(ROBOT_NAT_OUTSIDE + ":")}
    robot_after = {p for p in out["peers_after"] if p.startswith(ROBOT_NAT_OUTSIDE + ":")}
    assert len(robot_before) == len(robot_after) == 1, out
    assert robot_before != robot_after, out
    assert out["states_across_flush"] > 10, out
    assert out["sessions_across_flush"] == ["open"], out  # never re-opened
    assert out["oldest_telemetry"] < 1.0, out  # at most a second of telemetry lost
    assert out["driving_after_flush"] > 0.05, out  # W still drives
    assert out["page_errors"] == [], out
    for name in ("relay", "robot", "operator"):
        assert "Traceback" not in "".join(said[name]), said[name]


def _drive(browser: Any, cockpit: str, world: RelayWorld) -> dict[str, Any]:
    """Open the cockpit, watch telemetry and video for a few seconds, hold W in Tank and flush
    the robot's NAT meanwhile; what the page and the relay saw."""
    page = browser.new_page(viewport={"width": 1500, "height": 900})
    page.add_init_script(STATES)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(cockpit)
    page.wait_for_function(
        "window.freelook && window.freelook.last && window.freelook.last.pose", timeout=60_000
    )
    wait_until(
        lambda: page.evaluate("window.freelook.video.decoded") > 10,
        60,
        "VP9 frames decoded on the page",
        show=lambda: page.evaluate("[window.freelook.video.config, window.freelook.video.errors]"),
    )
    decoded0, t0 = page.evaluate("window.freelook.video.decoded"), time.monotonic()
    page.wait_for_timeout(3000)  # a few seconds of telemetry and video, as they come
    decoded, elapsed = page.evaluate("window.freelook.video.decoded"), time.monotonic() - t0
    telemetry_hz = state(page)["rates"]["telemetry_hz"]
    page.click("[data-mode=tank]")
    before = state(page)["odom"]
    page.keyboard.down("KeyW")
    wait_until(lambda: state(page)["v"] > 0.05, 5, "W to drive", show=lambda: motion(page))
    page.wait_for_timeout(1000)  # W held
    peers_before = world.relay_peers()
    page.evaluate("window.__seen = []")
    world.flush_robot_nat()
    page.wait_for_timeout(HOLD * 1000)  # W held on across the flush
    seen = page.evaluate("window.__seen")
    peers_after = world.relay_peers()
    page.keyboard.up("KeyW")
    wait_until(
        lambda: abs(state(page)["v"]) < 0.02,
        5,
        "the robot to stop once W is up",
        show=lambda: motion(page),
    )
    after = state(page)
    x, y, theta = before["x"], before["y"], before["theta"]
    dx, dy = after["odom"]["x"] - x, after["odom"]["y"] - y
    out = {
        "telemetry_hz": telemetry_hz,
        "decoded_per_s": (decoded - decoded0) / elapsed,
        "codec": page.evaluate("window.freelook.video.config"),
        "video_errors": page.evaluate("window.freelook.video.errors"),
        "forward": dx * math.cos(theta) + dy * math.sin(theta),
        "stopped_v": abs(after["v"]),
        "path": page.evaluate("document.getElementById('path-chip').textContent"),
        "page_errors": errors,
        "peers_before": sorted(peers_before),
        "peers_after": sorted(peers_after),
        "states_across_flush": len(seen),
        "sessions_across_flush": sorted({session for _, _, session, _ in seen}),
        "oldest_telemetry": max(age for _, age, _, _ in seen),
        "driving_after_flush": seen[-1][3],
    }
    page.close()
    return out

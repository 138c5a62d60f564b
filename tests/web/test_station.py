"""The virtual operator station (``/station``) end to end: ``freelook sim --robot taros`` in
``eod``, real Chromium, three.js, and iwer (npm) emulating a headset and its controllers.

Entering VR works; both eyes render; the main screen's two images come from one stereo frame
and carry the HIT shift computed from the session's own view parameters, in the eye textures
and in the pixels each eye sees; turning the head turns the view and not the robot; a
controller's thumbstick drives the robot."""

from __future__ import annotations

import base64
import io
import math
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image
from test_cockpit import screenshot_path  # type: ignore[import-not-found]

from conftest import Sim, start_sim  # type: ignore[import-not-found]
from freelook.stereo import hit_from_view

IWER = Path(__file__).parents[2] / "node_modules" / "iwer" / "build" / "iwer.min.js"
HEADSET = """
window.__xr = new IWER.XRDevice(IWER.metaQuest3);
window.__xr.stereoEnabled = true;
window.__xr.installRuntime({ forceInstall: true });
"""
SCREEN = {"screen_distance": 1.5, "screen_width": 2.0}  # near: a shift of several pixels
WATCH_STATES = """(() => {
  window.__states = [];
  let seen = station.last;
  const watch = setInterval(() => {
    if (station.last !== seen) { seen = station.last; window.__states.push(seen); }
  }, 20);
  window.__stopWatching = () => { clearInterval(watch); return window.__states; };
})()"""  # every state the robot reports from now on


@pytest.fixture(scope="module")
def taros(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    running = start_sim(tmp_path_factory.mktemp("station"), "--robot", "taros", "--world", "eod")
    yield running
    running.stop()
    if running.process.stdout is not None:
        running.process.stdout.close()


def test_the_station_page_needs_the_launchs_token(taros: Sim) -> None:
    base = taros.url.split("/?token=")[0]
    for url in (f"{base}/station", f"{base}/station?token=wrong"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url, timeout=10)
        assert refused.value.code == 403
        refused.value.close()
    with urllib.request.urlopen(f"{base}/station?token={taros.token}", timeout=10) as page:
        assert page.status == 200
        assert "/static/station.js" in page.read().decode()


def _png(data_url: str) -> np.ndarray:
    raw = base64.b64decode(data_url.split(",", 1)[1])
    return np.asarray(Image.open(io.BytesIO(raw)).convert("RGB"), dtype=np.float64)


def _best_shift(before: np.ndarray, after: np.ndarray, most: int) -> int:
    """The horizontal shift s (px) for which after[:, x] best matches before[:, x − s]."""
    costs = {}
    w = before.shape[1]
    for s in range(-most, most + 1):
        a = after[:, most + s : w - most + s]
        b = before[:, most : w - most]
        costs[s] = float(np.abs(a - b).mean())
    return min(costs, key=lambda s: costs[s])


def _eyes(page: Any) -> dict[str, Any]:
    return page.evaluate("window.station.captureEyes()")  # type: ignore[no-any-return]


def _canvas(page: Any, name: str) -> np.ndarray:
    return _png(page.evaluate(f"window.station.room.canvases.{name}.toDataURL('image/png')"))


def test_the_station_in_an_emulated_headset(browser: Any, taros: Sim, tmp_path: Path) -> None:
    if not IWER.exists():
        pytest.skip("iwer is not installed (npm ci)")
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.add_init_script(path=str(IWER))
    page.add_init_script(HEADSET)
    query = "&".join(f"{k}={v}" for k, v in SCREEN.items())
    page.goto(taros.url.replace("/?token=", "/station?token=") + "&" + query)
    page.wait_for_function(
        "station.mainFrames > 2 && station.drivingFrames > 2 && station.thermalFrames > 0"
        " && station.last && station.last.odom",
        timeout=60_000,
    )
    assert page.evaluate("station.mainCamera.name") == "arm_stereo"
    assert page.evaluate("station.thermalCamera.kind") == "thermal"
    assert page.evaluate("station.room.robotMeshes.length") == 26  # TAROS's collision boxes

    # entering VR
    page.click("#enter-vr")
    page.wait_for_function("station.inXR && station.xrFrames > 5 && station.hit.source === 'xr'")
    page.screenshot(path=screenshot_path(tmp_path, "station-vr.png"))

    # HIT from the session's own views: eye width, projection, the emulator's IPD
    views = page.evaluate("station.xrViews")
    assert [v["eye"] for v in views] == ["left", "right"]
    eye_width = views[0]["viewport"]["width"]
    assert eye_width == 640  # half the 1280 px canvas
    ipd = page.evaluate("window.__xr.ipd")
    expected = hit_from_view(eye_width, views[0]["projection"][0], ipd, 1.5, 2.0, 320)
    got = page.evaluate("station.hit")
    assert got["camera_shift"] == pytest.approx(expected.camera_shift, rel=1e-6)
    assert got["max_parallax"] == pytest.approx(expected.max_parallax, rel=1e-6)
    shift = page.evaluate("station.shift")
    assert shift == pytest.approx(expected.camera_shift, rel=1e-6)  # = IPD·X_c / (2 w_s) ≈ 5
    assert shift == pytest.approx(ipd * 320 / (2 * 2.0), rel=1e-6)

    # both eyes are cut from one frame with one capture stamp
    eyes = page.evaluate("station.eyes")
    assert eyes["left"]["frameId"] == eyes["right"]["frameId"]
    assert eyes["left"]["stamp"] == eyes["right"]["stamp"]
    assert page.evaluate("station.eyeMismatches") == 0
    assert page.evaluate("station.layoutErrors") == 0  # every frame: 640 × 240, both eyes
    assert page.evaluate("station.mainWidth") == 640

    # the eye textures: each image moved outwards by the shift (left to the left)
    page.evaluate("station.freeze = true")  # from now on each frame is dropped as it arrives
    page.evaluate("station.hitMode = 'off'; station.hitKey = ''")
    page.wait_for_function("station.shift === 0")
    plain_left, plain_right = _canvas(page, "left"), _canvas(page, "right")
    assert np.abs(plain_left - plain_right).mean() > 1.0  # two different eyes
    off = _eyes(page)
    page.evaluate("station.hitMode = 'fixed'; station.hitKey = ''")
    page.wait_for_function("station.shift > 0")
    on = _eyes(page)
    assert _best_shift(plain_left, _canvas(page, "left"), 12) == -round(shift)
    assert _best_shift(plain_right, _canvas(page, "right"), 12) == round(shift)

    # what each eye sees: the main screen's content moves by p_max headset pixels, outwards
    p_max = expected.max_parallax
    boxes = page.evaluate("station.mainScreenBoxes()")
    for (eye, sign), (x0, x1, y0, y1) in zip((("left", -1), ("right", 1)), boxes, strict=True):
        assert x1 - x0 > 200, f"the main screen is not in the {eye} eye's view"
        crop = np.s_[int(y0) + 4 : int(y1) - 4, int(x0) + 4 : int(x1) - 4]
        before, after = _png(off[eye])[crop], _png(on[eye])[crop]
        assert before.std() > 5, f"the {eye} eye sees nothing"
        moved = _best_shift(before, after, 16)
        assert abs(moved - sign * p_max) <= 1.0, (eye, moved, p_max)
    left_eye, right_eye = _png(on["left"]), _png(on["right"])
    assert np.abs(left_eye - right_eye).mean() > 1.0  # the two eye views differ
    page.evaluate("station.freeze = false")

    # turning the head turns the view, not the robot: no drive command leaves the station, the
    # robot commands its tracks nothing, and they do not move
    odom = page.evaluate("[station.last.odom.x, station.last.odom.y, station.last.odom.theta]")
    sent = page.evaluate("station.sentAxes")
    page.evaluate(WATCH_STATES)
    a = math.radians(40) / 2
    page.evaluate(f"window.__xr.quaternion.set(0, {math.sin(a)}, 0, {math.cos(a)})")
    page.wait_for_function("station.headYaw > 0.6")
    turned = _eyes(page)
    assert np.abs(_png(turned["left"]) - left_eye).mean() > 5.0
    page.wait_for_timeout(1000)  # a second with the head turned, the states watched
    page.wait_for_function("window.__states.length >= 3")
    states = page.evaluate("window.__stopWatching()")
    assert page.evaluate("station.sentAxes") == sent  # no drive command came from the head
    headings = [s["odom"]["theta"] for s in states]
    for state in states:
        assert state["cmd"] == {"v": 0, "omega": 0}, (state["cmd"], headings)
        assert [state["odom"]["x"], state["odom"]["y"]] == odom[:2], (state["odom"], headings)
    # ... unless head-coupled pan is on: then the head's yaw turns the camera
    pan = page.evaluate("station.last.pan")
    page.evaluate("station.headPan = true")
    page.wait_for_function(f"Math.abs(station.last.pan - {pan}) > 0.05", timeout=20_000)
    page.evaluate("station.headPan = false")
    page.evaluate("window.__xr.quaternion.set(0, 0, 0, 1)")
    odom = page.evaluate("[station.last.odom.x, station.last.odom.y, station.last.odom.theta]")
    sent = page.evaluate("station.sentAxes")

    # a controller's thumbstick (the grip held) drives the robot
    page.evaluate(
        "window.__xr.controllers.left.updateButtonValue('squeeze', 1);"
        "window.__xr.controllers.left.updateAxes('thumbstick', 0, -1);"
    )
    start = odom
    page.wait_for_function(
        f"Math.hypot(station.last.odom.x - {start[0]}, station.last.odom.y - {start[1]}) > 0.05",
        timeout=20_000,
    )
    page.evaluate(
        "window.__xr.controllers.left.updateAxes('thumbstick', 0, 0);"
        "window.__xr.controllers.left.updateButtonValue('squeeze', 0);"
    )
    assert page.evaluate("station.sentAxes") > sent

    # B switches the controllers to the arm: the right stick, a grip held, raises the tool
    page.evaluate("window.__xr.controllers.right.updateButtonValue('b-button', 1)")
    page.wait_for_function("station.driveMode === 'arm'")
    page.evaluate("window.__xr.controllers.right.updateButtonValue('b-button', 0)")
    page.wait_for_function("station.last.mode === 'arm'", timeout=20_000)
    joints = page.evaluate("station.last.arm.positions")
    page.evaluate(
        "window.__xr.controllers.right.updateButtonValue('squeeze', 1);"
        "window.__xr.controllers.right.updateAxes('thumbstick', 0, -1);"
    )
    page.wait_for_function(
        f"station.last.arm.positions.some((q, k) => Math.abs(q - {joints}[k]) > 0.05)",
        timeout=20_000,
    )
    page.evaluate(
        "window.__xr.controllers.right.updateAxes('thumbstick', 0, 0);"
        "window.__xr.controllers.right.updateButtonValue('squeeze', 0);"
    )
    assert errors == []
    page.close()


# Where a panel's points land on the page in the desktop view: (x, y) in CSS px, per point
# given in the panel's own plane as fractions of its size ((0, 0) top left, (1, 1) bottom right).
PROJECT = """([name, points]) => {
  const room = station.room, THREE = room.THREE, mesh = room.panels[name];
  const { width, height } = mesh.geometry.parameters;
  room.camera.updateMatrixWorld(); mesh.updateMatrixWorld();
  const box = room.renderer.domElement.getBoundingClientRect();
  return points.map(([u, v]) => {
    const p = new THREE.Vector3((u - 0.5) * width, (0.5 - v) * height, 0)
      .applyMatrix4(mesh.matrixWorld).project(room.camera);
    return [box.left + (p.x + 1) / 2 * box.width, box.top + (1 - p.y) / 2 * box.height];
  });
}"""


def test_the_default_desktop_view_shows_the_status_icons_and_the_link_legend(
    browser: Any, taros: Sim, tmp_path: Path
) -> None:
    page = browser.new_page(viewport={"width": 1500, "height": 900})
    page.goto(taros.url.replace("/?token=", "/station?token="))
    page.wait_for_function("window.station && station.mainFrames > 2", timeout=60_000)
    page.wait_for_function("station.icons")  # the panels painted: status icons, link legend
    page.screenshot(path=screenshot_path(tmp_path, "station-desktop.png"))
    bar = page.locator("#bar").bounding_box()
    view = page.locator("#room").bounding_box()
    assert bar is not None
    assert view is not None
    corners = [[0, 0], [1, 0], [0, 1], [1, 1]]
    for x, y in page.evaluate(PROJECT, ["status", corners]):
        assert view["x"] <= x <= view["x"] + view["width"]
        assert bar["y"] + bar["height"] <= y <= view["y"] + view["height"]  # not under the bar
        hit = page.evaluate("([x, y]) => document.elementFromPoint(x, y).id", [x, min(y, 899)])
        assert hit == "room"
    # the link panel's legend: its top-left third, where it is written, is in view
    for x, y in page.evaluate(PROJECT, ["graph", [[0, 0], [1 / 3, 0], [1 / 3, 0.45]]]):
        assert view["x"] <= x <= view["x"] + view["width"]
        assert view["y"] <= y <= view["y"] + view["height"]
    # ...and nothing of its grey text is written beyond that third
    rightmost = page.evaluate("""() => {
      const c = station.room.canvases.graph;
      const d = c.getContext('2d').getImageData(0, 0, c.width, 120).data;
      let right = 0;
      for (let i = 0; i < d.length; i += 4) {
        const grey =
          Math.abs(d[i] - 0x85) + Math.abs(d[i + 1] - 0x96) + Math.abs(d[i + 2] - 0xa6) < 60;
        if (grey) right = Math.max(right, (i / 4) % c.width);
      }
      return right / c.width;
    }""")
    assert 0 < rightmost <= 1 / 3
    page.close()


def test_the_station_estop_key_only_engages_and_its_button_releases(
    browser: Any, taros: Sim
) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.goto(taros.url.replace("/?token=", "/station?token="))
    page.wait_for_function("window.station && station.last", timeout=60_000)
    assert page.locator("#estop-release").is_hidden()
    page.keyboard.press("Space")
    page.wait_for_function("station.last.estop", polling=50, timeout=5_000)
    page.keyboard.press("Space")  # again: it stays engaged
    page.wait_for_timeout(1000)  # time for a release to show, were there one
    assert page.evaluate("station.last.estop"), "the e-stop key released the e-stop"
    page.focus("#estop-release")
    page.keyboard.press("Enter")  # a key on the focused button is no release either
    page.wait_for_timeout(500)  # time for a release to show, were there one
    assert page.evaluate("station.last.estop")
    page.click("#estop-release")
    page.wait_for_function("!station.last.estop", polling=50, timeout=5_000)
    assert page.locator("#estop-release").is_hidden()
    page.close()

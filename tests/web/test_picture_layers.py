"""The picture moved to the prediction as the page's compositor draws it: real Chromium, without
a GPU (``--disable-gpu``) and on SwiftShader's software GL, the cockpit's own stylesheet and
picture-layers.js. A picture whose colour says where each pixel was (red across, green down) is
put on the layers through a turn and a move; the page's screenshot shows, at each of its pixels,
the colour of the picture's point that the exact warp (reprojection.js's homographies, inverted
here with numpy) moves onto it, and black where none does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import CHROMIUM, CHROMIUM_ARGS, chromium  # type: ignore[import-not-found]

pytestmark = pytest.mark.browser

STATIC = Path(__file__).resolve().parents[2] / "src" / "freelook" / "web" / "static"
W, H = 640, 480
PAGE = """<!doctype html><html><head><link rel="stylesheet" href="/static/cockpit.css">
<style>.pane { width: 640px; height: 480px; border: 0; border-radius: 0; }</style></head>
<body><section class="pane"><div id="picture-layers"></div>
<canvas id="camera" width="640" height="480"></canvas></section>
<script type="module">
import { PictureLayers } from "/static/picture-layers.js";
import { warpOf } from "/static/reprojection.js";
const robot = { camera_mount: [0.15, 0.0], camera: { width: 640, height: 480, fov_deg: 60,
  mount_height: 0.35 } };
const picture = document.createElement("canvas");
picture.width = 640; picture.height = 480;
const image = picture.getContext("2d").createImageData(640, 480);
for (let v = 0; v < 480; v++) for (let u = 0; u < 640; u++) {
  const i = 4 * (640 * v + u);
  image.data.set([Math.round(u * 255 / 639), Math.round(v * 255 / 479), 128, 255], i);
}
picture.getContext("2d").putImageData(image, 0, 0);
const layers = new PictureLayers(document.getElementById("picture-layers"),
  document.getElementById("camera"));
let shown = 0;
window.show = (from, to) => {
  const warp = warpOf(robot, { width: 640, height: 480 }, from, to);
  layers.show(picture, ++shown, warp);
  return warp;
};
</script></body></html>"""
FROM = {"t": 0, "x": 0, "y": 0, "theta": 0, "pan": 0, "tilt": -0.2}
CASES = {
    "a 20 degree turn": {**FROM, "pan": 0.35},
    "0.3 m ahead, turning": {"t": 0.6, "x": 0.3, "y": 0.05, "theta": 0.35, "pan": 0, "tilt": -0.2},
    "0.3 m back, turning right": {**FROM, "x": -0.3, "theta": -0.3},
}
CONFIGURATIONS = {
    "disable_gpu": [],
    "swiftshader": ["--use-angle=swiftshader", "--enable-unsafe-swiftshader"],
}


@pytest.fixture(scope="module", params=sorted(CONFIGURATIONS))
def page(request: pytest.FixtureRequest) -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed")
    extra = CONFIGURATIONS[request.param]
    args = [a for a in CHROMIUM_ARGS if not (extra and a == "--disable-gpu")] + extra
    with chromium(args=args) as browser:
        page = browser.new_page(viewport={"width": W, "height": H}, steady_picture=False)

        def serve(route: Any) -> None:
            path = route.request.url.split("//", 1)[1].split("/", 1)[1]
            if path == "layers.html":
                route.fulfill(body=PAGE, content_type="text/html")
                return
            file = STATIC / path.removeprefix("static/")
            kind = {".js": "text/javascript", ".css": "text/css"}.get(file.suffix, "text/plain")
            route.fulfill(body=file.read_bytes(), content_type=kind)

        page.route("http://freelook.test/**", serve)
        page.goto("http://freelook.test/layers.html")
        page.wait_for_function("() => typeof window.show === 'function'")
        yield page


def _screen(page: Any) -> np.ndarray:
    """The page's pixels (rows, columns, RGB) as painted."""
    from io import BytesIO

    from PIL import Image

    shot = page.screenshot(clip={"x": 0, "y": 0, "width": W, "height": H})
    return np.asarray(Image.open(BytesIO(shot)).convert("RGB")).astype(int)


def _source(warp: dict[str, Any], x: float, y: float) -> tuple[float, float] | None:
    """The picture's point that the warp moves onto the page's pixel (x, y), or None: by the
    heading's homography above the horizon's row on the warped picture, the ground's below it,
    and only a point in front of the camera on the side of the horizon that homography moves."""
    sky = y <= warp["horizonTo"]
    h = np.array(warp["rotation" if sky else "ground"], dtype=float).reshape(3, 3)
    u, v, w = np.linalg.solve(h, [x, y, 1.0])
    if w <= 0:  # a point's homogeneous sums are the warp's up to a positive scale
        return None
    u, v = u / w, v / w
    if (v > warp["horizon"]) == sky:
        return None
    return float(u), float(v)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_compositor_draws_the_picture_where_the_warp_moves_it(page: Any, case: str) -> None:
    warp = page.evaluate("([from, to]) => window.show(from, to)", [FROM, CASES[case]])
    # two animation frames: the layers' new pixels and transforms committed to the compositor
    # (the screenshot then takes a frame of its own)
    page.evaluate(
        "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"
    )
    screen = _screen(page)
    moved = black = 0
    for y in range(3, H - 3, 9):
        for x in range(3, W - 3, 9):
            at = _source(warp, x, y)
            near_edge = abs(y - warp["horizonTo"]) < 3
            if at is not None:
                u, v = at
                edges = (u, W - 1 - u, v, H - 1 - v, v - warp["horizon"])
                near_edge |= min(abs(d) for d in edges) < 3
            if near_edge:
                continue
            got = screen[y, x]
            if at is None or not (0 <= at[0] <= W - 1 and 0 <= at[1] <= H - 1):
                assert got.max() <= 8, f"{case}: ({x}, {y}) shows {got}, where nothing maps"
                black += 1
                continue
            want = np.array([at[0] * 255 / (W - 1), at[1] * 255 / (H - 1), 128])
            assert np.abs(got - want).max() <= 6, f"{case}: ({x}, {y}) shows {got}, wants {want}"
            moved += 1
    assert moved > 500, (case, moved)
    if case != "0.3 m ahead, turning":  # the others show a side the camera did not see
        assert black > 50, (case, black)

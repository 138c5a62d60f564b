"""Every camera of a robot as VP9 in the pages: real ``freelook sim --robot taros --video vp9``
(its driving camera, its arm's stereo pair and its thermal camera each an inter-frame stream),
real Chromium. The operator station's page decodes each screen's stream with WebCodecs (the
stereo pair as one side-by-side picture cut into both eyes); without VideoDecoder it gets the
station's JPEG. The cockpit's Arm pane decodes the arm camera's stream the same way."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from conftest import Sim, start_sim  # type: ignore[import-not-found]
from waiting import wait_until

pytestmark = pytest.mark.browser

NO_DECODER = "delete window.VideoDecoder; delete window.EncodedVideoChunk;"
#: each inter-frame stream's decoder on the station page: stream → [decoded, errors, config]
DECODERS = """Array.from(station.video.entries()).map(
  ([stream, d]) => [stream, d.decoded, d.errors, d.config])"""


@pytest.fixture(scope="module")
def taros_vp9(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    where = tmp_path_factory.mktemp("station-vp9")
    running = start_sim(where, "--robot", "taros", "--world", "eod", "--video", "vp9")
    yield running
    running.stop()
    if running.process.stdout is not None:
        running.process.stdout.close()


def _station(browser: Any, sim: Sim, init_script: str | None = None) -> tuple[Any, list[str]]:
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    if init_script:
        page.add_init_script(init_script)
    page.goto(sim.url.replace("/?token=", "/station?token="))
    wait_until(
        lambda: page.evaluate(
            "station.mainFrames > 10 && station.drivingFrames > 10 && station.thermalFrames > 2"
        ),
        60,
        "the station's three screens painted",
        every=0.1,
        show=lambda: page.evaluate(
            "[station.mainFrames, station.drivingFrames, station.thermalFrames, station.video.size]"
        ),
    )
    return page, errors


def test_the_station_page_decodes_each_screen_with_webcodecs(browser: Any, taros_vp9: Sim) -> None:
    page, errors = _station(browser, taros_vp9)
    main = page.evaluate("station.mainCamera.stream")
    thermal = page.evaluate("station.thermalCamera.stream")
    decoders = {row[0]: tuple(row[1:]) for row in page.evaluate(DECODERS)}
    assert set(decoders) == {0, main, thermal}
    for stream, (decoded, failed, config) in decoders.items():
        assert decoded > 2, (stream, decoded)
        assert failed == 0, stream
        assert config.startswith("vp09"), config
    assert decoders[main][2].endswith("640x240"), "the pair as one side-by-side picture"
    # both eyes cut from one decoded picture, as the JPEG pair is
    assert page.evaluate("station.layoutErrors") == 0
    assert page.evaluate("station.mainWidth") == 640
    eyes = page.evaluate("station.eyes")
    assert eyes["left"]["frameId"] == eyes["right"]["frameId"]
    assert page.evaluate("station.eyeMismatches") == 0
    assert errors == []
    page.close()


def test_a_station_page_without_a_decoder_gets_jpeg(browser: Any, taros_vp9: Sim) -> None:
    page, errors = _station(browser, taros_vp9, init_script=NO_DECODER)
    assert page.evaluate("typeof window.VideoDecoder") == "undefined"
    assert page.evaluate("station.video.size") == 0  # every frame it painted was a JPEG
    assert page.evaluate("station.layoutErrors") == 0
    assert errors == []
    page.close()


def test_the_cockpits_arm_pane_decodes_the_arm_camera(browser: Any, taros_vp9: Sim) -> None:
    from test_cockpit import open_cockpit  # type: ignore[import-not-found]

    page, errors = open_cockpit(browser, taros_vp9)
    wait_until(
        lambda: page.evaluate("window.freelook.armCamera.view.framesPainted") > 5,
        60,
        "the arm camera's VP9 painted in the Arm pane",
        every=0.1,
        show=lambda: page.evaluate("window.freelook.armCamera.view.video"),
    )
    view = page.evaluate(
        "(() => { const v = window.freelook.armCamera.view;"
        " return {decoded: v.video.decoded, errors: v.video.errors, layout: v.lastLayout,"
        " width: v.frameWidth}; })()"
    )
    assert view["decoded"] > 5
    assert view["errors"] == 0
    assert view["width"] == 640  # the pair, both eyes
    wait_until(  # the driving camera too
        lambda: page.evaluate("window.freelook.framesPainted") > 5,
        30,
        "the driving camera's VP9 painted beside the Arm pane",
        every=0.1,
    )
    assert errors == []
    page.close()

"""Inter-frame video in the cockpit: real ``freelook sim --video …``, real Chromium decoding
with WebCodecs' VideoDecoder into the camera canvas; without VideoDecoder the page says so and
paints the station's JPEG instead."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from waiting import wait_until

pytestmark = pytest.mark.browser

NO_DECODER = "delete window.VideoDecoder; delete window.EncodedVideoChunk;"


def _sim(tmp_path_factory: pytest.TempPathFactory, codec: str) -> Iterator[Any]:
    from conftest import start_sim  # type: ignore[import-not-found]

    running = start_sim(tmp_path_factory.mktemp(codec), "--video", codec)
    yield running
    running.stop()
    if running.process.stdout is not None:
        running.process.stdout.close()


@pytest.fixture(scope="module", params=["vp8", "vp9"])
def video_sim(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    yield from _sim(tmp_path_factory, request.param)


def _canvas_spread(page: Any) -> float:
    """The spread of the camera canvas's grey levels: a painted scene, not a blank canvas."""
    return float(
        page.evaluate(
            """() => {
              const c = document.getElementById("camera");
              const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
              let sum = 0, sq = 0, n = 0;
              for (let i = 0; i < d.length; i += 4 * 97) {
                const g = d[i + 1]; sum += g; sq += g * g; n++;
              }
              const mean = sum / n; return Math.sqrt(sq / n - mean * mean);
            }"""
        )
    )


def test_the_cockpit_decodes_and_paints_inter_frame_video(browser: Any, video_sim: Any) -> None:
    from test_cockpit import open_cockpit  # type: ignore[import-not-found]

    page, errors = open_cockpit(browser, video_sim)
    assert page.evaluate("typeof window.VideoDecoder") == "function"
    wait_until(
        lambda: page.evaluate("window.freelook.framesPainted") > 15,
        30,
        "15 decoded frames painted",
        show=lambda: page.evaluate(
            "({decoded: window.freelook.video.decoded, errors: window.freelook.video.errors,"
            " gaps: window.freelook.video.gate.gaps})"
        ),
    )
    video = page.evaluate(
        "({decoded: window.freelook.video.decoded, errors: window.freelook.video.errors,"
        " config: window.freelook.video.config})"
    )
    assert video["decoded"] > 15
    assert video["errors"] == 0
    assert video["config"].endswith("640x480")
    assert page.evaluate("document.getElementById('camera').width") == 640
    assert _canvas_spread(page) > 5.0
    assert errors == []
    page.close()


def test_without_a_decoder_the_page_gets_jpeg(browser: Any, video_sim: Any) -> None:
    from test_cockpit import open_cockpit  # type: ignore[import-not-found]

    page, errors = open_cockpit(browser, video_sim, init_script=NO_DECODER)
    assert page.evaluate("typeof window.VideoDecoder") == "undefined"
    wait_until(
        lambda: page.evaluate("window.freelook.framesPainted") > 10,
        30,
        "10 JPEG frames painted without a decoder",
    )
    assert page.evaluate("window.freelook.video.decoded") == 0  # every frame was a JPEG
    assert _canvas_spread(page) > 5.0
    assert errors == []
    page.close()

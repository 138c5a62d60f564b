"""A page's video messages, hostile ones included: a keyframe request names a camera stream
(0…7, an integer), the decoder flag is a boolean; anything else is refused, nothing raises."""

from __future__ import annotations

import math

import pytest

from freelook.config import load_robot
from freelook.operator import StickScales, parse_browser_message
from freelook.operator._browser import KeyframeRequest, VideoSupport

SCALES = StickScales.of(load_robot("pioneer3dx"))


@pytest.mark.parametrize("stream", [0, 3, 7])
def test_a_keyframe_request_names_a_stream(stream: int) -> None:
    assert parse_browser_message({"type": "keyframe", "stream": stream}, SCALES) == KeyframeRequest(
        stream
    )


@pytest.mark.parametrize(
    "stream", [-1, 8, 2**40, 1.0, math.nan, True, "0", None, [0], {"stream": 0}]
)
def test_a_keyframe_request_for_no_stream_is_refused(stream: object) -> None:
    assert parse_browser_message({"type": "keyframe", "stream": stream}, SCALES) is None
    assert parse_browser_message({"type": "keyframe"}, SCALES) is None


@pytest.mark.parametrize("decoder", [True, False])
def test_the_page_says_whether_it_decodes(decoder: bool) -> None:
    assert parse_browser_message({"type": "video", "decoder": decoder}, SCALES) == VideoSupport(
        decoder
    )


@pytest.mark.parametrize("decoder", [0, 1, "false", None, [], 0.0])
def test_a_decoder_flag_that_is_no_boolean_is_refused(decoder: object) -> None:
    assert parse_browser_message({"type": "video", "decoder": decoder}, SCALES) is None

"""What the station refuses of a robot's frames before anything decodes or forwards them, each
counted by its reason (``OperatorStation.video_refusals``): a stream the description lacks, a
header or VP9 bitstream size of 0 or beyond the stream's frame limit (a stereo pair's is both
eyes wide), keyframes beyond 5 a second; and the JPEG fallback's decoder refusing a picture
beyond the limit before it allocates it."""

from __future__ import annotations

import pytest
from test_hostile_video import claiming, vp9_keyframes  # type: ignore[import-not-found]

from freelook.config import load_robot
from freelook.link import VideoCodec, VideoFrame
from freelook.operator import OperatorStation
from freelook.operator._video import MAX_KEYFRAMES, JpegFallback, bitstream_sizes, stream_limits
from freelook.web import BrowserSlot


@pytest.fixture(scope="module")
def keyframe() -> bytes:
    return vp9_keyframes(1)[0]


def vp9(frame_id: int, width: int, height: int, data: bytes, stream: int = 0) -> VideoFrame:
    return VideoFrame(frame_id, 1.0, width, height, data, stream, 0, VideoCodec.VP9, True)


def test_sizes_of_0_or_beyond_the_limit_and_unknown_streams_are_refused(keyframe: bytes) -> None:
    config = load_robot("taros")  # a 640 × 480 driving camera, a stereo pair 2 × 320 wide
    station = OperatorStation(config, None, ("127.0.0.1", 9), key=bytes(32))
    slot = BrowserSlot()
    station.attach(slot)
    pair = next(c for c in config.cameras if c.stereo)
    assert stream_limits(config)[pair.stream] == (4 * pair.width, 2 * pair.height)
    frames = [
        (vp9(1, 0, 0, keyframe), "size"),
        (vp9(2, 1281, 480, keyframe), "size"),
        (vp9(3, 640, 961, keyframe), "size"),
        (vp9(4, 16384, 8192, keyframe), "size"),
        (vp9(5, 640, 480, claiming(keyframe, 16384, 8192)), "size"),  # the bitstream lies
        (vp9(6, 640, 480, keyframe, stream=6), "stream"),
        (VideoFrame(7, 1.0, 0, 0, b"\xff\xd8jpeg"), "size"),
    ]
    for frame, reason in frames:
        before = dict(station.video_refusals)
        station._on_frame(frame, 10.0)
        assert station.video_refusals[reason] == before[reason] + 1, (frame.width, reason)
    assert slot._frames == {}, "nothing refused reached the page"
    station._on_frame(vp9(8, 1280, 960, keyframe), 10.0)  # twice the camera's size: taken
    station._on_frame(vp9(9, 2 * pair.frame_width, pair.height, keyframe, pair.stream), 10.0)
    assert set(slot._frames) == {0, pair.stream}
    assert station.refused_video_frames == len(frames)
    assert station.unknown_stream_frames == 1


def test_keyframes_beyond_five_a_second_are_dropped(keyframe: bytes) -> None:
    station = OperatorStation(load_robot("pioneer3dx"), None, ("127.0.0.1", 9), key=bytes(32))
    for i in range(300):  # 300 a second for a second
        station._on_frame(vp9(i + 1, 64, 64, keyframe), 10.0 + i / 300)
    assert station.video_refusals["keyframe_rate"] == 300 - MAX_KEYFRAMES
    station._on_frame(vp9(400, 64, 64, keyframe), 11.01)  # a second on: taken again
    assert station.video_refusals["keyframe_rate"] == 300 - MAX_KEYFRAMES


def test_the_bitstream_size_of_a_vp9_keyframe_is_read(keyframe: bytes) -> None:
    assert bitstream_sizes(VideoCodec.VP9, keyframe) == [(64, 64)]
    assert bitstream_sizes(VideoCodec.VP9, claiming(keyframe, 16384, 8192)) == [(16384, 8192)]
    assert bitstream_sizes(VideoCodec.VP9, b"") == []
    assert bitstream_sizes(VideoCodec.VP9, keyframe[:3]) == []  # too short to say


def test_the_fallback_refuses_a_picture_beyond_the_limit_before_it_is_made(
    keyframe: bytes,
) -> None:
    fallback = JpegFallback({0: (640, 480)})
    batch = fallback.offer(vp9(1, 640, 480, claiming(keyframe, 16384, 8192)))
    assert batch is not None
    result = fallback.decode(batch)  # FFmpeg refuses 16384 × 8192 pixels before it allocates
    assert result.failed
    assert result.payload is None
    assert fallback.finish(result) is None
    assert fallback.wants_keyframe(0)
    # a picture within the area but beyond a side (64 × 64 against 4096 × 1): discarded
    narrow = JpegFallback({0: (4096, 1)})
    batch = narrow.offer(vp9(1, 64, 1, keyframe))
    assert batch is not None
    result = narrow.decode(batch)
    assert result.oversized
    assert result.payload is None
    narrow.finish(result)
    assert narrow.oversized == 1
    # and an honest keyframe decodes to a JPEG page frame
    honest = JpegFallback({0: (640, 480)})
    batch = honest.offer(vp9(1, 64, 64, keyframe))
    assert batch is not None
    assert honest.decode(batch).payload is not None


def test_jpeg_frames_at_the_cameras_rate_all_go_on() -> None:
    # a JPEG frame is a picture of its own, no keyframe a decoder restarts at: the simulator's
    # 30 frames a second all reach the page (the keyframe bound had cut a third of them,
    # leaving the picture 0.33-0.4 s old once a second, and over 1 s old through a delay)
    station = OperatorStation(load_robot("pioneer3dx"), None, ("127.0.0.1", 9), key=bytes(32))
    for i in range(60):  # 30 a second for two seconds
        station._on_frame(VideoFrame(i + 1, 1.0, 64, 64, b"\xff\xd8jpeg"), 10.0 + i / 30)
    assert station.video_refusals["keyframe_rate"] == 0
    assert station.core.video_rate.rate(12.0) == pytest.approx(30.0, abs=1.0)

"""The sizes a frame's own bytes set, read before anything decodes them: a JPEG's start of
frame and an H.264 sequence parameter set, from real encoders (libjpeg-turbo, libx264 through
PyAV), and patched to lie; and no bytes at all make a reader fail."""

from __future__ import annotations

import fractions
import struct

import av
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.config import load_robot
from freelook.link import VideoCodec, VideoFrame, encode_jpeg
from freelook.operator import OperatorStation
from freelook.operator._bitstream import bitstream_sizes, h264_sizes, jpeg_size
from freelook.web import BrowserSlot


def jpeg(width: int, height: int) -> bytes:
    return encode_jpeg(np.zeros((height, width, 3), np.uint8))


def claiming_jpeg(data: bytes, width: int, height: int) -> bytes:
    """``data`` with its start-of-frame segment saying ``width`` × ``height``."""
    at = data.index(b"\xff\xc0") + 5  # marker, length, precision
    return data[:at] + struct.pack(">HH", height, width) + data[at + 4 :]


def h264(width: int, height: int) -> bytes:
    """An H.264 keyframe (Annex B, with its sequence parameter set) from libx264."""
    codec = av.CodecContext.create("libx264", "w")
    codec.width, codec.height, codec.pix_fmt = width, height, "yuv420p"
    codec.time_base = fractions.Fraction(1, 30)
    codec.open()
    picture = av.VideoFrame.from_ndarray(np.zeros((height, width, 3), np.uint8), format="rgb24")
    packets = codec.encode(picture.reformat(format="yuv420p")) + codec.encode(None)
    return b"".join(bytes(p) for p in packets)


def test_a_jpegs_start_of_frame_is_read() -> None:
    picture = jpeg(64, 48)
    assert jpeg_size(picture) == (64, 48)
    assert jpeg_size(claiming_jpeg(picture, 20000, 20000)) == (20000, 20000)
    assert jpeg_size(picture[:20]) is None  # cut before its frame header
    assert jpeg_size(b"not a jpeg") is None
    assert bitstream_sizes(VideoCodec.JPEG, picture) == [(64, 48)]


def test_an_h264_sequence_parameter_set_is_read() -> None:
    assert h264_sizes(h264(176, 144)) == [(176, 144)]
    assert bitstream_sizes(VideoCodec.H264, h264(640, 480)) == [(640, 480)]
    assert h264_sizes(b"\x00\x00\x01\x67") == []  # an SPS cut short: the decoder's to refuse


def test_the_station_refuses_a_jpeg_or_h264_picture_beyond_its_limit_whatever_the_header() -> None:
    config = load_robot("pioneer3dx")
    width = config.camera.frame_limit[0]
    station = OperatorStation(config, None, ("127.0.0.1", 9), key=bytes(32))
    slot = BrowserSlot()
    station.attach(slot)
    lying = [
        VideoFrame(1, 1.0, 640, 480, claiming_jpeg(jpeg(64, 48), 20000, 20000)),
        VideoFrame(2, 1.0, 640, 480, jpeg(width + 16, 48)),
        VideoFrame(3, 1.0, 640, 480, h264(width + 16, 64), 0, 0, VideoCodec.H264, True),
    ]
    for frame in lying:
        before = station.video_refusals["size"]
        station._on_frame(frame, 10.0)
        assert station.video_refusals["size"] == before + 1, frame.frame_id
    assert slot._frames == {}, "nothing refused reached the page"
    station._on_frame(VideoFrame(4, 1.0, 64, 48, jpeg(64, 48)), 10.0)
    assert set(slot._frames) == {0}


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(list(VideoCodec)), st.binary(max_size=300))
def test_no_bytes_make_a_reader_fail(codec: VideoCodec, data: bytes) -> None:
    for size in bitstream_sizes(codec, data):
        assert all(isinstance(side, int) and side >= 0 for side in size)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64))
def test_an_sps_of_any_bytes_reads_or_is_skipped(body: bytes) -> None:
    for width, height in h264_sizes(b"\x00\x00\x01\x67" + body):
        assert width % 16 == 0
        assert height % 16 == 0


@pytest.mark.parametrize("cut", [1, 3, 5])
def test_a_cut_sps_is_skipped(cut: int) -> None:
    data = h264(176, 144)
    start = data.index(b"\x00\x00\x01\x67") + 4
    assert h264_sizes(data[: start + cut]) == []

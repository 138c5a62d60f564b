"""The robot's video encoder: VP8, VP9 and H.264 chunks that FFmpeg's decoders turn back into
the picture, keyframes on request and after a change of setting, JPEG as it always was."""

from __future__ import annotations

import av
import numpy as np
import numpy.typing as npt
import pytest

from freelook.errors import ConfigError
from freelook.link import VideoCodec, decode_jpeg, encode_jpeg
from freelook.video import Rung, VideoEncoder, VideoSetting, parse_codec

DECODERS = {VideoCodec.VP8: "vp8", VideoCodec.VP9: "vp9", VideoCodec.H264: "h264"}


def scene(i: int, width: int = 320, height: int = 240) -> npt.NDArray[np.uint8]:
    """A smooth picture with a square that moves (seeded texture, no randomness per run)."""
    y, x = np.mgrid[0:height, 0:width]
    image = np.zeros((height, width, 3), np.uint8)
    image[..., 0] = x * 255 // width
    image[..., 1] = y * 255 // height
    image[..., 2] = 90
    left = (10 + 4 * i) % (width - 40)
    image[60:100, left : left + 40] = (250, 240, 30)
    return image


def psnr(a: npt.NDArray[np.uint8], b: npt.NDArray[np.uint8]) -> float:
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return 10 * np.log10(255**2 / max(mse, 1e-9))


def decode(codec: VideoCodec, chunks: list[bytes]) -> list[npt.NDArray[np.uint8]]:
    context = av.CodecContext.create(DECODERS[codec], "r")
    out = []
    for chunk in chunks:
        for frame in context.decode(av.Packet(chunk)):
            out.append(frame.to_ndarray(format="rgb24"))
    return out


SETTING = VideoSetting(400_000, Rung(320, 240, 15.0))


@pytest.mark.parametrize("codec", [VideoCodec.VP8, VideoCodec.VP9, VideoCodec.H264])
def test_chunks_decode_back_to_the_picture(codec: VideoCodec) -> None:
    encoder = VideoEncoder(codec, SETTING)
    chunks = [encoder.encode(scene(i)) for i in range(20)]
    assert all(c is not None for c in chunks)
    assert chunks[0] is not None
    assert chunks[0].keyframe
    assert not any(c.keyframe for c in chunks[1:] if c is not None)  # no keyframe unasked
    images = decode(codec, [c.data for c in chunks if c is not None])
    assert len(images) == 20
    assert psnr(images[-1], scene(19)) > 28
    # the frames hold the bitrate (400 kbit/s at 15 fps: 3333 bytes a frame), and each is a
    # fraction of the same picture as a JPEG
    deltas = [len(c.data) for c in chunks[5:] if c is not None]
    assert np.mean(deltas) < 1.5 * 400_000 / 8 / 15
    assert np.mean(deltas) < 0.5 * len(encode_jpeg(scene(10), 80))


@pytest.mark.parametrize("codec", [VideoCodec.VP8, VideoCodec.H264])
def test_a_keyframe_on_request_decodes_alone(codec: VideoCodec) -> None:
    encoder = VideoEncoder(codec, SETTING)
    chunks = [encoder.encode(scene(i), keyframe=(i == 7)) for i in range(10)]
    keys = [i for i, c in enumerate(chunks) if c is not None and c.keyframe]
    assert keys == [0, 7]
    # a decoder that joins at the requested keyframe shows the picture
    images = decode(codec, [c.data for c in chunks[7:] if c is not None])
    assert psnr(images[-1], scene(9)) > 28


def test_a_new_setting_reopens_the_encoder_at_its_size() -> None:
    encoder = VideoEncoder(VideoCodec.VP8, SETTING)
    for i in range(3):
        encoder.encode(scene(i))
    encoder.configure(VideoSetting(100_000, Rung(160, 120, 10.0)))
    chunk = encoder.encode(scene(3))
    assert chunk is not None
    assert chunk.keyframe
    assert (chunk.width, chunk.height) == (160, 120)
    (image,) = decode(VideoCodec.VP8, [chunk.data])
    assert image.shape == (120, 160, 3)
    assert encoder.reopened == 1
    encoder.configure(VideoSetting(100_000, Rung(160, 120, 10.0)))  # the same: kept open
    assert encoder.reopened == 1


def test_a_lower_bitrate_makes_smaller_frames() -> None:
    """A detailed picture panning (a seeded texture): the encoder spends what it is given."""
    texture = np.random.default_rng(44).integers(0, 256, (240, 480, 3), dtype=np.uint8)
    sizes = []
    for bitrate in (600_000, 100_000):
        encoder = VideoEncoder(VideoCodec.VP8, VideoSetting(bitrate, Rung(320, 240, 15.0)))
        chunks = [encoder.encode(texture[:, 3 * i : 3 * i + 320]) for i in range(30)]
        sizes.append(sum(len(c.data) for c in chunks[10:] if c is not None))
    assert sizes[1] < 0.5 * sizes[0]


def test_jpeg_stays_jpeg_at_the_cameras_size() -> None:
    encoder = VideoEncoder(VideoCodec.JPEG, SETTING, jpeg_quality=80)
    image = scene(0, 200, 100)
    chunk = encoder.encode(image)
    assert chunk is not None
    assert chunk.keyframe
    assert (chunk.width, chunk.height) == (200, 100)
    assert psnr(decode_jpeg(chunk.data), image) > 30


@pytest.mark.parametrize("name", ["", "mpeg2", "vp8 ", "jpeg;rm"])
def test_an_unknown_codec_name_is_a_clear_error(name: str) -> None:
    with pytest.raises(ConfigError, match="--video"):
        parse_codec(name)


def test_codec_names() -> None:
    assert parse_codec("VP8") is VideoCodec.VP8
    assert parse_codec("h264") is VideoCodec.H264
    assert parse_codec("jpeg") is VideoCodec.JPEG

"""Camera frames to encoded chunks: VP8, VP9 or H.264 through PyAV (FFmpeg's libvpx and
libx264) with realtime settings, or JPEG.

Realtime means: no look-ahead and no B-frames (each frame leaves as soon as it is encoded),
libvpx's realtime deadline and error-resilient mode, constant bitrate with a one-second buffer,
a keyframe on request and every ``keyframe_interval`` seconds. A change of bitrate or size
reopens the encoder (libvpx takes neither while open), so its next frame is a keyframe.
"""

from __future__ import annotations

import fractions
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from freelook.errors import ConfigError
from freelook.link import VideoCodec, encode_jpeg
from freelook.video._rate import VideoSetting

__all__ = ["CODEC_NAMES", "EncodedChunk", "VideoEncoder", "parse_codec", "parse_rate"]

#: the ``--video`` names
CODEC_NAMES = {
    "jpeg": VideoCodec.JPEG,
    "vp8": VideoCodec.VP8,
    "vp9": VideoCodec.VP9,
    "h264": VideoCodec.H264,
}

_FFMPEG = {VideoCodec.VP8: "libvpx", VideoCodec.VP9: "libvpx-vp9", VideoCodec.H264: "libx264"}
_VPX = {
    "deadline": "realtime",
    "lag-in-frames": "0",
    "error-resilient": "1",
    "auto-alt-ref": "0",
    "max-intra-rate": "200",  # a keyframe at most two average frames' bytes
}
_OPTIONS: dict[VideoCodec, dict[str, str]] = {
    VideoCodec.VP8: {**_VPX, "cpu-used": "12", "static-thresh": "0"},
    VideoCodec.VP9: {**_VPX, "cpu-used": "8", "row-mt": "0"},
    VideoCodec.H264: {
        "preset": "ultrafast",
        "tune": "zerolatency",
        "bf": "0",
        "profile": "baseline",
    },
}


def parse_codec(name: str) -> VideoCodec:
    """The codec a ``--video`` name stands for; a clear error for anything else."""
    codec = CODEC_NAMES.get(name.lower())
    if codec is None:
        raise ConfigError(f"--video {name!r}: expected one of {', '.join(CODEC_NAMES)}")
    return codec


def parse_rate(text: str) -> float:
    """Bit/s from ``250k``, ``2M``, ``115200``: a clear error for anything else (at least
    9600 bit/s, at most 10 Gbit/s)."""
    scale = {"k": 1e3, "m": 1e6, "g": 1e9}.get(text[-1:].lower(), 1.0)
    digits = text[:-1] if scale != 1.0 else text
    try:
        rate = float(digits) * scale
    except ValueError:
        rate = math.nan
    if not 9600 <= rate <= 1e10:  # NaN fails too
        raise ConfigError(f"--link-rate {text!r}: expected bit/s such as 250k or 2M (≥ 9600)")
    return rate


@dataclass(frozen=True, slots=True)
class EncodedChunk:
    """One encoded frame: its bytes, whether it decodes alone, the size it was encoded at."""

    data: bytes
    keyframe: bool
    width: int
    height: int


class VideoEncoder:
    """Encodes RGB frames at a :class:`VideoSetting` (bitrate, size, rate).

    Frames of another size are scaled to the setting's. JPEG ignores the bitrate (``quality``
    sets its size) and encodes every frame at the camera's own size, as freelook always did.
    """

    def __init__(
        self,
        codec: VideoCodec,
        setting: VideoSetting,
        *,
        jpeg_quality: int = 80,
        keyframe_interval: float = 4.0,
        threads: int = 1,
    ) -> None:
        self.codec = codec
        self.jpeg_quality = jpeg_quality
        self.keyframe_interval = keyframe_interval
        self.threads = threads
        self.setting = setting
        self._context: Any = None
        self._pts = 0
        self._since_key = 0
        self.keyframes = 0
        self.reopened = 0
        if codec != VideoCodec.JPEG:
            self._open()

    @property
    def inter(self) -> bool:
        """Whether frames depend on earlier ones (anything but JPEG)."""
        return self.codec != VideoCodec.JPEG

    def _open(self) -> None:
        import av

        rung = self.setting.rung
        context = av.CodecContext.create(_FFMPEG[VideoCodec(self.codec)], "w")
        assert isinstance(context, av.VideoCodecContext)
        context.width, context.height = rung.width, rung.height
        context.pix_fmt = "yuv420p"
        rate = fractions.Fraction(round(rung.fps * 1000), 1000)
        context.time_base = 1 / rate
        context.framerate = rate
        bitrate = self.setting.bitrate
        context.bit_rate = bitrate
        context.gop_size = max(1, round(self.keyframe_interval * rung.fps))
        context.max_b_frames = 0
        context.thread_count = self.threads
        # constant bitrate over a one-second buffer
        rate_control = {"maxrate": str(bitrate), "minrate": str(bitrate), "bufsize": str(bitrate)}
        context.options = {**_OPTIONS[VideoCodec(self.codec)], **rate_control}
        context.open()
        self._context = context
        self._pts = 0

    def configure(self, setting: VideoSetting) -> None:
        """Run at ``setting`` from the next frame (reopening the encoder if it changed)."""
        if setting == self.setting:
            return
        self.setting = setting
        if self.inter:
            self._open()
            self.reopened += 1

    def encode(self, image: npt.NDArray[np.uint8], keyframe: bool = False) -> EncodedChunk | None:
        """``image`` (H × W × 3 RGB) encoded; ``keyframe`` forces one. None when the encoder
        held the frame back (it does not, with these settings, but the API allows it)."""
        if not self.inter:
            height, width = image.shape[:2]
            self.keyframes += 1
            return EncodedChunk(encode_jpeg(image, self.jpeg_quality), True, width, height)
        import av

        rung = self.setting.rung
        frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(image), format="rgb24")
        frame = frame.reformat(width=rung.width, height=rung.height, format="yuv420p")
        frame.pts = self._pts
        self._pts += 1
        if keyframe:
            frame.pict_type = av.video.frame.PictureType.I
        packets = self._context.encode(frame)
        if not packets:
            return None
        data = b"".join(bytes(p) for p in packets)
        key = any(p.is_keyframe for p in packets)
        self.keyframes += int(key)
        return EncodedChunk(data, key, rung.width, rung.height)

    def close(self) -> None:
        self._context = None


def av_available() -> bool:
    """Whether PyAV imports here."""
    try:
        import av  # noqa: F401
    except ImportError:
        return False
    return True

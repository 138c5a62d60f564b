"""Video for a radio: inter-frame encoding (VP8, VP9, H.264 through PyAV) with a bitrate set
from the link's budget and the operator's reported loss, the operator's keyframe gate and
feedback, and camera sources (a clip, a USB camera, an IP camera) read with PyAV.

Sans-I/O where it decides (:class:`RateController`, :class:`VideoSender`, :class:`FrameGate`,
:class:`FeedbackReporter`); PyAV only where pixels are encoded or read.
"""

from freelook.video._encoder import (
    CODEC_NAMES,
    EncodedChunk,
    VideoEncoder,
    av_available,
    parse_codec,
    parse_rate,
)
from freelook.video._gate import FeedbackReporter, FrameGate
from freelook.video._rate import RATE_LOG, RateController, Rung, VideoSetting, ladder
from freelook.video._sender import ByteBudget, VideoSender
from freelook.video._source import AvCamera, parse_camera_url, write_clip

__all__ = [
    "CODEC_NAMES",
    "RATE_LOG",
    "AvCamera",
    "ByteBudget",
    "EncodedChunk",
    "FeedbackReporter",
    "FrameGate",
    "RateController",
    "Rung",
    "VideoEncoder",
    "VideoSender",
    "VideoSetting",
    "av_available",
    "ladder",
    "parse_camera_url",
    "parse_codec",
    "parse_rate",
    "write_clip",
]

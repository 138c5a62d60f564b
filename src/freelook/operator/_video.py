"""The station's inter-frame video: which frames go on to the pages and the recording (a
delta after a lost frame cannot be decoded: it is held back until the next keyframe), and the
:class:`VideoFeedback` the robot sets its bitrate and keyframes by."""

from __future__ import annotations

from typing import Any

import numpy as np

from freelook.link import LinkStatistics, VideoCodec, VideoFeedback, VideoFrame, encode_jpeg
from freelook.video import FeedbackReporter, FrameGate
from freelook.web import encode_frame, encode_video_frame

__all__ = ["JpegFallback", "StationVideo"]

_DECODERS = {VideoCodec.VP8: "vp8", VideoCodec.VP9: "vp9", VideoCodec.H264: "h264"}


class JpegFallback:
    """Inter-frame video as JPEG frames, for pages without a WebCodecs decoder (and the
    station page): every frame that passed the gate is decoded here (PyAV), the newest picture
    re-encoded. Decoding starts at a keyframe: one is asked for when a page first needs it."""

    def __init__(self, quality: int = 80) -> None:
        self.quality = quality
        self._decoders: dict[int, tuple[int, Any]] = {}  # stream → (codec, decoder)
        self._gate = FrameGate()
        self.decoded = 0
        self.errors = 0

    def page_frame(self, frame: VideoFrame) -> bytes | None:
        """``frame`` as a JPEG page frame (kinds 2 and 3), or None while waiting for a
        keyframe (the caller asks for one: :meth:`wants_keyframe`)."""
        import av

        if not self._gate.admit(frame):
            return None
        held = self._decoders.get(frame.stream)
        if held is None or held[0] != frame.codec:
            context = av.CodecContext.create(_DECODERS[VideoCodec(frame.codec)], "r")
            assert isinstance(context, av.VideoCodecContext)
            held = (frame.codec, context)
            self._decoders[frame.stream] = held
        try:
            pictures = held[1].decode(av.Packet(frame.data))
        except av.FFmpegError:
            self.errors += 1
            del self._decoders[frame.stream]
            self._gate.request_keyframe(frame.stream)
            self._gate.sync(frame.stream).synced = False
            return None
        if not pictures:
            return None
        self.decoded += 1
        image = np.asarray(pictures[-1].to_ndarray(format="rgb24"), np.uint8)
        jpeg = encode_jpeg(image, self.quality)
        return encode_frame(frame.stamp, frame.frame_id, jpeg, frame.stream, frame.layout)

    def wants_keyframe(self, stream: int) -> bool:
        return self._gate.wants_keyframe(stream)


class StationVideo:
    """The keyframe gate and the feedback of one station's link to one robot."""

    def __init__(self, period: float = 0.5, request_spacing: float = 0.2) -> None:
        self.gate = FrameGate()
        self.reporter = FeedbackReporter(self.gate, period, request_spacing)
        self.page_requests = 0

    def admit(self, frame: VideoFrame) -> bool:
        """Whether ``frame`` goes on (every JPEG frame; a delta only in an unbroken run)."""
        return self.gate.admit(frame)

    def page_lost(self, stream: int) -> None:
        """A page's decoder lost its place (a frame replaced before it was sent, a decode
        error): the robot is asked for a keyframe, at the reporter's bounded rate."""
        self.page_requests += 1
        self.gate.request_keyframe(stream)

    def feedback(self, now: float, stats: LinkStatistics) -> list[VideoFeedback]:
        """The reports due now (none before the first inter-frame stream was seen)."""
        return self.reporter.poll(now, stats.received, stats.lost)

    @staticmethod
    def page_frame(frame: VideoFrame) -> bytes:
        """``frame`` as the pages' WebCodecs decoders take it."""
        return encode_video_frame(
            frame.stamp,
            frame.frame_id,
            frame.data,
            stream=frame.stream,
            layout=frame.layout,
            codec=frame.codec,
            keyframe=frame.keyframe,
            width=frame.width,
            height=frame.height,
        )

    @staticmethod
    def inter(frame: VideoFrame) -> bool:
        return frame.codec != VideoCodec.JPEG

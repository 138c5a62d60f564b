"""Inter-frame video in a recording: Foxglove's ``CompressedVideo`` (its ROS 2 form,
``foxglove_msgs/msg/CompressedVideo``), one message per frame, keyframes carrying what a decoder
needs to start. Foxglove plays ``h264``, ``h265``, ``vp9`` and ``av1``; a ``vp8`` stream is
recorded the same way (other tools decode it) but Foxglove does not play it."""

from __future__ import annotations

import math

from freelook.record._streams import RosStreams

__all__ = ["VIDEO_FORMATS", "compressed_video", "video_topic"]

#: the ``format`` of each link codec (freelook.link.VideoCodec's values)
VIDEO_FORMATS = {1: "vp8", 2: "vp9", 3: "h264"}


def video_topic(name: str | None) -> str:
    """The driving camera's video topic (``name`` None), or a further camera's."""
    return "/camera/video" if name is None else f"/camera/{name}/video"


def compressed_video(
    streams: RosStreams, t: float, data: bytes, fmt: str, frame_id: str, topic: str
) -> None:
    """One encoded frame captured at ``t`` (s)."""
    if not math.isfinite(t):
        raise ValueError(f"video frame stamp {t!r} is not a time")
    sec = math.floor(t)
    nanosec = min(999_999_999, round((t - sec) * 1e9))
    message = {
        "timestamp": {"sec": sec, "nanosec": nanosec},
        "frame_id": frame_id,
        "data": bytes(data),
        "format": fmt,
    }
    streams.write(topic, "foxglove_msgs/CompressedVideo", message, t)

"""Inter-frame video frames (VP8, VP9, H.264) as binary WebSocket frames for the pages'
WebCodecs decoders (kind 4; JPEG frames keep kinds 2 and 3, see ``encode_frame``).

    0 kind 4 | 1 stream | 2 layout | 3 codec | 4 flags (bit 0: keyframe) | 5 f64 stamp
    13 u32 frame id | 17 u16 width | 19 u16 height | 21 the encoded chunk

The page's side is ``static/protocol.js`` (``VIDEO_HEADER``); tests/web/test_protocol_js.py
holds the two equal.
"""

from __future__ import annotations

import struct

__all__ = ["VIDEO_KIND", "encode_video_frame"]

VIDEO_KIND = 4
_VIDEO_HEADER = struct.Struct("<BBBBBdIHH")


def encode_video_frame(
    stamp: float,
    frame_id: int,
    data: bytes,
    *,
    stream: int,
    layout: int,
    codec: int,
    keyframe: bool,
    width: int,
    height: int,
) -> bytes:
    """An encoded chunk with what a decoder needs to place it: codec, keyframe, size, the
    frame id (the page finds lost frames by its gaps)."""
    head = _VIDEO_HEADER.pack(
        VIDEO_KIND,
        stream,
        layout,
        codec,
        1 if keyframe else 0,
        stamp,
        frame_id & 0xFFFFFFFF,
        width,
        height,
    )
    return head + data

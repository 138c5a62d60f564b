"""The picture sizes a video frame's own bytes set, read without decoding them (sans-I/O).

A robot's frame header says its size, and so does the bitstream inside: a VP9 or VP8
keyframe's header, an H.264 sequence parameter set, a JPEG's start-of-frame segment. A decoder
sizes its buffers by the bitstream, not by the link's header, so the station reads each before
anything decodes it (:class:`~freelook.operator._video.FrameScreen`) and refuses a picture
beyond what the robot's description allows. Each reader stops quietly at the end of the bytes:
a chunk too short to say is the decoder's to refuse.
"""

from __future__ import annotations

from collections.abc import Iterator

from freelook.link import VideoCodec

__all__ = ["bitstream_sizes", "h264_sizes", "jpeg_size"]

_VP8_START = b"\x9d\x01\x2a"


class _Bits:
    """Big-endian bits of a byte string (VP9's uncompressed header); IndexError past the end."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def f(self, n: int) -> int:
        value = 0
        for _ in range(n):
            byte = self.data[self.pos >> 3]
            value = (value << 1) | ((byte >> (7 - (self.pos & 7))) & 1)
            self.pos += 1
        return value


def _vp9_frames(data: bytes) -> Iterator[bytes]:
    """The frames of a VP9 chunk: a superframe's each, else the chunk itself."""
    last = data[-1] if data else 0
    if last & 0xE0 == 0xC0:
        count, size_bytes = (last & 7) + 1, ((last >> 3) & 3) + 1
        index = 2 + size_bytes * count
        if len(data) >= index and data[-index] == last:
            at, body = len(data) - index + 1, 0
            for _ in range(count):
                size = int.from_bytes(data[at : at + size_bytes], "little")
                at += size_bytes
                yield data[body : body + size]
                body += size
            return
    yield data


def _vp9_size(frame: bytes) -> tuple[int, int] | None:
    """The size one VP9 frame's uncompressed header gives explicitly; None when it takes a
    reference's (set by a frame already screened) or shows an earlier frame."""
    r = _Bits(frame)
    if r.f(2) != 2:  # the frame marker: no VP9 frame (its decoder refuses it)
        return None
    profile = r.f(1) | (r.f(1) << 1)
    if profile == 3:
        r.f(1)
    if r.f(1):  # show_existing_frame
        return None
    key, show, error_resilient = r.f(1) == 0, r.f(1), r.f(1)

    def color_config() -> None:
        if profile >= 2:
            r.f(1)
        if r.f(3) != 7:  # not CS_RGB: the colour range, and subsampling in profiles 1 and 3
            r.f(1)
            if profile in (1, 3):
                r.f(3)
        elif profile in (1, 3):
            r.f(1)

    def frame_size() -> tuple[int, int]:
        return r.f(16) + 1, r.f(16) + 1

    if key:
        r.f(24)  # the sync code
        color_config()
        return frame_size()
    intra_only = r.f(1) if not show else 0
    if not error_resilient:
        r.f(2)  # reset_frame_context
    if intra_only:
        r.f(24)
        if profile > 0:
            color_config()
        r.f(8)  # refresh_frame_flags
        return frame_size()
    r.f(8)
    r.f(12)  # three references, each an index and a sign bias
    for _ in range(3):
        if r.f(1):  # found_ref: the size of a reference
            return None
    return frame_size()


def bitstream_sizes(codec: int, data: bytes) -> list[tuple[int, int]]:
    """The picture sizes a chunk's bitstream sets (VP9: each frame that gives one, a
    superframe's too; VP8: a keyframe's; H.264: each sequence parameter set's; JPEG: its
    start of frame); none for a chunk too short to hold them (its decoder refuses those)."""
    sizes: list[tuple[int, int]] = []
    if codec == VideoCodec.JPEG:
        size = jpeg_size(data)
        return [] if size is None else [size]
    if codec == VideoCodec.H264:
        return h264_sizes(data)
    if codec == VideoCodec.VP9:
        for frame in _vp9_frames(data):
            try:
                size = _vp9_size(frame)
            except IndexError:
                continue
            if size is not None:
                sizes.append(size)
    elif codec == VideoCodec.VP8 and data[:1] and not data[0] & 1 and data[3:6] == _VP8_START:
        # a keyframe: its start code, then the sides as 14 bits (and 2 of scaling) each
        sides = data[6:10]
        if len(sides) == 4:
            sizes.append(
                (
                    int.from_bytes(sides[:2], "little") & 0x3FFF,
                    int.from_bytes(sides[2:], "little") & 0x3FFF,
                )
            )
    return sizes


#: JPEG start-of-frame markers (SOF0–SOF15 but DHT, JPG and DAC, which share the range)
_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_STANDALONE = frozenset(range(0xD0, 0xDA)) | {0x01}  # RSTn, SOI, EOI, TEM: no length


def jpeg_size(data: bytes) -> tuple[int, int] | None:
    """The (width, height) a JPEG's first start-of-frame segment gives; None before one (a
    picture without it does not decode). A height of 0 (set later by a DNL segment) reads as
    0, which the screen refuses."""
    if data[:2] != b"\xff\xd8":
        return None
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill bytes
            at += 1
            continue
        if marker in _STANDALONE:
            at += 2
            continue
        if marker == 0xDA:  # the scan starts: no frame header came first
            return None
        length = int.from_bytes(data[at + 2 : at + 4], "big")
        if marker in _SOF:
            segment = data[at + 4 : at + 2 + length]
            if length < 7 or len(segment) < 5:
                return None
            return int.from_bytes(segment[3:5], "big"), int.from_bytes(segment[1:3], "big")
        at += 2 + length
    return None


class _Golomb(_Bits):
    """H.264's Exp-Golomb codes over :class:`_Bits` (IndexError past the end)."""

    def ue(self) -> int:
        zeros = 0
        while self.f(1) == 0:
            zeros += 1
            if zeros > 31:
                raise IndexError("an Exp-Golomb code longer than 32 bits")
        return (1 << zeros) - 1 + self.f(zeros)

    def se(self) -> int:
        k = self.ue()
        return (k + 1) // 2 if k & 1 else -(k // 2)


#: profiles whose sequence parameter set carries chroma format, bit depths and scaling lists
_HIGH_PROFILES = frozenset({100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135})
_SPS = 7  # nal_unit_type


def _nal_units(data: bytes) -> Iterator[bytes]:
    """The NAL units of an Annex B byte stream (start codes 00 00 01 and 00 00 00 01)."""
    starts = []
    at = data.find(b"\x00\x00\x01")
    while at >= 0:
        starts.append(at + 3)
        at = data.find(b"\x00\x00\x01", at + 3)
    for i, start in enumerate(starts):
        end = starts[i + 1] - 3 if i + 1 < len(starts) else len(data)
        yield data[start:end].rstrip(b"\x00")


def _sps_size(rbsp: bytes) -> tuple[int, int]:
    """The coded (width, height) of a sequence parameter set (its payload, emulation bytes
    removed): macroblocks of 16, map units doubled for field coding; cropping only shrinks it."""
    r = _Golomb(rbsp)
    profile = r.f(8)
    r.f(16)  # constraint flags, level
    r.ue()  # seq_parameter_set_id
    if profile in _HIGH_PROFILES:
        if r.ue() == 3:  # chroma_format_idc 4:4:4
            r.f(1)
        r.ue()
        r.ue()  # bit depths
        r.f(1)  # qpprime_y_zero_transform_bypass
        if r.f(1):  # seq_scaling_matrix_present
            for i in range(12 if profile == 244 else 8):
                if r.f(1):
                    last = following = 8
                    for _ in range(16 if i < 6 else 64):
                        if following:
                            following = (last + r.se() + 256) % 256
                        last = following or last
    r.ue()  # log2_max_frame_num_minus4
    order = r.ue()
    if order == 0:
        r.ue()
    elif order == 1:
        r.f(1)
        r.se()
        r.se()
        for _ in range(min(r.ue(), 255)):
            r.se()
    r.ue()  # max_num_ref_frames
    r.f(1)  # gaps_in_frame_num_allowed
    width_mbs, height_units = r.ue() + 1, r.ue() + 1
    frame_mbs_only = r.f(1)
    return 16 * width_mbs, 16 * height_units * (2 - frame_mbs_only)


def h264_sizes(data: bytes) -> list[tuple[int, int]]:
    """The sizes the sequence parameter sets in an H.264 chunk (Annex B) give."""
    sizes = []
    for unit in _nal_units(data):
        if not unit or unit[0] & 0x1F != _SPS:
            continue
        rbsp = unit[1:].replace(b"\x00\x00\x03", b"\x00\x00")  # emulation prevention
        try:
            sizes.append(_sps_size(rbsp))
        except IndexError:
            continue
    return sizes

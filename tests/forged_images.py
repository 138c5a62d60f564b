"""Forged camera frames for the tests that attack a camera's input."""

from __future__ import annotations


def claim_size(jpeg: bytes, width: int, height: int) -> bytes:
    """``jpeg`` with its frame header (SOF) claiming ``width`` × ``height``: a forged frame
    whose few bytes would decode into gigabytes."""
    sof = next(jpeg.index(m) for m in (b"\xff\xc0", b"\xff\xc2") if m in jpeg)
    size = height.to_bytes(2, "big") + width.to_bytes(2, "big")
    return jpeg[: sof + 5] + size + jpeg[sof + 9 :]

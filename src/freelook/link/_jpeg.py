"""JPEG for camera frames on the link (libjpeg-turbo through simplejpeg)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import simplejpeg

__all__ = ["decode_jpeg", "encode_jpeg"]


def encode_jpeg(image: npt.NDArray[np.uint8], quality: int = 80) -> bytes:
    """JPEG bytes of an RGB frame (libjpeg-turbo through simplejpeg)."""
    data: bytes = simplejpeg.encode_jpeg(
        np.ascontiguousarray(image), quality=quality, colorspace="RGB"
    )
    return data


def decode_jpeg(data: bytes, limit: tuple[int, int] | None = None) -> npt.NDArray[np.uint8]:
    """An RGB frame from JPEG bytes; ValueError for bytes that are not a whole JPEG and, with
    ``limit`` (width, height), for a header claiming more (checked before anything is
    allocated: a forged header cannot make the decoder take gigabytes)."""
    if limit is not None:
        height, width, _, _ = simplejpeg.decode_jpeg_header(data)
        if not (0 < width <= limit[0] and 0 < height <= limit[1]):
            raise ValueError(f"a {width}×{height} JPEG; at most {limit[0]}×{limit[1]} is taken")
    image: npt.NDArray[np.uint8] = simplejpeg.decode_jpeg(data, colorspace="RGB")
    return image

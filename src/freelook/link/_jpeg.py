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


def decode_jpeg(data: bytes) -> npt.NDArray[np.uint8]:
    """An RGB frame from JPEG bytes."""
    image: npt.NDArray[np.uint8] = simplejpeg.decode_jpeg(data, colorspace="RGB")
    return image

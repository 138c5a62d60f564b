"""Stereo on a virtual screen (TAROS 2018): Horizontal Image Translation of the stereo pair,
from the headset's view parameters or from the images themselves. Pure, no I/O; the virtual
station page (``/station``) computes the same in the browser."""

from freelook.stereo._analysis import Disparities, analysed_shift, disparities
from freelook.stereo._hit import Hit, HitError, hit, hit_from_view

__all__ = [
    "Disparities",
    "Hit",
    "HitError",
    "analysed_shift",
    "disparities",
    "hit",
    "hit_from_view",
]

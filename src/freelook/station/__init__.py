"""The virtual operator station's geometry (TAROS): Horizontal Image Translation of the stereo
screen, from the headset's view parameters or from the images themselves. Pure, no I/O."""

from freelook.station._analysis import Disparities, analysed_shift, disparities
from freelook.station._hit import Hit, HitError, hit, hit_from_view

__all__ = [
    "Disparities",
    "Hit",
    "HitError",
    "analysed_shift",
    "disparities",
    "hit",
    "hit_from_view",
]

"""Direction-preserving saturation of a whole command (docs/design.md §3).

(v_l, v_r, k) are linear in the command (v1, v2, ω), so scaling the command by one factor
s ≤ 1 scales every output by s: the camera keeps its direction and turn ratio, only slower.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from freelook.hal import scale_within
from freelook.kinematics._commands import WheelCommand

__all__ = ["saturation_factor", "saturation_factor_batch"]


def saturation_factor(
    command: WheelCommand,
    max_wheel_speed: float,
    max_pan_rate: float | None = None,
    max_turn_rate: float | None = None,
    d: float | None = None,
) -> float:
    """The largest s ≤ 1 such that s·command respects every limit.

    Limits: |v_l|, |v_r| ≤ ``max_wheel_speed``; |k| ≤ ``max_pan_rate`` (None: unlimited);
    chassis |θ̇| = |v_r − v_l|/d ≤ ``max_turn_rate`` (needs ``d``).
    """
    peak = max(abs(command.v_left), abs(command.v_right))
    if max_turn_rate is None or d is None:
        return scale_within((peak, command.pan_rate), (max_wheel_speed, max_pan_rate))
    turn = (command.v_right - command.v_left) / d
    return scale_within(
        (peak, command.pan_rate, turn), (max_wheel_speed, max_pan_rate, max_turn_rate)
    )


def saturation_factor_batch(
    v_left: npt.NDArray[np.float64],
    v_right: npt.NDArray[np.float64],
    pan_rate: npt.NDArray[np.float64],
    max_wheel_speed: float,
    max_pan_rate: float | None = None,
) -> npt.NDArray[np.float64]:
    """Vectorised :func:`saturation_factor` (wheel-speed and pan-rate limits)."""
    peak = np.maximum(np.abs(v_left), np.abs(v_right))
    s = np.minimum(1.0, np.divide(max_wheel_speed, peak, out=np.ones_like(peak), where=peak > 0))
    if max_pan_rate is not None:
        k = np.abs(pan_rate)
        s = np.minimum(s, np.divide(max_pan_rate, k, out=np.ones_like(k), where=k > 0))
    return s

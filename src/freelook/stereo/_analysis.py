"""The image-analysis HIT option: how far the stereo pair's features are, from the images.

TAROS 2018 fixes the shift at p′_max in general but suggests a larger one where no pixel
shows a very far object (indoors). With parallel cameras a feature at disparity δ (camera px,
left column minus right column) sits in front of the screen by δ; shifting each image outwards
by h gives it the screen parallax 2h − δ, which must stay ≤ 2 p′_max (the eyes' limit). So the
largest shift that keeps every feature from diverging is h = p′_max + δ_far / 2, δ_far the
farthest features' disparity; it puts them exactly at the parallax of infinity and pushes the
nearest ones as far behind the screen as the scene allows.

Disparities come from block matching (sum of absolute differences) on textured blocks; the far
and near figures are low and high percentiles so a few mismatches do not decide them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from freelook.stereo._hit import HitError

__all__ = ["Disparities", "analysed_shift", "disparities"]

_MIN_CONTRAST = 4.0  # grey levels: a block flatter than this carries no disparity


@dataclass(frozen=True, slots=True)
class Disparities:
    """Disparity (camera px) of the farthest and nearest features and how many blocks said so."""

    far: float
    near: float
    blocks: int


def _grey(image: npt.ArrayLike) -> npt.NDArray[np.float64]:
    a = np.asarray(image)
    if a.ndim == 3:
        a = a[..., :3].mean(axis=2)
    if a.ndim != 2:
        raise HitError(f"expected an H×W or H×W×C image, got shape {np.shape(image)}")
    out = a.astype(np.float64)
    if not np.all(np.isfinite(out)):
        raise HitError("image holds non-finite values")
    return out


def disparities(
    left: npt.ArrayLike, right: npt.ArrayLike, max_disparity: int, block: int = 8
) -> Disparities | None:
    """The far (5th percentile) and near (95th) disparities of the pair's textured blocks,
    searched in 0…``max_disparity`` px; None when no block has texture to match."""
    L, R = _grey(left), _grey(right)
    if L.shape != R.shape:
        raise HitError(f"the eyes differ in size: {L.shape} and {R.shape}")
    if block < 2 or max_disparity < 0:
        raise HitError(f"block {block} must be ≥ 2 and max disparity {max_disparity} ≥ 0")
    h, w = L.shape
    rows, cols = h // block, (w - max_disparity) // block
    if rows < 1 or cols < 1:
        return None
    y1, x0 = rows * block, max_disparity
    x1 = x0 + cols * block

    def blocks(a: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        out: npt.NDArray[np.float64] = a.reshape(rows, block, cols, block).sum(axis=(1, 3))
        return out

    left_blocks = L[:y1, x0:x1]
    costs = np.stack(
        [blocks(np.abs(left_blocks - R[:y1, x0 - d : x1 - d])) for d in range(max_disparity + 1)]
    )
    tiles = left_blocks.reshape(rows, block, cols, block)
    textured = tiles.std(axis=(1, 3)) >= _MIN_CONTRAST
    best = costs.argmin(axis=0)
    # a match is trusted when it is clearly better than the typical shift's cost
    clear = costs.min(axis=0) < 0.7 * np.median(costs, axis=0)
    found = best[textured & clear]
    if found.size == 0:
        return None
    far, near = np.percentile(found.astype(np.float64), [5.0, 95.0])
    return Disparities(float(far), float(near), int(found.size))


def analysed_shift(camera_shift: float, found: Disparities | None, limit: float) -> float:
    """The largest outward shift (camera px) that keeps the farthest features from diverging:
    p′_max + δ_far / 2, at most ``limit``; p′_max itself when nothing was found."""
    if found is None:
        return min(camera_shift, limit)
    return float(min(camera_shift + max(found.far, 0.0) / 2.0, limit))

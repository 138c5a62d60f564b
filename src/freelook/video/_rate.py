"""The video rate controller (sans-I/O): a bitrate from the link's budget and the loss the
operator reports, and the resolution and frame rate that bitrate carries well.

The budget is what the link leaves for video (a serial radio's baud budget after telemetry, or
a UDP link's configured rate). The bitrate falls as the reported loss rises: on a lossy radio a
smaller frame spans fewer datagrams and so arrives whole more often, and on a congested one it
relieves the queue. From a few per cent of loss on, every frame is sent twice (a copy
arrives when the other is lost: a frame then needs both copies of one of its datagrams lost,
one chance in a hundred at 10 % loss, where a lost frame costs the frames after it until a
keyframe comes) at half the bitrate, and the bitrate falls only with the loss beyond what the
copies cover; a keyframe, spanning more datagrams, goes once more (``VideoSender.copies_of``).
Before the bits per pixel fall below what the codec needs for a usable picture, the frame rate
and then the resolution step down (a ladder of rungs), and they step back up, with some
margin, when the bitrate allows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["RATE_LOG", "RateController", "Rung", "VideoSetting"]

#: the logger a robot's video streams report each change of their setting to (INFO);
#: ``freelook robot`` shows it on stderr
RATE_LOG = "freelook.video.rate"


@dataclass(frozen=True, slots=True)
class Rung:
    """One resolution and frame rate the encoder may run at."""

    width: int
    height: int
    fps: float

    @property
    def pixel_rate(self) -> float:
        return self.width * self.height * self.fps


@dataclass(frozen=True, slots=True)
class VideoSetting:
    """What the encoder runs at: bitrate (bit/s) on a rung of the ladder; ``copies``: how
    many times each frame is sent (the budget covers them all)."""

    bitrate: int
    rung: Rung
    copies: int = 1


def _even(value: float) -> int:
    return max(2, 2 * round(value / 2))


def ladder(width: int, height: int, fps: float, min_fps: float = 5.0) -> tuple[Rung, ...]:
    """The rungs from the camera's own size and rate down: two thirds of the rate, then half
    the size at the full rate, two thirds and half of it, then a quarter of the size."""
    steps = ((1.0, 1.0), (1.0, 2 / 3), (0.5, 1.0), (0.5, 2 / 3), (0.5, 0.5), (0.25, 0.5))
    rungs: list[Rung] = []
    for scale, share in steps:
        rung = Rung(_even(width * scale), _even(height * scale), max(min_fps, fps * share))
        if rung not in rungs and rung.width >= 16 and rung.height >= 16:
            rungs.append(rung)
    return tuple(rungs)


class RateController:
    """Bitrate and rung for one camera stream, from the budget and the reported loss.

    ``budget``: bit/s the link leaves for this stream; ``min_bpp``: the bits per pixel below
    which the picture falls apart (a rung is used only while the bitrate gives it at least
    that; it is climbed back only with ``climb`` times that). The bitrate follows the loss at
    once when it falls and at most every ``hold`` s when it rises; a change of less than
    ``deadband`` (relative) is not made, since each change restarts the encoder.
    """

    def __init__(
        self,
        budget: float,
        width: int,
        height: int,
        fps: float,
        *,
        headroom: float = 0.85,
        min_bpp: float = 0.05,
        climb: float = 1.15,
        loss_gain: float = 2.0,
        floor: float = 0.25,
        smoothing: float = 0.3,
        hold: float = 2.0,
        deadband: float = 0.1,
        copy_above: float = 0.04,
        copy_below: float = 0.02,
        copies_cover: float = 0.15,
    ) -> None:
        if not (math.isfinite(budget) and budget > 0):
            raise ValueError(f"video budget {budget!r} bit/s: expected a positive number")
        self.budget = budget
        self.rungs = ladder(width, height, fps)
        self.headroom = headroom
        self.min_bpp = min_bpp
        self.climb = climb
        self.loss_gain = loss_gain
        self.floor = floor
        self.smoothing = smoothing
        self.hold = hold
        self.deadband = deadband
        self.copy_above, self.copy_below, self.copies_cover = copy_above, copy_below, copies_cover
        self.loss = 0.0  # smoothed
        self._changed_at: float | None = None
        bitrate = self._bitrate(0.0, 1)
        self.setting = VideoSetting(bitrate, self._rung_for(bitrate, 0))
        self.changes = 0

    def _bitrate(self, loss: float, copies: int) -> int:
        uncovered = loss if copies == 1 else max(0.0, loss - self.copies_cover)
        share = min(1.0, max(self.floor, 1.0 - self.loss_gain * uncovered))
        return max(1000, int(self.budget * self.headroom * share / copies))

    def _copies(self) -> int:
        """Two copies from ``copy_above`` of loss on, one again below ``copy_below``."""
        if self.loss >= self.copy_above:
            return 2
        return 1 if self.loss < self.copy_below else self.setting.copies

    def _rung_for(self, bitrate: int, current: int) -> Rung:
        """The highest rung the bitrate carries (a higher rung than ``current`` only with
        the climbing margin); the lowest when none does."""
        for index, rung in enumerate(self.rungs):
            need = self.min_bpp * rung.pixel_rate * (self.climb if index < current else 1.0)
            if bitrate >= need:
                return rung
        return self.rungs[-1]

    def resize(self, width: int, height: int) -> VideoSetting:
        """The camera's frames turned out ``width`` × ``height`` (a camera whose size is known
        only from its first frame, or that changed it): a ladder from that size, the highest
        rung the bitrate carries, at the same bitrate."""
        fps = self.rungs[0].fps
        self.rungs = ladder(width, height, fps)
        if not self.rungs:  # smaller than any rung would be: its own size
            self.rungs = (Rung(_even(width), _even(height), fps),)
        rung = self._rung_for(self.setting.bitrate, 0)
        self.setting = VideoSetting(self.setting.bitrate, rung, self.setting.copies)
        self.changes += 1
        return self.setting

    def on_feedback(self, loss: float, now: float) -> VideoSetting:
        """The operator reported ``loss`` (0…1; anything else is clamped): the setting now."""
        loss = min(1.0, max(0.0, loss)) if math.isfinite(loss) else 1.0
        self.loss += self.smoothing * (loss - self.loss)
        copies = self._copies()
        wanted = self._bitrate(self.loss, copies)
        current = self.setting.bitrate
        if copies == self.setting.copies and abs(wanted - current) < self.deadband * current:
            return self.setting
        rising = wanted * copies > current * self.setting.copies  # the bytes on the link
        if rising and self._changed_at is not None and now - self._changed_at < self.hold:
            return self.setting
        index = self.rungs.index(self.setting.rung)
        self.setting = VideoSetting(wanted, self._rung_for(wanted, index), copies)
        self._changed_at = now
        self.changes += 1
        return self.setting

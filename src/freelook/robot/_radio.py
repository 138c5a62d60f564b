"""A slow radio's bytes per second, shared out between telemetry and video."""

from __future__ import annotations

__all__ = ["RadioBudget"]

FULL_REFILL = 2.0  # s of a radio's video budget its tokens hold at most


class RadioBudget:
    """A slow radio's bytes per second shared out: telemetry first, video from what is left.

    Telemetry is spaced so it takes at most ``telemetry_share`` of the radio. A video frame
    goes out only when a token bucket refilled at the rest holds its size, and only if it
    holds the radio for at most ``max_hold`` seconds (a frame that would hold it longer would
    delay the telemetry and commands behind it): video is thinned to fit, or left out.
    """

    max_hold = 0.1  # s of air time one frame may take

    def __init__(self, bytes_per_s: float, telemetry_spacing: float, video_rate: float) -> None:
        self.bytes_per_s = bytes_per_s
        self.telemetry_spacing = telemetry_spacing
        self.video_rate = video_rate  # bytes/s left for video
        self._tokens = 0.0
        self._last: float | None = None

    @classmethod
    def for_baud(
        cls, baud: int, telemetry_bytes: int, spacing: float, telemetry_share: float = 0.7
    ) -> RadioBudget:
        usable = 0.8 * baud / 10  # 8N1 framing, and room for the operator's replies
        spacing = max(spacing, telemetry_bytes / (telemetry_share * usable))
        return cls(usable, spacing, usable - telemetry_bytes / spacing)

    @classmethod
    def for_rate(
        cls, bits_per_s: float, telemetry_bytes: int, spacing: float, telemetry_share: float = 0.3
    ) -> RadioBudget:
        """A rate-limited UDP link (a radio behind an IP bridge): datagrams interleave, so a
        frame may hold the link for up to a second; telemetry is spaced to leave video most."""
        usable = 0.9 * bits_per_s / 8  # room for the operator's replies
        spacing = max(spacing, telemetry_bytes / (telemetry_share * usable))
        budget = cls(usable, spacing, usable - telemetry_bytes / spacing)
        budget.max_hold = 1.0
        return budget

    def may_send_frame(self, now: float, size: int) -> bool:
        """Whether a frame of ``size`` bytes may go out now."""
        if self._last is not None:
            self._tokens = min(
                self._tokens + (now - self._last) * self.video_rate,
                FULL_REFILL * self.video_rate,
            )
        self._last = now
        fits = size <= self.max_hold * self.bytes_per_s
        return self.video_rate > 0 and fits and self._tokens >= size

    def wait_for(self, size: int) -> float:
        """Seconds until the budget has room for a frame of ``size`` bytes, at most the two it
        takes to fill (a frame too large for it, or that would hold the radio too long, is
        tried again then: the next may be smaller)."""
        if self.video_rate <= 0 or size > self.max_hold * self.bytes_per_s:
            return FULL_REFILL
        return min(max(0.0, size - self._tokens) / self.video_rate, FULL_REFILL)

    def spent(self, size: int) -> None:
        self._tokens -= size

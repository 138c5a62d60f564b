"""Streams that write into other streams: to several at once (a file and a live view), or one
robot's under its name among several in one recording."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from freelook.record._streams import RosStreams

__all__ = ["Namespaced", "Tee"]


class Tee(RosStreams):
    """Every write to each of several streams (a file and a live view); a failing one does
    not keep the others from their copy, and the first failure is raised after."""

    def __init__(self, *sinks: RosStreams, clock: Callable[[], float] = time.time) -> None:
        super().__init__(clock)
        self.sinks = sinks

    def write(self, topic: str, typename: str, message: dict[str, Any], t: float) -> None:
        failure: Exception | None = None
        log_time = self.log_time()
        for sink in self.sinks:
            try:
                with sink.logged_at(log_time):
                    sink.write(topic, typename, message, t)
            except Exception as err:  # raised below, after the other sinks had theirs
                failure = failure or err
        if failure is not None:
            raise failure

    def close(self) -> None:
        for sink in self.sinks:
            sink.close()

    @property
    def messages_recorded(self) -> int | None:
        """What the sinks that write files recorded (a live view records nothing)."""
        counts = [n for n in (sink.messages_recorded for sink in self.sinks) if n is not None]
        return sum(counts) if counts else None


class Namespaced(RosStreams):
    """One robot's streams among several in one recording: its topics under ``/NAME`` and its
    frames as ``NAME/frame``. The world frame ``map`` stays shared, so every robot's pose and
    scans draw in one picture."""

    SHARED_FRAMES = frozenset({"map"})

    def __init__(self, sink: RosStreams, name: str) -> None:
        super().__init__(sink.clock)
        self.sink = sink
        self.name = name

    def write(self, topic: str, typename: str, message: dict[str, Any], t: float) -> None:
        self.sink.write(f"/{self.name}{topic}", typename, self._frames(message), t)

    def _frames(self, value: Any) -> Any:
        """``value`` with every ``frame_id`` and ``child_frame_id`` in its robot's name."""
        if isinstance(value, dict):
            return {
                key: (
                    self._frame(item)
                    if key in ("frame_id", "child_frame_id") and isinstance(item, str)
                    else self._frames(item)
                )
                for key, item in value.items()
            }
        if isinstance(value, list) and value and isinstance(value[0], dict):
            return [self._frames(item) for item in value]
        return value

    def _frame(self, frame: str) -> str:
        return frame if frame in self.SHARED_FRAMES or not frame else f"{self.name}/{frame}"

    def close(self) -> None:
        """The sink is shared: whoever made it closes it."""

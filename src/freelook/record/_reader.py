"""Reading recorded runs back: decoded ROS 2 messages by topic, in log-time order.

A file that cannot be read (empty, cut off, not MCAP, a damaged chunk) raises
:class:`RecordingError`, whose message names the file, says what is wrong and how to recover
what is readable (``freelook record repair FILE``).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zstandard
from mcap.exceptions import McapError
from mcap.reader import make_reader
from mcap.summary import Summary
from mcap_ros2.decoder import DecoderFactory

from freelook.errors import FreelookError
from freelook.files import ensure_regular

__all__ = [
    "RecordedMessage",
    "RecordingError",
    "RecordingInfo",
    "read_messages",
    "recording_info",
    "topic_counts",
]

_MAGIC = b"\x89MCAP0\r\n"
#: what the readers raise on a damaged file (zstd, struct and decoding errors come through as-is)
_READ_ERRORS = (
    McapError,
    zstandard.ZstdError,
    OSError,
    EOFError,
    struct.error,
    ValueError,
    KeyError,
    IndexError,
)


class RecordingError(FreelookError):
    """A recording cannot be read: empty, cut off, not MCAP, or damaged."""

    def __init__(self, path: str | Path, problem: str) -> None:
        self.path = Path(path)
        self.problem = problem
        super().__init__(
            f"{path}: {problem}; recover what is readable with: freelook record repair {path}"
        )


@dataclass(frozen=True, slots=True)
class RecordedMessage:
    topic: str
    schema: str
    log_time: float  # s, the recorder's clock
    message: Any  # decoded ROS 2 message (attribute access)
    publish_time: float = 0.0  # s, the sender's stamp


@dataclass(frozen=True, slots=True)
class RecordingInfo:
    """What a recording holds, from its summary."""

    counts: dict[str, int]  # messages per topic
    start: float | None  # first log time, s (None: no messages)
    end: float | None  # last log time, s
    metadata: dict[str, str]  # the run's own: robot, world, wire

    @property
    def messages(self) -> int:
        return sum(self.counts.values())

    @property
    def duration(self) -> float:
        return (self.end - self.start) if self.start is not None and self.end is not None else 0.0


def _damage(err: BaseException) -> str:
    detail = str(err).strip()
    name = type(err).__name__
    return f"damaged or cut off ({name}: {detail})" if detail else f"damaged or cut off ({name})"


def _check_magic(path: Path) -> None:
    try:
        ensure_regular(path)  # a FIFO or a device would hang the reader
        with open(path, "rb") as stream:
            head = stream.read(len(_MAGIC))
    except OSError as err:
        raise FreelookError(f"{path}: cannot read: {err.strerror}") from None
    if not head:
        raise RecordingError(path, "empty file (0 bytes), not a recording")
    if head != _MAGIC:
        raise RecordingError(path, "not an MCAP recording (bad magic)")


def _summary(path: Path) -> tuple[Summary, dict[str, str]]:
    """The file's summary (with statistics) and the run's metadata; :class:`RecordingError`
    when there is none (cut off, damaged)."""
    _check_magic(path)
    try:
        with open(path, "rb") as stream:
            reader = make_reader(stream)
            summary = reader.get_summary()
            metadata: dict[str, str] = {}
            for record in reader.iter_metadata():
                if record.name == "freelook":
                    metadata = dict(record.metadata)
    except _READ_ERRORS as err:
        raise RecordingError(path, _damage(err)) from None
    if summary is None or summary.statistics is None:
        raise RecordingError(path, "no summary at the end: the recording was cut off")
    return summary, metadata


def recording_info(path: str | Path) -> RecordingInfo:
    """Topics, message counts and the time span of a recording, from its summary; a file
    without a readable summary (cut off, damaged) raises :class:`RecordingError`."""
    summary, metadata = _summary(Path(path))
    statistics = summary.statistics
    assert statistics is not None
    counts = {
        summary.channels[cid].topic: n
        for cid, n in statistics.channel_message_counts.items()
        if cid in summary.channels
    }
    if statistics.message_count == 0:
        return RecordingInfo(counts, None, None, metadata)
    return RecordingInfo(
        counts, statistics.message_start_time / 1e9, statistics.message_end_time / 1e9, metadata
    )


def read_messages(path: str | Path, topics: list[str] | None = None) -> Iterator[RecordedMessage]:
    """Decoded messages of ``topics`` (all when None) in log-time order; a damaged file raises
    :class:`RecordingError` where reading stops."""
    path = Path(path)
    _check_magic(path)
    try:
        with open(path, "rb") as stream:
            reader = make_reader(stream, decoder_factories=[DecoderFactory()])
            for schema, channel, message, decoded in reader.iter_decoded_messages(
                topics=topics, log_time_order=True
            ):
                name = schema.name if schema is not None else ""
                yield RecordedMessage(
                    channel.topic,
                    name,
                    message.log_time / 1e9,
                    decoded,
                    message.publish_time / 1e9,
                )
    except _READ_ERRORS as err:
        raise RecordingError(path, _damage(err)) from None


def topic_counts(path: str | Path) -> dict[str, int]:
    """Message count per topic, from the file's summary (counted when it has none)."""
    path = Path(path)
    _check_magic(path)
    try:
        with open(path, "rb") as stream:
            reader = make_reader(stream)
            summary = reader.get_summary()
            if summary is None or summary.statistics is None:
                counts: dict[str, int] = {}
                for _, channel, _ in reader.iter_messages():
                    counts[channel.topic] = counts.get(channel.topic, 0) + 1
                return counts
            return {
                summary.channels[cid].topic: n
                for cid, n in summary.statistics.channel_message_counts.items()
            }
    except _READ_ERRORS as err:
        raise RecordingError(path, _damage(err)) from None

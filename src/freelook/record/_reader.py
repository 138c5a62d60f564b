"""Reading recorded runs back: decoded ROS 2 messages by topic, in log-time order."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory

__all__ = ["RecordedMessage", "read_messages", "topic_counts"]


@dataclass(frozen=True, slots=True)
class RecordedMessage:
    topic: str
    schema: str
    log_time: float  # s
    message: Any  # decoded ROS 2 message (attribute access)


def read_messages(path: str | Path, topics: list[str] | None = None) -> Iterator[RecordedMessage]:
    """Decoded messages of ``topics`` (all when None) in log-time order."""
    with open(path, "rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        for schema, channel, message, decoded in reader.iter_decoded_messages(
            topics=topics, log_time_order=True
        ):
            name = schema.name if schema is not None else ""
            yield RecordedMessage(channel.topic, name, message.log_time / 1e9, decoded)


def topic_counts(path: str | Path) -> dict[str, int]:
    """Message count per topic, from the file's summary."""
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

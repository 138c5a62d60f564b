"""Recovering a truncated or partly corrupt MCAP file into a valid one.

A process killed mid-run leaves a file with no summary and possibly a half-written chunk.
:func:`repair` walks the file record by record, keeps every chunk whose CRC checks out, stops at
the first unreadable record, and writes what it kept to a new, complete file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mcap.records import Channel, Chunk, Message, Schema
from mcap.stream_reader import StreamReader, breakup_chunk
from mcap.writer import CompressionType
from mcap.writer import Writer as McapWriter

from freelook.errors import FreelookError
from freelook.files import ensure_regular

__all__ = ["RepairError", "RepairReport", "repair"]

_MAX_RECORD = 256 * 1024 * 1024


class RepairError(FreelookError):
    """The file is not an MCAP file at all (no magic), so nothing can be recovered."""


@dataclass(frozen=True, slots=True)
class RepairReport:
    chunks_recovered: int
    chunks_lost: int  # chunks present but unreadable (bad CRC or cut off)
    messages_recovered: int
    clean_end: bool  # the source ended with a proper footer
    stopped_at: str  # why reading stopped


def repair(source: str | Path, destination: str | Path) -> RepairReport:
    """Copy every readable chunk of ``source`` into a valid MCAP file at ``destination``."""
    schemas: dict[int, Schema] = {}
    channels: dict[int, Channel] = {}
    messages: list[Message] = []
    chunks_ok = 0
    chunks_bad = 0
    clean_end = False
    stopped_at = "end of file"

    def take(record: object) -> None:
        if isinstance(record, Schema):
            schemas[record.id] = record
        elif isinstance(record, Channel):
            channels[record.id] = record
        elif isinstance(record, Message):
            messages.append(record)

    try:
        ensure_regular(source)  # a FIFO or a device would hang the repair
    except OSError as err:
        raise RepairError(f"{source}: cannot read: {err.strerror}") from None
    with open(source, "rb") as stream:
        if stream.read(8) != b"\x89MCAP0\r\n":
            raise RepairError(f"{source}: not an MCAP file (bad magic)")
        stream.seek(0)
        reader = StreamReader(stream, emit_chunks=True, record_size_limit=_MAX_RECORD)
        try:
            for record in reader.records:
                if isinstance(record, Chunk):
                    try:
                        inner = breakup_chunk(record, validate_crc=True)
                    except Exception as err:  # corrupt chunk: skip it, keep going
                        chunks_bad += 1
                        stopped_at = f"bad chunk: {err}"
                        continue
                    chunks_ok += 1
                    for item in inner:
                        take(item)
                else:
                    take(record)
            clean_end = True
        except Exception as err:  # truncated file: keep what was read
            stopped_at = f"{type(err).__name__}: {err}" if str(err) else type(err).__name__

    with open(destination, "wb") as out:
        writer = McapWriter(out, compression=CompressionType.ZSTD)
        writer.start(profile="ros2", library="freelook record repair")
        schema_ids = {
            old: writer.register_schema(s.name, s.encoding, s.data) for old, s in schemas.items()
        }
        channel_ids = {
            old: writer.register_channel(
                c.topic, c.message_encoding, schema_ids.get(c.schema_id, 0), c.metadata
            )
            for old, c in channels.items()
        }
        kept = 0
        for message in messages:
            channel_id = channel_ids.get(message.channel_id)
            if channel_id is None:
                continue
            writer.add_message(
                channel_id, message.log_time, message.data, message.publish_time, message.sequence
            )
            kept += 1
        writer.finish()  # type: ignore[no-untyped-call]
    return RepairReport(chunks_ok, chunks_bad, kept, clean_end, stopped_at)

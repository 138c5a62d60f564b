"""Recovering a truncated or partly corrupt MCAP file into a valid one.

A process killed mid-run leaves a file with no summary and possibly a half-written chunk.
:func:`repair` walks the file record by record, keeps every chunk whose CRC checks out, stops at
the first unreadable record, and writes what it kept to a new, complete file. It never
overwrites a file unless told to, and then only once the new file is complete (written beside
it and moved over it in one step), so a repair that fails, or a repair into the source itself,
loses nothing.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from mcap.records import Channel, Chunk, Message, Schema
from mcap.stream_reader import StreamReader, breakup_chunk
from mcap.writer import CompressionType
from mcap.writer import Writer as McapWriter

from freelook.errors import FreelookError
from freelook.files import ensure_regular

__all__ = ["RepairError", "RepairReport", "repair"]

_MAX_RECORD = 256 * 1024 * 1024


class RepairError(FreelookError):
    """Nothing can be recovered (the file is not an MCAP file at all: no magic), or the repair
    would overwrite a file it was not told to."""


@dataclass(frozen=True, slots=True)
class RepairReport:
    chunks_recovered: int
    chunks_lost: int  # chunks present but unreadable (bad CRC or cut off)
    messages_recovered: int
    clean_end: bool  # the source ended with a proper footer
    stopped_at: str  # why reading stopped


def repair(source: str | Path, destination: str | Path, *, overwrite: bool = False) -> RepairReport:
    """Copy every readable chunk of ``source`` into a valid MCAP file at ``destination``; an
    existing ``destination`` is refused unless ``overwrite`` (then replaced whole once the
    new file is written: ``destination`` may be ``source`` itself)."""
    target = Path(destination)
    if not overwrite and (target.exists() or target.is_symlink()):
        raise RepairError(
            f"{target}: exists; the repair writes nothing over it (name another output, or "
            "--force to replace it)"
        )
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

    with _output(target, overwrite) as out:
        kept = _write(out, schemas, channels, messages)
    return RepairReport(chunks_ok, chunks_bad, kept, clean_end, stopped_at)


@contextlib.contextmanager
def _output(target: Path, overwrite: bool) -> Iterator[IO[bytes]]:
    """The file the repair writes: ``target`` itself, created (never an existing one); or,
    to overwrite, a file beside it moved over it once complete. A failed write leaves
    nothing behind."""
    if not overwrite:
        try:
            out = open(target, "xb")  # noqa: SIM115 - closed below; exclusive: never overwrites
        except FileExistsError:
            raise RepairError(f"{target}: exists; the repair writes nothing over it") from None
        except OSError as err:
            raise RepairError(f"{target}: cannot write: {err.strerror}") from None
        try:
            with out:
                yield out
        except BaseException:
            target.unlink(missing_ok=True)
            raise
        return
    try:
        handle, partial = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name}.", suffix=".partial"
        )
    except OSError as err:
        raise RepairError(f"{target}: cannot write beside it: {err.strerror}") from None
    try:
        with os.fdopen(handle, "wb") as out:
            yield out
        os.replace(partial, target)
    except OSError as err:
        Path(partial).unlink(missing_ok=True)
        raise RepairError(f"{target}: cannot replace it: {err.strerror}") from None
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise


def _write(
    out: IO[bytes],
    schemas: dict[int, Schema],
    channels: dict[int, Channel],
    messages: list[Message],
) -> int:
    """The recovered records as a complete MCAP file; how many messages it holds."""
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
    return kept

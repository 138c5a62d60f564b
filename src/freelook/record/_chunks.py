"""The messages of chosen topics in an indexed MCAP file, read chunk by chunk.

The general reader parses every record of every chunk; a report wants a few topics of a long
run, so chunks without them are skipped unread (the summary's chunk indexes say which channels
each holds) and the others are inflated whole and walked record by record.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import zstandard
from mcap.records import Schema
from mcap.summary import Summary

from freelook.record._reader import RecordingError

__all__ = ["MAX_CHUNK_BYTES", "messages_on"]

_CHUNK_HEAD = struct.Struct("<QQQII")  # start, end, uncompressed size, crc, compression length
_RECORD = struct.Struct("<BQ")  # opcode, length
_MESSAGE = struct.Struct("<HIQ")  # channel, sequence, log time (publish time follows)
_MESSAGE_OP = 0x05
MAX_CHUNK_BYTES = 256 * 1024 * 1024  # a chunk inflated at most (the recorder writes 64 kB ones)


def messages_on(
    path: Path, summary: Summary, topics: list[str]
) -> Iterator[tuple[str, Schema, int, bytes]]:
    """(topic, schema, log time in ns, CDR bytes) of every message on ``topics``, in file
    order."""
    with open(path, "rb") as stream:
        wanted = {
            cid: (channel.topic, summary.schemas[channel.schema_id])
            for cid, channel in summary.channels.items()
            if channel.topic in topics and channel.schema_id in summary.schemas
        }
        inflate = zstandard.ZstdDecompressor()
        for index in sorted(summary.chunk_indexes, key=lambda c: c.chunk_start_offset):
            if not wanted.keys() & index.message_index_offsets.keys():
                continue
            stream.seek(index.chunk_start_offset + _RECORD.size)
            records = _chunk_records(path, stream, inflate)
            view = memoryview(records)
            pos, end = 0, len(records)
            while pos < end:
                opcode, length = _RECORD.unpack_from(records, pos)
                body = pos + _RECORD.size
                pos = body + length
                if opcode != _MESSAGE_OP:
                    continue
                channel, _, log_time = _MESSAGE.unpack_from(records, body)
                found = wanted.get(channel)
                if found is not None:
                    yield found[0], found[1], log_time, bytes(view[body + 22 : pos])


def _chunk_records(path: Path, stream: BinaryIO, inflate: zstandard.ZstdDecompressor) -> bytes:
    """The records of the chunk whose body starts where ``stream`` stands, inflated."""
    read = stream.read
    _, _, size, _, name_length = _CHUNK_HEAD.unpack(read(_CHUNK_HEAD.size))
    if size > MAX_CHUNK_BYTES:
        raise RecordingError(path, f"a chunk declares {size} bytes (at most {MAX_CHUNK_BYTES})")
    compression = read(name_length).decode()
    (length,) = struct.unpack("<Q", read(8))
    raw = read(length)
    if compression == "zstd":
        records: bytes = inflate.decompress(raw, max_output_size=size)
        return records
    if compression == "":
        return bytes(raw)
    raise RecordingError(path, f"chunks compressed with {compression!r}")

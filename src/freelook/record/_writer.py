"""Writing runs to MCAP: raw link packets with both time stamps, and decoded ROS 2 streams.

One time base: every message's MCAP *log time* is the recorder's own clock (wall clock by
default) when the message was handed to it, whatever clock its sender used; the sender's stamp
(the time argument of each stream method, also in the message header) is its *publish time*.
A recording is therefore one timeline even when the robot's and the station's clocks disagree.

The writer is the I/O edge of recording. It emits small zstd chunks and closes a chunk (and
flushes the file) at least every ``flush_interval`` seconds of log time, so a process killed
mid-run loses at most the chunk in progress; :func:`freelook.record.repair` recovers the rest.
:class:`BackgroundRecorder` puts a bounded queue and a thread in front of it so that recording
never blocks the control path: when the queue is full, the newest item is dropped and counted.
The log time of a queued write is taken when it is submitted, not when the thread drains it.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

from mcap.writer import CompressionType
from mcap.writer import Writer as McapWriter

from freelook.record._stream_sinks import Namespaced
from freelook.record._streams import RosStreams, ros_schema

__all__ = [
    "LATCHED_TOPICS",
    "BackgroundRecorder",
    "Recorder",
    "RecorderStats",
    "RecorderView",
    "StreamWriter",
    "latched",
]

log = logging.getLogger(__name__)

#: rosbag2's QoS for a latched topic (transient local, keep last 1): a player or a viewer that
#: starts later in the file still gets the topic's one message
_LATCHED_QOS = (
    "- history: 1\n  depth: 1\n  reliability: 1\n  durability: 1\n"
    "  deadline:\n    sec: 2147483647\n    nsec: 4294967295\n"
    "  lifespan:\n    sec: 2147483647\n    nsec: 4294967295\n"
    "  liveliness: 1\n"
    "  liveliness_lease_duration:\n    sec: 2147483647\n    nsec: 4294967295\n"
    "  avoid_ros_namespace_conventions: false\n"
)
LATCHED_TOPICS = frozenset({"/map", "/robot_description", "/tf_static"})


def latched(topic: str) -> bool:
    """Whether ``topic`` is latched, a robot's own (``/NAME/map``) as well."""
    return "/" + topic.rsplit("/", 1)[-1] in LATCHED_TOPICS


def _ns(t: float) -> int:
    return max(0, round(t * 1e9))


class Recorder(RosStreams):
    """Synchronous MCAP writer with one method per recorded stream (times in seconds).

    Each stream method takes the sender's stamp (publish time); the log time is ``clock()``
    at the write, or the time pinned by :meth:`logged_at`.
    """

    def __init__(
        self,
        output: str | Path | IO[bytes],
        *,
        chunk_size: int = 64 * 1024,
        flush_interval: float = 0.5,
        metadata: dict[str, str] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(clock)
        if isinstance(output, str | Path):
            self._stream: IO[bytes] = open(output, "wb")  # noqa: SIM115 - closed in close()
            self._owns_stream = True
        else:
            self._stream = output
            self._owns_stream = False
        self._writer = McapWriter(
            self._stream, chunk_size=chunk_size, compression=CompressionType.ZSTD
        )
        self._writer.start(profile="ros2", library="freelook")
        if metadata:
            self._writer.add_metadata("freelook", metadata)
        self._flush_interval = flush_interval
        self._last_flush: float | None = None
        self._schemas: dict[str, int] = {}
        self._channels: dict[str, int] = {}
        self._sequence: dict[str, int] = {}
        self.messages_written = 0
        #: Messages known to be on disk (their chunk was closed and the file flushed).
        self.messages_flushed = 0
        self._closed = False

    # -- plumbing ----------------------------------------------------------------------------

    def _schema_id(self, typename: str) -> int:
        found = self._schemas.get(typename)
        if found is None:
            schema = ros_schema(typename)
            found = self._writer.register_schema(schema.name, "ros2msg", schema.text.encode())
            self._schemas[typename] = found
        return found

    def write(self, topic: str, typename: str, message: dict[str, Any], t: float) -> None:
        """Write one message (a dict of fields) of ROS 2 type ``pkg/Type`` on ``topic``,
        stamped ``t`` by its sender (publish time), logged on the recorder's clock."""
        if self._closed:
            raise ValueError("recorder is closed")
        log_time = self.log_time()
        publish_ns = _ns(t)  # a stamp that is not a time (NaN, inf) is refused here
        schema_id = self._schema_id(typename)
        channel_id = self._channels.get(topic)
        if channel_id is None:
            metadata = {"offered_qos_profiles": _LATCHED_QOS} if latched(topic) else {}
            channel_id = self._writer.register_channel(topic, "cdr", schema_id, metadata)
            self._channels[topic] = channel_id
        sequence = self._sequence.get(topic, 0)
        self._sequence[topic] = sequence + 1
        data = ros_schema(typename).encode(message)
        self._writer.add_message(channel_id, _ns(log_time), data, publish_ns, sequence)
        self.messages_written += 1
        if self._last_flush is None:
            self._last_flush = log_time
        elif log_time - self._last_flush >= self._flush_interval:
            self.flush()
            self._last_flush = log_time

    @property
    def messages_recorded(self) -> int:
        """Messages written into the file (all of them are in it once it is closed)."""
        return self.messages_written

    def flush(self) -> None:
        """Close the chunk in progress and flush it to the file."""
        self._writer.flush()  # type: ignore[no-untyped-call]
        self.messages_flushed = self.messages_written

    def close(self) -> None:
        """Write the summary and close the file (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._writer.finish()  # type: ignore[no-untyped-call]
        if self._owns_stream:
            self._stream.close()

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True, slots=True)
class RecorderStats:
    """What a background recorder did. A write is one submitted item, a stream method's call
    that may write many messages (a telemetry writes a score); ``messages`` counts those its
    file holds (None: it writes to no file, only to a live view)."""

    submitted: int  # writes submitted
    written: int  # writes done
    dropped: int  # writes dropped: the queue was full
    errors: int  # writes that failed
    messages: int | None = None  # messages in the file


class BackgroundRecorder:
    """A :class:`Recorder` behind a bounded queue drained by its own thread.

    ``submit(write)`` calls ``write(recorder)`` on the writer thread, logged at the recorder's
    clock when ``submit`` was called. It never blocks: a full queue drops the item and counts
    it (``stats().dropped``).
    """

    def __init__(self, recorder: RosStreams, max_queue: int = 10_000) -> None:
        self._recorder = recorder
        self._queue: queue.Queue[tuple[float, Callable[[RosStreams], None]] | None] = queue.Queue(
            maxsize=max_queue
        )
        self._failures: set[str] = set()
        self._submitted = 0
        self._written = 0
        self._dropped = 0
        self._errors = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, name="freelook-recorder", daemon=True)
        self._thread.start()

    def submit(self, write: Callable[[RosStreams], None]) -> bool:
        """Queue one write, e.g. ``submit(lambda r: r.cmd_vel(t, v, omega))`` (typed: mypy
        checks the call); False (and counted) when the queue is full."""
        log_time = self._recorder.clock()
        with self._lock:
            self._submitted += 1
        try:
            self._queue.put_nowait((log_time, write))
        except queue.Full:
            with self._lock:
                self._dropped += 1
            return False
        return True

    def _drain(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            log_time, write = item
            try:
                with self._recorder.logged_at(log_time):
                    write(self._recorder)
            except Exception as err:  # a bad item must not stop recording the rest
                kind = type(err).__name__
                with self._lock:
                    self._errors += 1
                    first = kind not in self._failures
                    self._failures.add(kind)
                if first:  # once per kind: a stream that keeps failing does not flood the log
                    log.exception(
                        "recording failed (%s); later failures of this kind counted", kind
                    )
            else:
                with self._lock:
                    self._written += 1

    def stats(self) -> RecorderStats:
        with self._lock:
            return RecorderStats(
                self._submitted,
                self._written,
                self._dropped,
                self._errors,
                self._recorder.messages_recorded,
            )

    def close(self) -> RecorderStats:
        """Drain what is queued, finish the file and stop the thread."""
        self._queue.put(None)
        self._thread.join()
        self._recorder.close()
        return self.stats()


class StreamWriter(Protocol):
    """What writes a run's streams from the event loop: a :class:`BackgroundRecorder`, or one
    robot's :class:`RecorderView` of it."""

    def submit(self, write: Callable[[RosStreams], None]) -> bool: ...


class RecorderView:
    """One robot's share of a :class:`BackgroundRecorder` several robots record into: its
    writes go to the same file (or live view), their topics and frames in its name
    (:class:`~freelook.record.Namespaced`)."""

    def __init__(self, background: BackgroundRecorder, name: str) -> None:
        self.background = background
        self.name = name

    def submit(self, write: Callable[[RosStreams], None]) -> bool:
        name = self.name
        return self.background.submit(lambda recorder: write(Namespaced(recorder, name)))

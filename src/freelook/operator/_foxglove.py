"""The live Foxglove bridge of an operator station (``--foxglove PORT``).

A Foxglove WebSocket server (foxglove-sdk, subprotocol ``foxglove.sdk.v1``) that publishes what
the station records, live: :class:`LiveStreams` is a :class:`freelook.record.RosStreams`, so
every topic carries the same ROS 2 type, schema text and CDR bytes as in the MCAP recording
(``/odom``, ``/scan``, ``/tf``, ``/map``, ``/robot_description``, the camera, …). It sits behind
the station's background recorder, so a slow viewer never stalls the control path. Latched
topics (the map, the robot description) are sent again to each new subscriber.

Teleop from Foxglove (client publish) goes through :class:`TeleopGate`: only a client that
presented the station's token drives, and then through the station's own authenticated link
session and the robot's control arbitration; a refusal is sent back as a status message with
its reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import foxglove
from foxglove import Channel, Context, Schema, StatusLevel
from foxglove.websocket import (
    Capability,
    ChannelView,
    Client,
    ClientChannel,
    ServerListener,
    WebSocketServer,
)

from freelook.link import VelocityCommand
from freelook.operator._teleop import Authenticated, Drive, Refused, TeleopEvent, TeleopGate
from freelook.record import RosStreams, latched, ros_schema

if TYPE_CHECKING:
    from freelook.operator._station import OperatorStation

__all__ = ["FoxgloveBridge", "LiveStreams"]

log = logging.getLogger(__name__)

_QUEUE = 256  # client events waiting for the event loop; more are dropped and counted


class LiveStreams(RosStreams):
    """The recording's streams, published on Foxglove channels of one context (thread-safe:
    the background recorder's thread writes, the server's thread replays latched topics)."""

    def __init__(self, context: Context, clock: Callable[[], float] = time.time) -> None:
        super().__init__(clock)
        self.context = context
        self._channels: dict[str, Channel] = {}
        self._latched: dict[str, tuple[bytes, int]] = {}
        self._lock = threading.Lock()
        self._closed = False
        self.published = 0

    def channel(self, topic: str, typename: str) -> Channel:
        """The topic's channel, advertised on first use with the recording's schema."""
        with self._lock:
            found = self._channels.get(topic)
            if found is None:
                schema = ros_schema(typename)
                found = Channel(
                    topic,
                    schema=Schema(name=schema.name, encoding="ros2msg", data=schema.text.encode()),
                    message_encoding="cdr",
                    context=self.context,
                )
                self._channels[topic] = found
            return found

    def write(self, topic: str, typename: str, message: dict[str, Any], t: float) -> None:
        if self._closed:
            return  # the bridge stopped; what is still queued for it goes nowhere
        channel = self.channel(topic, typename)
        is_latched = latched(topic)
        if not is_latched and not channel.has_sinks():
            return  # nobody watches this topic: skip the encoding
        data = ros_schema(typename).encode(message)
        log_time = max(0, round(self.log_time() * 1e9))
        if is_latched:
            with self._lock:
                self._latched[topic] = (data, log_time)
        channel.log(data, log_time=log_time)
        self.published += 1

    def replay(self, topic: str) -> None:
        """A latched topic's last message again (a viewer subscribed after it was sent)."""
        with self._lock:
            found = self._latched.get(topic)
            channel = self._channels.get(topic)
        if found is not None and channel is not None:
            channel.log(found[0], log_time=found[1])

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for channel in self._channels.values():
                channel.close()
            self._channels.clear()


@dataclass(frozen=True, slots=True)
class _Advertise:
    """A client offers a channel to publish on."""

    client: int
    channel: int
    topic: str
    encoding: str


@dataclass(frozen=True, slots=True)
class _Unadvertise:
    """A client withdraws a channel it offered."""

    client: int
    channel: int


@dataclass(frozen=True, slots=True)
class _Data:
    """A message a client published on its channel."""

    client: int
    channel: int
    data: bytes


_ClientEvent = _Advertise | _Unadvertise | _Data


class _Listener(ServerListener):
    """foxglove-sdk's callbacks (on the server's thread), handed to the event loop."""

    def __init__(self, bridge: FoxgloveBridge) -> None:
        self.bridge = bridge

    def on_subscribe(self, client: Client, channel: ChannelView) -> None:
        if latched(channel.topic):
            self.bridge.streams.replay(channel.topic)

    def on_client_advertise(self, client: Client, channel: ClientChannel) -> None:
        self.bridge.post(_Advertise(client.id, channel.id, channel.topic, channel.encoding))

    def on_client_unadvertise(self, client: Client, client_channel_id: int) -> None:
        self.bridge.post(_Unadvertise(client.id, client_channel_id))

    def on_message_data(self, client: Client, client_channel_id: int, data: bytes) -> None:
        self.bridge.post(_Data(client.id, client_channel_id, bytes(data)))


class FoxgloveBridge:
    """A Foxglove server for one station: live topics out, gated teleop in."""

    def __init__(
        self,
        token: str,
        *,
        max_speed: float,
        max_turn_rate: float,
        host: str = "127.0.0.1",
        port: int = 8765,
        certfile: Path | None = None,
        keyfile: Path | None = None,
        hold: float = 1.5,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.context = Context()
        self.streams = LiveStreams(self.context)
        self.gate = TeleopGate(token, max_speed, max_turn_rate, hold)
        self.clock = clock
        self._host, self._port = host, port
        self._tls = (certfile, keyfile)
        self._server: WebSocketServer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[_ClientEvent] | None = None
        self._sent: VelocityCommand | None = None  # the command this bridge last gave
        self.dropped_events = 0

    @property
    def port(self) -> int:
        assert self._server is not None, "start() first"
        return int(self._server.port)

    def start(self) -> int:
        """Open the server (call on the event loop that will run :meth:`run`); its port."""
        self._loop = asyncio.get_running_loop()
        self._queue = asyncio.Queue(_QUEUE)
        certfile, keyfile = self._tls
        self._server = foxglove.start_server(
            name="freelook",
            host=self._host,
            port=self._port,
            capabilities=[Capability.ClientPublish],
            supported_encodings=["json", "cdr"],
            server_listener=_Listener(self),
            context=self.context,
            tls_cert=certfile.read_bytes() if certfile is not None else None,
            tls_key=keyfile.read_bytes() if keyfile is not None else None,
        )
        return int(self._server.port)

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None
        self.streams.close()

    def post(self, event: _ClientEvent) -> None:
        """From the server's thread: queue a client event for the loop (bounded)."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._enqueue, event)

    def _enqueue(self, event: _ClientEvent) -> None:
        assert self._queue is not None
        try:
            self._queue.put_nowait(event)
        except asyncio.QueueFull:
            self.dropped_events += 1

    async def run(self, station: OperatorStation, period: float = 0.1) -> None:
        """Apply client events to ``station`` until cancelled; stop a lapsed command."""
        assert self._queue is not None, "start() first"
        try:
            while True:
                event: _ClientEvent | None = None
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(period):  # unlike wait_for, never eats a cancel
                        event = await self._queue.get()
                if event is not None:
                    self._handle(event, station)
                self._lapse(station)
        finally:
            self.stop()

    def _handle(self, event: _ClientEvent, station: OperatorStation) -> None:
        now = self.clock()
        outcome: TeleopEvent | None
        if isinstance(event, _Advertise):
            outcome = self.gate.advertise(event.client, event.channel, event.topic, event.encoding)
        elif isinstance(event, _Unadvertise):
            outcome = None
            if self.gate.unadvertise(event.client, event.channel):
                station.core.detach()  # the last driver gone: the station stops sending
        else:
            outcome = self.gate.message(event.client, event.channel, event.data, now)
        if isinstance(outcome, Drive):
            if outcome.first:
                station.core.attach()
            self._sent = station.drive_command = outcome.command
            station.send([outcome.command])
        elif isinstance(outcome, Refused):
            if outcome.guess:  # guesses are said in aggregate: a guesser cannot fill the log
                line = self.gate.guesses.report(now)
                if line is not None:
                    log.warning("Foxglove bridge: %s", line)
            else:
                log.warning("Foxglove client %d: %s", outcome.client, outcome.reason)
            self._status(outcome.client, outcome.reason, StatusLevel.Warning)
        elif isinstance(outcome, Authenticated):
            self._status(outcome.client, "authenticated: teleop accepted", StatusLevel.Info)

    def _lapse(self, station: OperatorStation) -> None:
        """A command that lapsed is replaced by a stop, unless someone else drives since."""
        if self._sent is None or self.gate.command(self.clock()) is not None:
            return
        if station.drive_command is self._sent:
            stop = VelocityCommand(0.0, 0.0)
            station.drive_command = stop
            station.send([stop])
        self._sent = None

    def _status(self, client: int, message: str, level: StatusLevel) -> None:
        if self._server is not None:
            self._server.publish_status(
                f"client {client}: {message}", level, id=f"freelook-teleop-{client}"
            )

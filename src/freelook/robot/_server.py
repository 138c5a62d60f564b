"""The robot server: the robot program on the real-time runtime, talking over the link.

It interprets commands from either wire profile, streams telemetry at the configured spacing
(changeable at run time by the operator, as in the thesis), streams camera frames (native
profile) and honours transmission start/stop. Thesis profile transmissions start when the
operator sends "set Tx start"; native ones start with the first valid packet.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from dataclasses import dataclass

from freelook.config import RobotConfig
from freelook.errors import ProtocolError
from freelook.link._decoded import Decoded
from freelook.link._errors import rejection_reason
from freelook.link._messages import (
    SetTransmission,
    SetTransmissionSpacing,
    VideoFrame,
)
from freelook.link._native import NativeCodec
from freelook.link._stats import LinkStatistics
from freelook.link._stream import StreamDecoder
from freelook.link._thesis import ThesisCodec
from freelook.link._transport import SerialEndpoint, UdpEndpoint, parse_transport_url
from freelook.maps import World
from freelook.record import BackgroundRecorder
from freelook.robot._runner import SimulatedRobot
from freelook.runtime import RealtimeRuntime
from freelook.sim.camera import encode_jpeg

__all__ = ["RobotServer", "ServerOptions"]

log = logging.getLogger(__name__)
ROBOT_STATION = 100


@dataclass(frozen=True)
class ServerOptions:
    listen: str = "udp://127.0.0.1:47001"
    wire: str = "native"
    key: bytes | None = None
    allow_unauthenticated: bool = False
    seed: int = 0
    camera: bool = True
    camera_rate: float = 30.0


class RobotServer:
    """Runs one simulated robot and serves it on a UDP or serial link."""

    def __init__(
        self,
        config: RobotConfig,
        world: World,
        options: ServerOptions,
        recorder: BackgroundRecorder | None = None,
    ) -> None:
        self.config = config
        self.world = world
        self.options = options
        self.recorder = recorder
        self.runtime = RealtimeRuntime()
        self.robot = SimulatedRobot(
            config,
            world,
            seed=options.seed,
            runtime=self.runtime,
            camera=options.camera,
            background_localization=True,
        )
        self.codec: ThesisCodec | NativeCodec
        if options.wire == "thesis":
            self.codec = ThesisCodec()
        else:
            self.codec = NativeCodec(
                options.key,
                sender=ROBOT_STATION,
                allow_unauthenticated=options.allow_unauthenticated,
            )
        self.stats = LinkStatistics()
        self.tx_enabled = options.wire != "thesis"
        self.tx_spacing = config.link.robot_tx_spacing
        self._tx_task: asyncio.Task[None] | None = None
        self._endpoint: UdpEndpoint | SerialEndpoint | None = None
        self._peer_known = False
        self._frames = itertools.count()
        self.sent_packets = 0
        self.ready = asyncio.Event()
        self.local_address: tuple[str, int] | None = None

    def clock(self) -> float:
        """Stamps on the wire: wall-clock seconds, comparable across processes."""
        return time.time()

    async def run(self) -> None:
        url = parse_transport_url(self.options.listen)
        if url.scheme == "udp":
            udp = await UdpEndpoint.open((url.host, url.port))
            self._endpoint = udp
            self.local_address = udp.local_address
        else:
            self._endpoint = SerialEndpoint(url.device, url.baud)
            self._peer_known = True
        runtime_task = asyncio.create_task(self.runtime.run())
        self._tx_task = asyncio.create_task(self._transmit())
        video_task = (
            asyncio.create_task(self._video())
            if self.options.camera and self.options.wire == "native"
            else None
        )
        self.ready.set()
        decoder = StreamDecoder(self.codec) if url.scheme == "serial" else None
        try:
            while True:
                data = await self._endpoint.recv(timeout=0.2)
                if data is None:
                    continue
                if decoder is not None:
                    for event in decoder.feed(data):
                        if event.decoded is not None:
                            self._accept(event.decoded, event.data)
                        elif event.error is not None:
                            self.stats.on_rejected(
                                rejection_reason(event.error), self.runtime.now()
                            )
                    continue
                self._peer_known = True
                try:
                    decoded = self.codec.decode(data)
                except ProtocolError as err:
                    reason = rejection_reason(err)
                    self.stats.on_rejected(reason, self.runtime.now())
                    self._record(data, None, accepted=False, kind=reason)
                    continue
                self._accept(decoded, data)
        finally:
            self.runtime.stop()
            for task in (self._tx_task, video_task):
                if task is not None:
                    task.cancel()
            await asyncio.gather(runtime_task, return_exceptions=True)
            self.robot.close()
            if self._endpoint is not None:
                self._endpoint.close()

    def _record(self, data: bytes, decoded: Decoded | None, accepted: bool, kind: str) -> None:
        if self.recorder is None:
            return
        now = self.clock()
        self.recorder.submit(
            "packet",
            "operator_to_robot",
            data,
            send_time=decoded.stamp if decoded is not None else now,
            receive_time=now,
            wire=self.codec.name,
            accepted=accepted,
            kind=kind,
            decoded=_fields(decoded.message) if decoded is not None else None,
            stream=decoded.stream if decoded is not None else 0,
            sequence=decoded.sequence or 0 if decoded is not None else 0,
        )

    def _accept(self, decoded: Decoded, data: bytes) -> None:
        now = self.runtime.now()
        message = decoded.message
        self.stats.on_received(
            decoded.stream,
            decoded.sequence,
            decoded.stamp if self.codec.name == "native" else None,
            now,
            decoded.sender,
        )
        self._record(data, decoded, True, type(message).__name__)
        if isinstance(message, SetTransmission):
            self.tx_enabled = message.enabled
            self.robot.core.safety.command_received(now)
            return
        if isinstance(message, SetTransmissionSpacing):
            self.tx_spacing = min(2.0, max(0.005, message.spacing))
            self.robot.core.safety.command_received(now)
            return
        for reply in self.robot.core.handle(message, now, decoded.sender):
            self._send(self.codec.encode(reply, self.clock()))

    def _send(self, packet: bytes) -> None:
        if self._endpoint is None or not self._peer_known:
            return
        self._endpoint.send(packet)
        self.sent_packets += 1
        self.stats.on_sent(self.runtime.now())

    async def _transmit(self) -> None:
        while True:
            await asyncio.sleep(self.tx_spacing)
            if not self.tx_enabled or not self._peer_known:
                continue
            now = self.runtime.now()
            core = self.robot.core
            core.link_stats = self.stats.report(now)
            try:
                self._send(self.codec.encode(core.telemetry(now), self.clock()))
            except ProtocolError:
                log.exception("telemetry could not be encoded")

    async def _video(self) -> None:
        assert isinstance(self.codec, NativeCodec)
        camera = self.robot.hardware.camera
        if camera is None:
            return
        cfg = self.config.camera
        period = 1.0 / self.options.camera_rate
        loop = asyncio.get_running_loop()
        due = loop.time()
        while True:
            due += period  # a fixed rate: rendering and encoding time are not added on top
            delay = due - loop.time()
            if delay < -period:  # fell behind: skip frames rather than burst
                due = loop.time()
                delay = 0.0
            await asyncio.sleep(max(0.0, delay))
            if not self.tx_enabled or not self._peer_known:
                continue
            image = camera.capture()
            if image is None:
                continue
            jpeg = encode_jpeg(image, cfg.jpeg_quality)
            frame = VideoFrame(next(self._frames), self.clock(), cfg.width, cfg.height, jpeg)
            for datagram in self.codec.encode_video(frame, self.clock()):
                self._send(datagram)


def _fields(message: object) -> dict[str, object]:
    from dataclasses import asdict, is_dataclass

    if not is_dataclass(message) or isinstance(message, type):
        return {}
    out = asdict(message)
    for key, value in list(out.items()):
        if isinstance(value, tuple) and len(value) > 16:
            out[key] = f"{len(value)} values"
        elif isinstance(value, bytes):
            out[key] = f"{len(value)} bytes"
    return out

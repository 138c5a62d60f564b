"""The operator station: its core on a link, feeding browsers, recording what the robot says.

The I/O shell around :class:`StationCore`: one link session on UDP or a serial radio (either
wire profile) driven by the link driver, the browsers' latest-value slots (a slow browser never
stalls the control path), video reassembly, and recording. Every decision is the core's.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from freelook.config import RobotConfig
from freelook.link import (
    Accepted,
    FrameAssembler,
    LinkDriver,
    LinkEvent,
    LinkSession,
    LinkShaping,
    LinkStatistics,
    Message,
    NativeCodec,
    PacketRecord,
    SessionOpened,
    SessionStatus,
    Side,
    Telemetry,
    ThesisCodec,
    TransportUrl,
    VideoFragment,
    ZenohBus,
)
from freelook.maps import World, builtin_worlds, load_world
from freelook.operator._browser import (
    KeyframeRequest,
    RefusedInputError,
    VideoSupport,
    parse_browser_message,
)
from freelook.operator._core import OPERATOR_STATION, StationCore
from freelook.operator._frames import _Frames
from freelook.operator._video import FrameScreen, JpegFallback, StationVideo, stream_limits
from freelook.operator._view import hello_message, link_path, map_png, state_message
from freelook.record import ArmRecording, StreamWriter, robot_urdf
from freelook.runtime import MonotonicClock
from freelook.web import BrowserSlot, encode_json

__all__ = ["OperatorStation"]

log = logging.getLogger(__name__)


def _builtin_world(name: str) -> World | None:
    """A built-in world by the name a robot announced (None: no such world here)."""
    return load_world(name) if name in builtin_worlds() else None


class OperatorStation(_Frames):
    """One operator station for one robot."""

    def __init__(
        self,
        config: RobotConfig,
        world: World | None,
        robot_address: tuple[str, int] | TransportUrl,
        *,
        wire: str = "native",
        key: bytes | None = None,
        allow_unauthenticated: bool = False,
        station: int = OPERATOR_STATION,
        authority: int = 10,
        recorder: StreamWriter | None = None,
        state_rate: float = 20.0,
        bus: ZenohBus | None = None,
        driving: bool = True,
        shaping: LinkShaping | None = None,
    ) -> None:
        """``bus``: the Zenoh session to reach a ``zenoh://`` robot on (a fleet's stations
        share one); None opens one from the URL. ``driving`` False: only watch the robot.
        ``shaping``: what the station sends goes out delayed as a rehearsed link.

        Over 80 lines: the station's state, one attribute a line with what it holds."""
        self.shaping = shaping
        self.config = config
        self.bus = bus
        self._bus_key = key  # logs in to an authenticated Zenoh bus (its user is made from it)
        self.world = world
        # a bare (host, port) is a UDP peer
        self.robot = (
            robot_address
            if isinstance(robot_address, TransportUrl)
            else TransportUrl("udp", *robot_address)
        )
        self.wire = wire
        self.recorder = recorder
        self.state_period = 1.0 / state_rate
        self.clock = MonotonicClock().now
        codec: ThesisCodec | NativeCodec = (
            ThesisCodec()
            if wire == "thesis"
            else NativeCodec(key, sender=station, allow_unauthenticated=allow_unauthenticated)
        )
        self.session = LinkSession(
            codec,
            framing=self.robot.transport.framing,
            spacing=config.link.operator_tx_spacing,
            wire_offset=LinkDriver.wall_offset(self.clock),
            on_packet=self._record_packet,
            # native with a key: open a session with this station's key
            role="operator" if isinstance(codec, NativeCodec) and key is not None else None,
        )
        self.core = StationCore(
            config,
            world,
            self.session,
            station=station,
            authority=authority,
            native=isinstance(codec, NativeCodec),
            known_maps=_builtin_world,
        )
        self.session.periodic = self.core.periodic
        self.core.driving = driving
        #: a robot with an arm: its URDF, joint states and links go into the recording
        self._arm_recording = (
            ArmRecording(self.core.arm.model, Path(config.arm.urdf).read_text())
            if self.core.arm is not None and config.arm is not None and recorder is not None
            else None
        )
        self.assembler = FrameAssembler()
        self.video = StationVideo()  # inter-frame video: the keyframe gate, the feedback
        #: what is refused of the robot's frames before anything decodes or forwards them
        self.screen = FrameScreen(stream_limits(config))
        self._jpeg_slots: set[BrowserSlot] = set()  # pages without a video decoder
        self._fallback: JpegFallback | None = None  # their frames, made while they are here
        #: the fallback's decoding: one worker thread (one core at most), never the loop
        self._fallback_pool: ThreadPoolExecutor | None = None
        #: fallback pictures discarded for a decoded size beyond the stream's limit
        self.oversized_pictures = 0
        self._cameras = {camera.stream: camera for camera in config.cameras}
        self.driver: LinkDriver | None = None
        self._slots: set[BrowserSlot] = set()
        self._map_png = map_png(world) if world is not None else None
        self.refused_browser_messages = 0
        #: told (a line for the terminal) when the session with the robot changes state
        self.on_status: Callable[[str], None] | None = None
        self.sessions_opened = 0  # with the robot; more than one: it restarted or came back
        #: times the robot was heard again in the same session after a silence longer than the
        #: station waits before opening again (a path down for a while, a NAT that moved it)
        self.sessions_resumed = 0
        self._heard: float | None = None  # when the robot's newest packet came in
        self._status: SessionStatus | None = None

    # -- what tests and benchmarks look at ---------------------------------------------------

    @property
    def unknown_stream_frames(self) -> int:
        """Frames of a stream the robot's description does not list (dropped)."""
        return self.screen.refused["stream"]

    @property
    def video_refusals(self) -> dict[str, int]:
        """The robot's video frames refused, by reason: ``stream`` (one the robot's
        description lacks), ``size`` (a header or bitstream size of 0 or beyond the stream's
        limit), ``keyframe_rate`` (beyond 5 a second a stream), ``malformed`` (an unknown
        codec or flag, a value out of range: the assembler's), ``picture`` (a fallback
        picture decoded larger than the limit: the bitstream lied)."""
        return {
            **self.screen.refused,
            "malformed": self.assembler.refused,
            "picture": self.oversized_pictures,
        }

    @property
    def refused_video_frames(self) -> int:
        """Every frame of :attr:`video_refusals`, added up."""
        return sum(self.video_refusals.values())

    @property
    def stats(self) -> LinkStatistics:
        """Statistics of what this end received."""
        return self.session.stats

    @property
    def telemetry(self) -> Telemetry | None:
        return self.core.telemetry

    @property
    def in_control(self) -> bool:
        return self.core.in_control

    def wire_clock(self) -> float:
        """The clock this station's link stamps follow now (s): its own plus the wall offset."""
        return self.clock() + self.session.wire_offset

    @property
    def painted(self) -> list[tuple[float, float]]:
        return self.core.painted

    @property
    def drive_command(self) -> Message | None:
        return self.core.drive_command

    @drive_command.setter
    def drive_command(self, command: Message | None) -> None:
        self.core.drive_command = command

    @property
    def tx_enabled(self) -> bool:
        return self.session.transmitting

    @tx_enabled.setter
    def tx_enabled(self, enabled: bool) -> None:
        self.session.transmitting = enabled
        self._heard = None  # a robot told to be quiet is not a silent one

    # -- the link ----------------------------------------------------------------------------

    def send(self, messages: list[Message]) -> None:
        if self.driver is not None:
            for message in messages:
                self.driver.send(message)

    async def run(self) -> None:
        """Talk to the robot on its URL's transport (UDP, a serial radio, a Zenoh bus)."""
        robot = self.robot
        # with sessions, a robot behind NAT whose address changes is followed there once its
        # packets verify (what cannot be a packet stays in the kernel); without, the kernel
        # hears the robot's address alone
        follow = self.session.role is not None
        codec = self.session.codec
        wanted = follow and codec.sync_offset == 0
        side = Side(
            "station",
            kernel_filter=(codec.sync, codec.min_length) if wanted else None,
            follow=follow,
            bus=self.bus,
            key=self._bus_key,
        )
        endpoint = await robot.transport.open(robot, side)
        self.driver = LinkDriver(self.session, endpoint, self.clock, self._on_event, self.shaping)
        self._record_start()
        self.send(self.core.start())
        tasks = [asyncio.create_task(self.driver.run()), asyncio.create_task(self._publish())]
        if self.core.native:
            tasks.append(asyncio.create_task(self._video_feedback()))
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self._stop_fallback()
            endpoint.close()

    def _on_event(self, event: LinkEvent) -> None:
        if isinstance(event, SessionOpened):
            if self.sessions_opened:  # again: the robot restarted, or the link came back
                self.core.session_reopened(event.now)
            self.sessions_opened += 1
            # the robot's first packet of the session comes a round trip after the challenge:
            # through a 1 s round trip that was taken for a silence, and what the operator
            # held was dropped as the session began
            self._heard = event.now + event.trip
            return
        if not isinstance(event, Accepted):
            return  # counted and recorded by the session
        heard, self._heard = self._heard, event.now
        silent = heard is not None and event.now - heard > self.session.reopen_after
        if silent and self.session.role is not None:
            # the same session after a silence its watchdog stopped the robot in: as after a
            # re-open, nothing held from before drives it again
            self.sessions_resumed += 1
            self.core.session_reopened(event.now)
        message = event.message
        robot_map = self.core.on_link_message(message, event.now)
        if robot_map is not None:
            self._adopt_map(robot_map)
        if isinstance(message, Telemetry):
            self._record_telemetry(message, event.now)
        elif isinstance(message, VideoFragment):
            frame = self.assembler.add(message)
            if frame is None:
                return
            self._on_frame(frame, event.now)

    def _adopt_map(self, robot_map: World) -> None:
        """The robot's map arrived (or this end's own proved to be it): show and record it."""
        if robot_map is not self.world:
            self.world = robot_map
            self._map_png = map_png(robot_map)
            hello = encode_json(self.hello())
            for slot in list(self._slots):
                slot.offer_reply(hello)  # browsers already open redraw with the robot's map
        if self.recorder is not None:
            stamp = time.time()
            self.recorder.submit(lambda r: r.occupancy_grid(stamp, robot_map))

    def _record_start(self) -> None:
        """The robot description, and the map when no robot will announce one (the thesis
        profile carries no map)."""
        if self.recorder is None:
            return
        arm = self._arm_recording
        urdf = arm.urdf if arm is not None else robot_urdf(self.config)
        stamp, world = time.time(), self.world
        self.recorder.submit(lambda r: r.robot_description(stamp, urdf))
        if world is not None and not self.core.native:
            self.recorder.submit(lambda r: r.occupancy_grid(stamp, world))

    def _record_packet(self, record: PacketRecord) -> None:
        if self.recorder is not None:
            wire, offset = self.session.codec.name, self.session.wire_offset
            self.recorder.submit(
                lambda r: r.link_packet("robot_to_operator", record, wire=wire, clock_offset=offset)
            )

    def _record_telemetry(self, telemetry: Telemetry, now: float) -> None:
        if self.recorder is None:
            return
        sonar = self.config.sonar
        cone = sonar.cone_deg if sonar is not None else 15.0
        reach = sonar.range_max if sonar is not None else 5.0
        reference = self.core.reference_now(now)
        sent = self.session.sent
        arm = self._arm_recording
        self.recorder.submit(
            lambda r: r.telemetry(
                telemetry,
                sonar_cone=math.radians(cone),
                sonar_range=reach,
                reference=reference,
                sent=sent,
                arm=arm,
            )
        )

    # -- browsers ----------------------------------------------------------------------------

    def attach(self, slot: BrowserSlot) -> None:
        self._slots.add(slot)
        self.core.attach()

    def detach(self, slot: BrowserSlot) -> None:
        if slot in self._slots:
            self._slots.discard(slot)
            self.core.detach()
        self._jpeg_slots.discard(slot)
        if not self._jpeg_slots:
            self._stop_fallback()

    def hello(self) -> dict[str, Any]:
        return hello_message(
            self.config, self.world, self._map_png, self.core, self.wire, self.clock()
        )

    def state(self) -> dict[str, Any]:
        endpoint = self.driver.endpoint if self.driver is not None else None
        path = link_path(self.robot, endpoint)
        return state_message(self.config, self.core, self.clock(), path)

    def session_notice(self, now: float) -> str | None:
        """A line when the session with the robot changed state since the last call: its
        requests went unanswered, or it opened (after being unanswered); None otherwise."""
        status = self.session.session_status(now)
        before, self._status = self._status, status
        if status == before:
            return None
        robot = self.robot
        if robot.device:  # a serial line
            where = robot.device
        elif robot.host:
            where = f"{robot.scheme}://{robot.host}:{robot.port}"
            where += f"/{robot.robot}" if robot.robot else ""
        else:  # a robot a fleet station found on its bus
            where = f"{robot.robot} on the Zenoh bus"
        if status == "unanswered":
            asked = self.session.unanswered_requests
            return (
                f"no answer to session request from the robot at {where} ({asked} sent, as "
                f"station {self.core.station}): wrong key or station id, or no robot there"
            )
        if status == "open" and before == "unanswered":
            return f"session open with the robot at {where}"
        return None

    async def _video_feedback(self) -> None:
        """Loss reports and keyframe requests to the robot (``operator/_video.py``)."""
        while True:
            await asyncio.sleep(0.1)
            self.send(list(self.video.feedback(self.clock(), self.session.stats)))

    async def _publish(self) -> None:
        while True:
            await asyncio.sleep(self.state_period)
            notice = self.session_notice(self.clock())
            if notice is not None and self.on_status is not None:
                self.on_status(notice)
            if not self._slots:
                continue
            payload = encode_json(self.state())
            for slot in list(self._slots):
                slot.offer_state(payload)

    async def handle_browser(self, message: dict[str, Any], slot: BrowserSlot) -> str | None:
        """One browser message; the reason it was refused, or None."""
        try:
            request = parse_browser_message(message, self.core.scales)
        except RefusedInputError as refusal:
            self.refused_browser_messages += 1
            return f"refused: {refusal}"
        if request is None:
            self.refused_browser_messages += 1
            kind = message.get("type") if isinstance(message, dict) else None
            return f"refused: unknown or malformed {kind!r} message"
        if isinstance(request, KeyframeRequest):
            self.video.page_lost(request.stream)
            return None
        if isinstance(request, VideoSupport):
            if request.decoder:
                self._jpeg_slots.discard(slot)
            else:
                self._jpeg_slots.add(slot)
                if self._fallback is None:
                    self._fallback = JpegFallback(self.screen.limits)
            return None
        self.send(self.core.handle(request, self.clock(), time.time()))
        return None

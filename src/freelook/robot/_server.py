"""The robot server: a robot program on the real-time runtime, served on a link.

It runs the program's runtime, its link session (UDP or a serial radio, either wire profile),
camera frames (native profile) and whatever its hardware backend needs running (a serial or
TCP connection to a real robot). It knows the robot only as a program over hardware
interfaces: which backend sits behind them is decided by whoever builds it. Thesis profile
transmissions start when the operator sends "set Tx start"; native ones start with the first
verified packet (before it, the server has nobody it may answer).
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import logging
import secrets
from collections.abc import Callable, Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from freelook.errors import ConfigError
from freelook.link import (
    EXPIRING_COMMANDS,
    MAP_CHUNK,
    MAX_MAP_CELLS,
    Accepted,
    ClockEcho,
    FrameLayout,
    KeyRing,
    LinkDriver,
    LinkEvent,
    LinkSession,
    LinkShaping,
    LinkStatistics,
    MapAnnouncer,
    MapRequest,
    Message,
    NativeCodec,
    PacketRecord,
    RefusalLog,
    Refused,
    SessionOpened,
    Side,
    StampAge,
    ThesisCodec,
    VideoCodec,
    VideoFeedback,
    VideoFrame,
    ZenohBus,
    parse_transport_url,
)
from freelook.maps import World, builtin_worlds
from freelook.robot._delay import feed_round_trips, feed_sight
from freelook.robot._program import RobotProgram
from freelook.robot._radio import RadioBudget
from freelook.robot._video import UNSHAPED_VIDEO_RATE, InterStream, VideoStream, _jpeg_frame
from freelook.runtime import RealtimeRuntime
from freelook.video import AvCamera

if TYPE_CHECKING:  # recording (mcap and its schemas) loads only when a recorder is given
    from freelook.record import BackgroundRecorder

__all__ = ["ROBOT_STATION", "RobotServer", "ServerOptions"]

log = logging.getLogger(__name__)
ROBOT_STATION = 100
MAP_ANNOUNCE_PERIOD = 2.0  # s between map announcements (and one when a session opens)
#: s between the announcements of the modes the robot never enters (and one when a session
#: opens): a station that missed one hears it again, and forgets one no longer said
REFUSAL_ANNOUNCE_PERIOD = 2.0

#: Work a hardware backend needs done while the robot runs (e.g. keeping a serial link).
BackendTask = Callable[[], Coroutine[Any, Any, None]]


@dataclass(frozen=True)
class ServerOptions:
    listen: str = "udp://127.0.0.1:47001"
    wire: str = "native"
    key: bytes | None = None
    allow_unauthenticated: bool = False
    camera: bool = True  # stream the camera, when the robot has one (native profile)
    camera_rate: float = 30.0
    peer: tuple[str, int] | None = None  # UDP: answer and hear only this address
    keys: KeyRing | None = None  # station keys and permissions (native); None: ``key`` for all
    video: VideoCodec = VideoCodec.JPEG  # the driving camera's codec (native profile)
    link_rate: float | None = None  # UDP: bit/s the link carries (None: not shaped)
    camera_url: str | None = None  # the driving camera read with PyAV instead of the HAL's
    #: s a motion command that states no expiry (the thesis profile's) may be old and act:
    #: its age from the sender's stamp, as :class:`~freelook.link.StampAge` measures it
    command_max_age: float | None = None
    shaping: LinkShaping | None = None  # what this robot sends, delayed as a rehearsed link


class RobotServer:
    """Serves one robot program on a UDP or serial link."""

    def __init__(
        self,
        program: RobotProgram,
        runtime: RealtimeRuntime,
        options: ServerOptions,
        recorder: BackgroundRecorder | None = None,
        backend_tasks: Sequence[BackendTask] = (),
        bus: ZenohBus | None = None,
    ) -> None:
        """``bus``: a Zenoh session to serve a ``zenoh://`` listen URL on (shared by the
        robots of a fleet); None opens one from the URL."""
        self.program = program
        self.bus = bus
        self.config = program.config
        self.runtime = runtime
        self.options = options
        self.recorder = recorder
        self.backend_tasks = tuple(backend_tasks)
        self.codec: ThesisCodec | NativeCodec
        if options.wire == "thesis":
            self.codec = ThesisCodec()
        else:
            self.codec = NativeCodec(
                # with a keys file each station has its own key; this one signs nothing
                options.key or (secrets.token_bytes(32) if options.keys is not None else None),
                sender=ROBOT_STATION,
                allow_unauthenticated=options.allow_unauthenticated,
            )
        self.session = LinkSession(
            self.codec,
            framing=_framing(options.listen),
            spacing=self.config.link.robot_tx_spacing,
            periodic=self._telemetry,
            transmitting=options.wire != "thesis",
            obey_transmission_control=True,
            wire_offset=LinkDriver.wall_offset(runtime.now),
            on_packet=self._record,
            # native with a key: operators open sessions, each station with its own key
            role="robot" if self._sessions(options) else None,
            keys=options.keys,
        )
        # what the program keeps per station goes when the link forgets the station, and the
        # link never forgets the one holding control for another
        core = program.core
        self.session.on_forget = core.forget_station
        self.session.keep_station(lambda station: core.holds_control(station, runtime.now()))
        #: the delay rules, fed the round trips the link measures (their cap goes out)
        self.delay_rules = feed_round_trips(self.session, core)
        feed_sight(self.session, core)
        # the native profile tells operators the robot's map (a built-in world by its name)
        robot_map = program.robot_map
        self.map = (
            _announcer(robot_map)
            if robot_map is not None and isinstance(self.codec, NativeCodec)
            else None
        )
        self._map_world = robot_map  # the map announced (the program's may change)
        self._map_announced = -MAP_ANNOUNCE_PERIOD
        self._refusals_announced = -REFUSAL_ANNOUNCE_PERIOD
        #: packets refused for want of a session, logged per source at a bounded rate
        self.refusals = RefusalLog()
        self._ages = StampAge()  # commands' ages, for ``command_max_age``
        self.driver: LinkDriver | None = None
        self.radio: RadioBudget | None = None  # a serial radio's bandwidth, shared out
        self.skipped_frames = 0
        #: frames each camera stream left out for a radio's budget, and frames it sent
        self.skipped_by_stream: dict[int, int] = {}
        self.sent_by_stream: dict[int, int] = {}
        #: streams sent with an inter-frame codec, by stream id
        self.inter: dict[int, InterStream] = {}
        self.camera_source: AvCamera | None = None  # ``camera_url``, opened by run()
        #: renders and encodes the JPEG cameras' frames, one at a time, off the event loop
        self._camera_thread: ThreadPoolExecutor | None = None
        self.ready = asyncio.Event()
        self.local_address: tuple[str, int] | None = None

    @staticmethod
    def _sessions(options: ServerOptions) -> bool:
        return options.wire == "native" and (options.key is not None or options.keys is not None)

    @property
    def stats(self) -> LinkStatistics:
        """Statistics of what this end received."""
        return self.session.stats

    async def run(self) -> None:
        url = parse_transport_url(self.options.listen)
        if self.options.camera_url is not None and self.camera_source is None:
            # opening a network camera may take seconds: not on the event loop
            loop = asyncio.get_running_loop()
            self.camera_source = await loop.run_in_executor(None, AvCamera, self.options.camera_url)
        options, codec = self.options, self.codec
        endpoint = await url.transport.open(
            url,
            Side(
                "robot",
                # what cannot be a packet never leaves the kernel
                kernel_filter=(codec.sync, codec.min_length) if codec.sync_offset == 0 else None,
                peer=options.peer,
                link_rate=options.link_rate,
                bus=self.bus,
                keys=options.keys,
                key=options.key,
                model=self.config.name,
                wire=options.wire,
            ),
        )
        self.local_address = endpoint.local_address
        rate = endpoint.link_rate
        if rate is not None:
            self.radio = self._budget_for(rate.rate, serial=rate.stream)
            if rate.stream and self.map is not None:  # map chunks share video's part of it
                self.map.rate = self.map.burst = max(0.0, self.radio.video_rate / MAP_CHUNK) / 4
        self.driver = LinkDriver(
            self.session, endpoint, self.runtime.now, self._on_event, self.options.shaping
        )
        tasks = [
            asyncio.create_task(self.runtime.run(), name="runtime"),
            asyncio.create_task(self.driver.run(), name="link"),
            *(asyncio.create_task(task(), name="hardware") for task in self.backend_tasks),
        ]
        streams = self._video_streams()
        if streams and self.radio is not None and self.radio.video_rate <= 0:
            log.warning("video off: a radio at %d baud carries only telemetry", url.baud)
            streams = []
        inter = self.options.video != VideoCodec.JPEG
        if streams and not inter:
            self._camera_thread = ThreadPoolExecutor(1, thread_name_prefix="freelook-cameras")
        for stream in streams:  # every camera with the inter-frame codec, or every one as JPEG
            video = self._video_inter(stream, len(streams)) if inter else self._video(stream)
            tasks.append(asyncio.create_task(video, name=f"video {stream.stream}"))
        self.ready.set()
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                task.result()  # a backend that failed ends the server with its error
        finally:
            self.runtime.stop()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if self._camera_thread is not None:
                self._camera_thread.shutdown(wait=True)  # its frame in hand, then the cameras
            self.program.close()
            endpoint.close()
            if self.camera_source is not None:
                self.camera_source.close()

    def _budget_for(self, rate: float, serial: bool) -> RadioBudget:
        """Telemetry first, then video with what is left of a radio's bandwidth (``rate``:
        baud on a serial line, bit/s on a rate-limited UDP link)."""
        config = self.config
        beams = config.laser.beams if config.laser and self.program.hardware.laser else 0
        rings = len(config.sonar.front_deg + config.sonar.rear_deg) if config.sonar else 0
        # the size of a full report, whatever the sensors hold yet
        sample = dataclasses.replace(
            self.program.core.telemetry(0.0), laser=(1.0,) * beams, sonar=(1.0,) * rings
        )
        codec = (
            ThesisCodec()
            if isinstance(self.codec, ThesisCodec)
            else NativeCodec(bytes(32), sender=ROBOT_STATION)  # same size, no sequence used
        )
        size = len(codec.encode(sample, 0.0))
        if serial:
            budget = RadioBudget.for_baud(int(rate), size, self.session.spacing)
        else:
            budget = RadioBudget.for_rate(rate, size, self.session.spacing)
        self.session.spacing = budget.telemetry_spacing
        return budget

    # -- the link ----------------------------------------------------------------------------

    def _telemetry(self, now: float) -> list[Message]:
        core = self.program.core
        core.link_stats = self.session.stats.report(now)
        # stamped on the wall clock like everything else that leaves the robot
        delay = self.delay_rules[0] if self.delay_rules else None
        cap = None if delay is None else (delay.cap, delay.round_trip)
        telemetry = core.telemetry(now)
        out: list[Message] = [
            dataclasses.replace(telemetry, stamp=now + self.session.wire_offset, speed_cap=cap)
        ]
        robot_map = self.program.robot_map
        if robot_map is not self._map_world and isinstance(self.codec, NativeCodec):
            # the robot's own map changed (a ROS map followed): announced at once
            self._map_world = robot_map
            self.map = _announcer(robot_map) if robot_map is not None else None
            self._map_announced = -MAP_ANNOUNCE_PERIOD
        if self.map is not None and now - self._map_announced >= MAP_ANNOUNCE_PERIOD:
            self._map_announced = now
            out.append(self.map.info)
        native = isinstance(self.codec, NativeCodec)  # the thesis profile carries no refusal
        if native and now - self._refusals_announced >= REFUSAL_ANNOUNCE_PERIOD:
            self._refusals_announced = now
            out.extend(core.standing_refusals())
        return out

    def _on_event(self, event: LinkEvent) -> None:
        if isinstance(event, Refused):
            line = self.refusals.note(event.source, event.reason, event.error, event.now)
            if line is not None:
                log.warning("%s", line)
            return
        if isinstance(event, SessionOpened):
            # a new station hears of the map and of the modes this robot never enters at once
            if self.map is not None:
                self._send(self.map.info)
            for refusal in self.program.core.standing_refusals():
                self._send(refusal)
            return
        if not isinstance(event, Accepted):
            return  # counted and recorded by the session
        message = event.message
        if isinstance(message, ClockEcho):  # the round trip's, taken by the session
            return
        if isinstance(message, VideoFeedback):  # any station in session: its own view
            inter = self.inter.get(message.stream)
            if inter is not None:
                inter.on_feedback(message, event.now)
            return
        if isinstance(message, MapRequest):
            # the map is read-only: any station in session may have it, from its own budget
            sender = event.decoded.sender
            for chunk in self.map.answer(message, event.now, sender) if self.map else []:
                self._send(chunk)
            return
        expires = event.decoded.expires  # on the wire's clock: the runtime's plus the offset
        if expires is not None:
            expires -= self.session.wire_offset
        elif self.options.command_max_age is not None and type(message) in EXPIRING_COMMANDS:
            decoded = event.decoded
            age = self._ages.age(decoded.sender, decoded.stamp, event.now)
            expires = event.now - age + self.options.command_max_age
        for reply in self.program.send(message, event.decoded.sender, event.permissions, expires):
            self._send(reply)
        notices = self.program.core.log.notices
        while notices:
            log.warning("%s", notices.popleft())

    def _send(self, message: Message) -> None:
        if self.driver is not None:
            self.driver.send(message)

    def _record(self, record: PacketRecord) -> None:
        if self.recorder is None:
            return
        wire, offset = self.codec.name, self.session.wire_offset
        self.recorder.submit(
            lambda r: r.link_packet("operator_to_robot", record, wire=wire, clock_offset=offset)
        )

    # -- video -------------------------------------------------------------------------------

    def _video_streams(self) -> list[VideoStream]:
        """The cameras to send (native profile only): the driving camera as stream 0 at the
        server's camera rate, each of the config's ``[[cameras]]`` the hardware has at its own."""
        hardware, config = self.program.hardware, self.config
        if not self.options.camera or not isinstance(self.codec, NativeCodec):
            return []
        streams = []
        camera = self.camera_source or hardware.camera  # a --camera replaces the HAL's images
        if camera is not None:
            quality = config.camera.jpeg_quality
            streams.append(VideoStream(0, camera, self.options.camera_rate, quality))
        for cam in config.cameras:
            device = hardware.stream_cameras.get(cam.stream)
            if device is not None:
                layout = FrameLayout.SIDE_BY_SIDE if cam.stereo else FrameLayout.MONO
                size = (cam.frame_width, cam.height)
                streams.append(
                    VideoStream(cam.stream, device, cam.rate_hz, cam.jpeg_quality, layout, size)
                )
        return streams

    async def _video_inter(self, stream: VideoStream, streams: int) -> None:
        """One of ``streams`` cameras with an inter-frame codec (``robot/_video.py``): its
        bitrate from its share of the link's budget and the operators' reported loss."""
        if self.radio is not None:
            budget, shaped = self.radio.video_rate * 8 / streams, True
        else:
            budget, shaped = UNSHAPED_VIDEO_RATE, False
        width, height = stream.size or (self.config.camera.width, self.config.camera.height)
        if isinstance(stream.camera, AvCamera):
            width, height = stream.camera.size
        inter = InterStream(
            stream.stream,
            stream.camera,
            self.options.video,
            (width, height),
            stream.rate,
            budget,
            shaped=shaped,
            jpeg_quality=stream.jpeg_quality,
            layout=stream.layout,
        )
        self.inter[stream.stream] = inter

        def send(frame: VideoFrame) -> int:
            if self.driver is None:
                return 0
            self.sent_by_stream[frame.stream] = self.sent_by_stream.get(frame.stream, 0) + 1
            if frame.stream == 0:
                self.program.core.sight.frame_sent(self.runtime.now())
            return self.driver.send(frame)

        await inter.run(
            lambda: self.session.transmitting,
            self.runtime.now,
            lambda: self.session.wire_offset,
            send,
        )

    def _skipped(self, stream: VideoStream) -> None:
        """Count a frame of ``stream`` a radio's video budget had no room for."""
        self.skipped_frames += 1
        self.skipped_by_stream[stream.stream] = self.skipped_by_stream.get(stream.stream, 0) + 1

    async def _video(self, stream: VideoStream) -> None:
        """One camera at its own fixed rate; every stream shares a radio's video budget."""
        period = 1.0 / stream.rate
        frame_ids = itertools.count()  # each stream numbers its own frames
        room_at = 0.0  # when a radio's budget will have room for a frame like the last dropped
        loop = asyncio.get_running_loop()
        due = loop.time()
        while True:
            due += period  # a fixed rate: rendering and encoding time are not added on top
            delay = due - loop.time()
            if delay < -period:  # fell behind: skip frames rather than burst
                due = loop.time()
                delay = 0.0
            await asyncio.sleep(max(0.0, delay))
            if not self.session.transmitting:
                continue
            if loop.time() < room_at:
                # no frame is rendered nor encoded only to be dropped: on a slow radio most
                # would be, and the control cycle's event loop would wait for each
                self._skipped(stream)
                continue
            now = self.runtime.now()  # the capture's instant (both eyes of a pair share it)
            # rendered and encoded on the cameras' thread: the control cycle and the telemetry
            # go on meanwhile (a busy loop made a driver's telemetry late enough to be blind)
            encoded = await loop.run_in_executor(self._camera_thread, _jpeg_frame, stream)
            if encoded is None:
                continue
            jpeg, width, height = encoded
            if self.radio is not None and not self.radio.may_send_frame(loop.time(), len(jpeg)):
                self._skipped(stream)
                room_at = loop.time() + self.radio.wait_for(len(jpeg))
                continue
            frame = VideoFrame(
                next(frame_ids),
                now + self.session.wire_offset,
                width,
                height,
                jpeg,
                stream.stream,
                stream.layout,
            )
            if self.driver is not None:
                self.sent_by_stream[stream.stream] = self.sent_by_stream.get(stream.stream, 0) + 1
                if stream.stream == 0:
                    self.program.core.sight.frame_sent(now)
                sent = self.driver.send(frame)
                if self.radio is not None:
                    self.radio.spent(sent)


def _framing(listen: str) -> Literal["datagram", "stream"]:
    """How packets are framed on ``listen``'s transport (a URL that does not parse is refused
    when the server opens it)."""
    try:
        return parse_transport_url(listen).transport.framing
    except ConfigError:
        return "datagram"


def _announcer(robot_map: World) -> MapAnnouncer | None:
    """The robot's map for the link; a built-in world goes by its name too. A map larger than
    a station would accept is not announced (give the station the map file instead)."""
    rows, cols = robot_map.shape
    if rows * cols > MAX_MAP_CELLS:
        log.warning(
            "the map (%d × %d cells) is larger than the link carries (%d cells): "
            "stations need it as a file (--map)",
            cols,
            rows,
            MAX_MAP_CELLS,
        )
        return None
    name = robot_map.source if robot_map.source in builtin_worlds() else ""
    return MapAnnouncer(robot_map, name=name)

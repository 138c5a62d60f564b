"""The operator station: holds control of a robot, runs operator-side modes, feeds browsers.

It talks to the robot over the link (either profile, UDP or serial), re-sends the newest drive
command at the operator's transmission spacing (the robot's watchdog wants a steady stream),
sends a zero command the moment every input is released, runs the thesis keyboard and the
operator-side trajectory tracker, and forwards telemetry and video to every browser through a
latest-value slot each, so a slow browser never stalls the control path.
"""

from __future__ import annotations

import asyncio
import base64
import io
import logging
import math
import time
from typing import Any

import numpy as np

from freelook.config import RobotConfig
from freelook.control import (
    KeyboardDrive,
    SampledPath,
    TrackingController,
    ellipse_points,
    limit_velocity,
)
from freelook.errors import ProtocolError
from freelook.link._decoded import Decoded
from freelook.link._errors import rejection_reason
from freelook.link._fragment import FrameAssembler
from freelook.link._messages import (
    ControlGrant,
    ControlRequest,
    EStop,
    FreeLookCommand,
    Heartbeat,
    LinearDriveStart,
    LinearDriveStop,
    Message,
    PositionReport,
    Relocalize,
    SetTransmission,
    SetTransmissionSpacing,
    TankCommand,
    Telemetry,
    TrajectoryStart,
    TrajectoryStop,
    VelocityCommand,
    VideoFragment,
)
from freelook.link._native import NativeCodec
from freelook.link._stats import LinkStatistics
from freelook.link._stats_report import LinkStatsReport
from freelook.link._stream import StreamDecoder
from freelook.link._thesis import ThesisCodec
from freelook.link._transport import SerialEndpoint, TransportUrl, UdpEndpoint
from freelook.maps import World
from freelook.record import BackgroundRecorder
from freelook.web import BrowserSlot, encode_frame, encode_json

__all__ = ["OperatorStation"]

log = logging.getLogger(__name__)
OPERATOR_STATION = 1


def _map_png(world: World) -> str:
    from PIL import Image

    grid = world.obstacles()
    image = np.where(np.flipud(grid), 30, 235).astype(np.uint8)
    rgba = np.dstack([image, image, image, np.where(np.flipud(grid), 255, 60).astype(np.uint8)])
    buffer = io.BytesIO()
    Image.fromarray(rgba, "RGBA").save(buffer, format="PNG", optimize=True)
    return base64.b64encode(buffer.getvalue()).decode()


class OperatorStation:
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
        recorder: BackgroundRecorder | None = None,
        state_rate: float = 20.0,
    ) -> None:
        self.config = config
        self.world = world
        # a bare (host, port) is a UDP peer
        self.robot = (
            robot_address
            if isinstance(robot_address, TransportUrl)
            else TransportUrl("udp", *robot_address)
        )
        self.wire = wire
        self.codec: ThesisCodec | NativeCodec = (
            ThesisCodec()
            if wire == "thesis"
            else NativeCodec(key, sender=station, allow_unauthenticated=allow_unauthenticated)
        )
        self.station = station
        self.authority = authority
        self.recorder = recorder
        self.state_period = 1.0 / state_rate
        self.stats = LinkStatistics()
        self.assembler = FrameAssembler()
        limits = config.limits
        self.keyboard = KeyboardDrive(
            limits.keyboard_speed_step,
            math.radians(limits.keyboard_turn_step_deg),
            limits.max_speed,
            math.radians(limits.max_turn_rate_deg),
        )
        self.mode = "free_look"
        self.drive_command: Message | None = None
        self.estop = False
        self.tx_enabled = True
        self.tx_spacing = config.link.operator_tx_spacing
        self.robot_tx_enabled = True
        self.robot_tx_spacing = config.link.robot_tx_spacing
        self.telemetry: Telemetry | None = None
        self.position: PositionReport | None = None
        self.last_rx: float | None = None
        self.in_control = False
        self.reference_path: list[list[float]] = []
        self._operator_path: SampledPath | None = None
        self._operator_t0 = 0.0
        self.tracker = TrackingController()
        self._slots: set[BrowserSlot] = set()
        self._endpoint: UdpEndpoint | SerialEndpoint | None = None
        self._map_png = _map_png(world) if world is not None else None
        self._distance: np.ndarray | None = None
        self.sent = 0
        self.painted: list[tuple[float, float]] = []  # (render stamp, paint report time)
        self.input_log: list[tuple[float, str]] = []

    # -- link --------------------------------------------------------------------------------

    def clock(self) -> float:
        return time.time()

    def send(self, message: Message) -> None:
        if self._endpoint is None:
            return
        try:
            packet = self.codec.encode(message, self.clock())
        except ProtocolError:
            return  # the thesis profile cannot carry this message
        self._endpoint.send(packet)
        self.sent += 1
        self.stats.on_sent(time.monotonic())

    async def run(self) -> None:
        """Talk to the robot: over UDP to an address, or over a serial radio (``serial``)."""
        robot = self.robot
        if robot.scheme == "serial":
            self._endpoint = SerialEndpoint(robot.device, robot.baud)
        else:
            remote = (robot.host, robot.port)
            self._endpoint = await UdpEndpoint.open(("127.0.0.1", 0), remote=remote)
        tasks = [
            asyncio.create_task(self._receive()),
            asyncio.create_task(self._transmit()),
            asyncio.create_task(self._publish()),
        ]
        if isinstance(self.codec, NativeCodec):
            self.send(ControlRequest(self.station, self.authority))
        else:
            self.send(SetTransmission(True))
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            self._endpoint.close()

    async def _receive(self) -> None:
        assert self._endpoint is not None
        # a serial radio is a byte stream: packets are found by their sync bytes
        stream = StreamDecoder(self.codec) if isinstance(self._endpoint, SerialEndpoint) else None
        while True:
            data = await self._endpoint.recv(timeout=0.2)
            if data is None:
                continue
            if stream is None:
                self._on_packet(data)
                continue
            for event in stream.feed(data):
                if event.decoded is not None:
                    self._on_decoded(event.decoded, event.data, time.monotonic())
                elif event.error is not None:
                    self.stats.on_rejected(rejection_reason(event.error), time.monotonic())
                    self._record(event.data, None, False, type(event.error).__name__)

    def _on_packet(self, data: bytes) -> None:
        now = time.monotonic()
        try:
            decoded = self.codec.decode(data)
        except ProtocolError as err:
            self.stats.on_rejected(rejection_reason(err), now)
            self._record(data, None, False, type(err).__name__)
            return
        self._on_decoded(decoded, data, now)

    def _on_decoded(self, decoded: Decoded, data: bytes, now: float) -> None:
        self.last_rx = now
        self.stats.on_received(decoded.stream, decoded.sequence, None, now, decoded.sender)
        message = decoded.message
        self._record(data, decoded, True, type(message).__name__)
        if isinstance(message, Telemetry):
            self.telemetry = message
            self._record_streams(message)
        elif isinstance(message, PositionReport):
            self.position = message
        elif isinstance(message, ControlGrant):
            self.in_control = message.station == self.station
        elif isinstance(message, VideoFragment):
            frame = self.assembler.add(message)
            if frame is not None:
                payload = encode_frame(frame.stamp, frame.frame_id, frame.jpeg)
                for slot in list(self._slots):
                    slot.offer_frame(payload)
                if self.recorder is not None:
                    self.recorder.submit("image", frame.stamp, frame.jpeg)

    def _record(self, data: bytes, decoded: Decoded | None, accepted: bool, kind: str) -> None:
        if self.recorder is None:
            return
        now = self.clock()
        self.recorder.submit(
            "packet",
            "robot_to_operator",
            data,
            send_time=decoded.stamp if decoded is not None else now,
            receive_time=now,
            wire=self.codec.name,
            accepted=accepted,
            kind=kind,
            decoded=None,
            stream=decoded.stream if decoded is not None else 0,
            sequence=(decoded.sequence or 0) if decoded is not None else 0,
        )

    def _record_streams(self, t: Telemetry) -> None:
        rec = self.recorder
        if rec is None:
            return
        stamp = t.stamp
        rec.submit("cmd_vel", stamp, t.cmd_v, t.cmd_omega)
        rec.submit("odom", stamp, *t.odom, t.v, t.omega)
        rec.submit("odom", stamp, *t.pose, t.v, t.omega, topic="/localization", frame_id="map")
        if t.laser:
            rec.submit(
                "scan",
                stamp,
                t.laser,
                angle_min=t.laser_angle_min,
                angle_increment=t.laser_angle_increment,
                range_min=0.02,
                range_max=t.laser_range_max,
            )
        cone = math.radians(15.0)
        for index, distance in enumerate(t.sonar):
            rec.submit(
                "sonar", stamp, index, distance, field_of_view=cone, min_range=0.02, max_range=5.0
            )
        rec.submit("tf", stamp, *t.pose, "map", "base_link")
        rec.submit("mode", stamp, t.mode.name.lower(), t.estop, str(t.controller))
        if t.safety_flags:
            rec.submit(
                "safety_event",
                stamp,
                str(t.safety_flags),
                f"zone {t.safety_zone}",
                t.safety_zone,
                t.safety_scale,
            )
        link = t.link
        rec.submit(
            "link_stats",
            stamp,
            "operator_to_robot",
            {
                "packets_received": link.packets_received,
                "packets_lost": link.packets_lost,
                "duplicates": link.duplicates,
                "reordered": link.reordered,
                "crc_failures": link.crc_failures,
                "auth_failures": link.auth_failures,
                "rx_rate_hz": link.rx_rate_hz,
                "tx_rate_hz": link.tx_rate_hz,
                "drop_percent": link.drop_percent,
                "latency_s": link.latency_s,
            },
        )
        if self.reference_path and self.telemetry is not None and self._reference_now():
            ref = self._reference_now()
            if ref is not None:
                rec.submit("reference", stamp, *ref)

    def _reference_now(self) -> tuple[float, float, float, float, float] | None:
        if self._operator_path is not None:
            r = self._operator_path.at(time.monotonic() - self._operator_t0)
            return (r.x, r.y, r.theta, r.v, r.omega)
        return None

    async def _transmit(self) -> None:
        """Re-send the newest command every spacing; heartbeats keep control alive."""
        beat = 0
        while True:
            await asyncio.sleep(self.tx_spacing)
            if not self.tx_enabled:
                continue
            beat += 1
            if self._operator_path is not None:
                self._operator_step()
            command = self.drive_command
            if command is not None:
                self.send(command)
            else:
                self.send(Heartbeat())
            if isinstance(self.codec, NativeCodec) and beat % 20 == 0:
                self.send(ControlRequest(self.station, self.authority))

    def _operator_step(self) -> None:
        path = self._operator_path
        t = self.telemetry
        if path is None or t is None:
            return
        elapsed = time.monotonic() - self._operator_t0
        if elapsed > path.duration:
            self._operator_path = None
            self.drive_command = VelocityCommand(0.0, 0.0)
            return
        ref = path.at(elapsed)
        v, omega = self.tracker.command(ref, *t.pose)
        limits = self.config.limits
        v, omega = limit_velocity(
            v, omega, limits.max_speed, math.radians(limits.max_turn_rate_deg)
        )
        self.drive_command = VelocityCommand(v, omega)

    # -- browsers ----------------------------------------------------------------------------

    def attach(self, slot: BrowserSlot) -> None:
        self._slots.add(slot)
        self.tx_enabled = True

    def detach(self, slot: BrowserSlot) -> None:
        self._slots.discard(slot)
        if not self._slots:
            # the last browser went away: stop sending, and the robot's watchdog stops it
            self.drive_command = None
            self._operator_path = None
            self.tx_enabled = False

    def hello(self) -> dict[str, Any]:
        cfg = self.config
        fp = cfg.footprint
        pt = cfg.pan_tilt
        world = self.world
        message: dict[str, Any] = {
            "type": "hello",
            "robot": {
                "name": cfg.name,
                "footprint": {
                    "length": fp.length,
                    "width": fp.width,
                    "center_forward": fp.center_forward,
                },
                "zones": [z.boundary for z in cfg.safety.zones],
                "camera_mount": [pt.mount_forward, pt.mount_left] if pt else [0.0, 0.0],
                "has_pan": bool(pt and pt.has_pan),
            },
            "mode": self.mode,
            "robot_tx_ms": self.robot_tx_spacing * 1000,
            "operator_tx_ms": self.tx_spacing * 1000,
            "wire": self.wire,
        }
        if world is not None and self._map_png is not None:
            rows, cols = world.shape
            message["map"] = {
                "png": self._map_png,
                "origin": list(world.origin),
                "resolution": world.resolution,
                "width": cols,
                "height": rows,
            }
        return message

    def state(self) -> dict[str, Any]:
        t = self.telemetry
        now = time.monotonic()
        connected = self.last_rx is not None and now - self.last_rx < 1.0
        down = self.stats.report(now)
        state: dict[str, Any] = {
            "type": "state",
            "mode": self.mode,
            "estop": self.estop,
            "link": {
                "connected": connected,
                "down": _stats(down),
                "up": _stats(t.link) if t is not None else None,
            },
            "in_control": self.in_control,
            "controller": f"station {t.controller}"
            if t is not None and t.controller
            else ("this station" if self.in_control else "none"),
            "robot_tx": {
                "enabled": self.robot_tx_enabled,
                "spacing_ms": self.robot_tx_spacing * 1000,
            },
            "operator_tx": {"enabled": self.tx_enabled, "spacing_ms": self.tx_spacing * 1000},
            "reference": self.reference_path,
        }
        if t is not None:
            state.update(
                {
                    "t": t.stamp,
                    "pose": {"x": t.pose[0], "y": t.pose[1], "theta": t.pose[2]},
                    "odom": {"x": t.odom[0], "y": t.odom[1], "theta": t.odom[2]},
                    "v": t.v,
                    "omega": t.omega,
                    "cmd": {"v": t.cmd_v, "omega": t.cmd_omega},
                    "pan": t.pan,
                    "tilt": t.tilt,
                    "robot_mode": t.mode.name.lower(),
                    "estop": t.estop or self.estop,
                    "localizing": t.localizing,
                    "safety": {
                        "zone": t.safety_zone if t.safety_zone >= 0 else None,
                        "scale": t.safety_scale,
                        "reasons": [
                            f.name.lower()
                            for f in type(t.safety_flags)
                            if f and f in t.safety_flags and f.name
                        ],
                    },
                }
            )
            if t.laser:
                mount = self.config.laser
                state["laser"] = {
                    "angle_min": t.laser_angle_min,
                    "angle_increment": t.laser_angle_increment,
                    "range_max": t.laser_range_max,
                    "ranges": [round(r, 3) for r in t.laser],
                    "mount": [mount.mount_forward, mount.mount_left] if mount else [0.0, 0.0],
                }
            if t.sonar and self.config.sonar is not None:
                sonar = self.config.sonar
                bearings = [math.radians(b) for b in sonar.front_deg + sonar.rear_deg]
                state["sonar"] = {
                    "ranges": [round(r, 3) for r in t.sonar],
                    "bearings": bearings,
                    "origins": [
                        [sonar.ring_radius * math.cos(b), sonar.ring_radius * math.sin(b)]
                        for b in bearings
                    ],
                    "cone": math.radians(sonar.cone_deg),
                    "range_max": sonar.range_max,
                }
        elif self.position is not None:
            p = self.position
            state.update(
                {"pose": {"x": p.x, "y": p.y, "theta": p.theta}, "v": p.v, "omega": p.omega}
            )
        return state

    async def _publish(self) -> None:
        while True:
            await asyncio.sleep(self.state_period)
            if not self._slots:
                continue
            payload = encode_json(self.state())
            for slot in list(self._slots):
                slot.offer_state(payload)

    async def handle_browser(self, message: dict[str, Any], slot: BrowserSlot) -> None:
        kind = message.get("type")
        cfg = self.config
        limits = cfg.limits
        if kind == "axes":
            self._axes(message)
        elif kind == "key":
            key = str(message.get("key"))
            if key in ("up", "down", "left", "right", "space"):
                self.mode = "keyboard"
                self._operator_path = None
                v, omega = self.keyboard.press(key)  # type: ignore[arg-type]
                self.drive_command = VelocityCommand(v, omega)
                self.send(self.drive_command)
        elif kind == "mode":
            mode = str(message.get("mode"))
            if mode in ("keyboard", "tank", "free_look", "linear", "trajectory"):
                self.mode = mode
                self._operator_path = None
                self.keyboard.press("space")
                zero: Message = VelocityCommand(0.0, 0.0)
                if mode == "tank":
                    zero = TankCommand(0.0, 0.0)
                elif mode == "free_look":
                    zero = FreeLookCommand(0.0, 0.0, 0.0)
                self.drive_command = zero
                self.send(zero)
        elif kind == "relocalize":
            self.send(Relocalize())
        elif kind == "estop":
            self.estop = bool(message.get("engaged"))
            self.send(EStop(self.estop))
            if self.estop:
                self._operator_path = None
                self.drive_command = None
        elif kind == "linear":
            if message.get("action") == "start":
                x0, x1 = float(message.get("x0", 0.0)), float(message.get("x1", 3.0))
                self.mode = "linear"
                self.drive_command = None
                self.send(LinearDriveStart(x0, x1, limits.linear_max_speed))
            else:
                self.send(LinearDriveStop())
        elif kind == "trajectory":
            self._trajectory(message)
        elif kind == "transmission":
            self._transmission(message)
        elif kind == "painted":
            stamp = message.get("stamp")
            if isinstance(stamp, int | float):
                self.painted.append((float(stamp), self.clock()))
                del self.painted[:-1000]

    def _axes(self, message: dict[str, Any]) -> None:
        cfg = self.config
        limits = cfg.limits
        pt = cfg.pan_tilt

        def axis(name: str) -> float:
            value = message.get(name, 0.0)
            return max(-1.0, min(1.0, float(value))) if isinstance(value, int | float) else 0.0

        forward, left, turn = axis("forward"), axis("left"), axis("turn")
        pan, tilt = axis("pan"), axis("tilt")
        v_max = limits.max_speed
        w_max = math.radians(limits.max_turn_rate_deg)
        pan_max = pt.max_pan_rate if pt else 0.0
        tilt_max = math.radians(pt.max_tilt_rate_deg) if pt else 0.0
        self._operator_path = None
        mode = message.get("mode", self.mode)
        command: Message
        if mode == "tank":
            self.mode = "tank"
            command = TankCommand(forward * v_max, turn * w_max, pan * pan_max, tilt * tilt_max)
        else:
            self.mode = "free_look"
            command = FreeLookCommand(forward * v_max, left * v_max, turn * w_max, tilt * tilt_max)
        self.drive_command = command
        self.input_log.append((self.clock(), type(command).__name__))
        del self.input_log[:-100]
        self.send(command)  # at once; the transmit loop repeats it

    def _trajectory(self, message: dict[str, Any]) -> None:
        if message.get("action") != "start":
            self._operator_path = None
            self.reference_path = []
            self.drive_command = VelocityCommand(0.0, 0.0)
            self.send(TrajectoryStop())
            return
        pose = self.telemetry.pose if self.telemetry is not None else (0.0, 0.0, 0.0)
        if message.get("preset") == "waypoints":
            raw = message.get("waypoints") or []
            pts = [
                (float(p[0]), float(p[1]))
                for p in raw
                if isinstance(p, list | tuple) and len(p) == 2
            ]
            pts = [(pose[0], pose[1]), *pts]
            if len(pts) < 3:
                pts.insert(1, ((pts[0][0] + pts[-1][0]) / 2, (pts[0][1] + pts[-1][1]) / 2))
            distances = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(np.array(pts).T)))])
            t = distances / 0.25
            xs, ys = [p[0] for p in pts], [p[1] for p in pts]
            periodic = False
        else:
            t_arr, ex, ey = ellipse_points(101)
            xs, ys = self._place_ellipse(pose, ex, ey)
            t = t_arr
            periodic = True
        self.reference_path = [[x, y] for x, y in zip(xs, ys, strict=True)]
        self.mode = "trajectory"
        if message.get("side") == "operator":
            self._operator_path = SampledPath(t, xs, ys, periodic=periodic)
            self._operator_t0 = time.monotonic()
            self.send(VelocityCommand(0.0, 0.0))
        else:
            self._operator_path = None
            self.drive_command = None
            self.send(
                TrajectoryStart(tuple(float(v) for v in t), tuple(xs), tuple(ys), periodic=periodic)
            )

    def _place_ellipse(
        self, pose: tuple[float, float, float], ex: np.ndarray, ey: np.ndarray
    ) -> tuple[list[float], list[float]]:
        """The thesis ellipse starting at the robot, tangent to its heading, turning left or
        right: whichever keeps farther from the map's obstacles."""
        best: tuple[float, list[float], list[float]] | None = None
        for side in (1.0, -1.0):  # centre to the left (counter-clockwise) or to the right
            rot = pose[2] - side * math.pi / 2
            c, s = math.cos(rot), math.sin(rot)
            cx, cy = pose[0] - c * 1.8, pose[1] - s * 1.8
            xs = [cx + c * x - s * side * y for x, y in zip(ex, ey, strict=True)]
            ys = [cy + s * x + c * side * y for x, y in zip(ex, ey, strict=True)]
            clearance = self._clearance(xs, ys)
            if best is None or clearance > best[0]:
                best = (clearance, xs, ys)
        assert best is not None
        return best[1], best[2]

    def _clearance(self, xs: list[float], ys: list[float]) -> float:
        """Smallest distance from the path to an obstacle (inf without a map)."""
        if self.world is None:
            return math.inf
        if self._distance is None:
            from scipy.ndimage import distance_transform_edt

            self._distance = distance_transform_edt(~self.world.obstacles()) * self.world.resolution
        worst = math.inf
        rows, cols = self.world.shape
        for x, y in zip(xs, ys, strict=True):
            i, j = self.world.cell_of(x, y)
            inside = 0 <= i < rows and 0 <= j < cols
            worst = min(worst, float(self._distance[i, j]) if inside else 0.0)
        return worst

    def _transmission(self, message: dict[str, Any]) -> None:
        side = message.get("side")
        enabled = message.get("enabled")
        spacing = message.get("spacing_ms")
        if side == "robot":
            if isinstance(enabled, bool):
                self.robot_tx_enabled = enabled
                self.send(SetTransmission(enabled))
            if isinstance(spacing, int | float) and spacing > 0:
                self.robot_tx_spacing = max(0.005, min(2.0, spacing / 1000))
                self.send(SetTransmissionSpacing(self.robot_tx_spacing))
        elif side == "operator":
            if isinstance(enabled, bool):
                self.tx_enabled = enabled
            if isinstance(spacing, int | float) and spacing > 0:
                self.tx_spacing = max(0.005, min(2.0, spacing / 1000))


def _stats(report: LinkStatsReport) -> dict[str, float]:
    return {
        "rx_rate_hz": report.rx_rate_hz,
        "tx_rate_hz": report.tx_rate_hz,
        "drop_percent": report.drop_percent,
        "received": report.packets_received,
        "lost": report.packets_lost,
    }

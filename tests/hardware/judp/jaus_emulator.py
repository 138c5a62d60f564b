"""A JAUS robot for the tests: one JUDP component on loopback UDP.

Written from the layouts in docs/jaus.md with struct alone, independently of
``freelook.judp`` (its own framing, scaled integers and message bodies), so the two check each
other. It answers QueryIdentification and QueryServices, arbitrates Access Control (authority,
a control timeout after which the controller is dropped with RejectControl), runs Management
(Standby once control is granted, Ready after Resume), obeys SetWrenchEffort and
SetVelocityCommand from its controller while Ready, integrates its own pose at a fixed 10 ms
step in JAUS's frame (x forward, y right, yaw clockwise) and answers QueryLocalPose and
QueryVelocityState. Its own watchdog stops it when no drive command came for 0.5 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import struct
from dataclasses import dataclass, field

STEP = 0.01  # s
WATCHDOG = 0.5  # s without a drive command from the controller: stop

ACCESS = "urn:jaus:jss:core:AccessControl"
MANAGEMENT = "urn:jaus:jss:core:Management"
PRIMITIVE_DRIVER = "urn:jaus:jss:mobility:PrimitiveDriver"
VELOCITY_DRIVER = "urn:jaus:jss:mobility:VelocityStateDriver"
POSE_SENSOR = "urn:jaus:jss:mobility:LocalPoseSensor"
VELOCITY_SENSOR = "urn:jaus:jss:mobility:VelocityStateSensor"
MANIPULATOR = "urn:jaus:jss:manipulator:PrimitiveManipulator"
JOINT_SENSOR = "urn:jaus:jss:manipulator:ManipulatorJointPositionSensor"

REQUEST, RELEASE, CONFIRM, REJECT = 0x000D, 0x000E, 0x000F, 0x0010
RESUME, QUERY_STATUS, REPORT_STATUS = 0x0004, 0x2002, 0x4002
QUERY_TIMEOUT, REPORT_TIMEOUT, QUERY_CONTROL, REPORT_CONTROL = 0x2003, 0x4003, 0x200D, 0x400D
QUERY_ID, REPORT_ID, QUERY_SERVICES, REPORT_SERVICES = 0x2B00, 0x4B00, 0x2B03, 0x4B03
WRENCH, VELOCITY_COMMAND, JOINT_EFFORT = 0x0405, 0x0415, 0x0601
QUERY_JOINTS, REPORT_JOINTS = 0x2602, 0x4602
QUERY_POSE, REPORT_POSE, QUERY_VELOCITY, REPORT_VELOCITY = 0x2403, 0x4403, 0x2404, 0x4404
STANDBY_STATE, READY_STATE = 2, 1


def scale(value: float, lower: float, upper: float, bits: int) -> int:
    steps = (1 << bits) - 1
    value = min(upper, max(lower, value))
    return round((value - lower) / (upper - lower) * steps)


def unscale(k: int, lower: float, upper: float, bits: int) -> float:
    return lower + k * (upper - lower) / ((1 << bits) - 1)


def velocity_x(body: bytes) -> float:
    """Velocity_X (m/s, JAUS frame) of a SetVelocityCommand's body: presence vector, command
    type, then X."""
    return unscale(struct.unpack_from("<I", body, 2)[0], -327.68, 327.67, 32)


def judp(dest: tuple[int, int, int], src: tuple[int, int, int], code: int, body: bytes) -> bytes:
    """One datagram: version 2, the general transport header (ids as subsystem, node,
    component; on the wire component, node, subsystem), the message and sequence 0."""
    payload = struct.pack("<H", code) + body
    header = struct.pack(
        "<BHBBBHBBH", 0, 14 + len(payload), 1, dest[2], dest[1], dest[0], src[2], src[1], src[0]
    )
    return bytes([2]) + header + payload + b"\0\0"


@dataclass
class Received:
    stamp: float
    source: tuple[int, int, int]
    code: int
    body: bytes


@dataclass
class JausEmulator:
    """The robot's state; :meth:`start` serves it on 127.0.0.1."""

    me: tuple[int, int, int] = (42, 1, 1)
    name: str = "M2P2"
    services: tuple[str, ...] = (ACCESS, MANAGEMENT, PRIMITIVE_DRIVER, VELOCITY_DRIVER, POSE_SENSOR)
    max_speed: float = 1.0  # m/s at 100 % effort
    max_turn_rate: float = math.pi / 2  # rad/s at 100 % effort
    control_timeout: int = 2  # s
    refuse_with: int | None = None  # a ConfirmControl code answered to every RequestControl
    silent: bool = False  # answers nothing (a robot that never answers discovery)
    answer_renewals: bool = True  # False: no RequestControl is answered while one controls
    reported_v: float | None = None  # what the velocity sensor says, if not the truth
    watchdog: float = WATCHDOG  # s; math.inf: a robot without a command timeout of its own
    x: float = 0.0  # JAUS frame: x forward, y right, yaw clockwise
    y: float = 0.0
    yaw: float = 0.0
    v: float = 0.0
    vy: float = 0.0
    yaw_rate: float = 0.0
    state: int = STANDBY_STATE
    controller: tuple[int, int, int] | None = None
    controller_authority: int = 0
    joints: list[float] = field(default_factory=list)  # the arm's true joint positions
    joint_speed: float = math.radians(15.0)  # rad/s at 100 % effort
    efforts: list[float] = field(default_factory=list)  # the efforts in force, %
    received: list[Received] = field(default_factory=list)
    malformed: int = 0
    port: int = 0
    _last_request: float = 0.0
    _last_drive: float = 0.0
    _pose_time: float = 0.0
    _peer: dict[tuple[int, int, int], tuple[str, int]] = field(default_factory=dict)
    _transport: asyncio.DatagramTransport | None = None
    _task: asyncio.Task[None] | None = None

    # -- the server -------------------------------------------------------------------------

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        emulator = self

        class Protocol(asyncio.DatagramProtocol):
            def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
                emulator.datagram(data, addr, loop.time())

        transport, _ = await loop.create_datagram_endpoint(
            Protocol, local_addr=("127.0.0.1", self.port)
        )
        self._transport = transport
        self.port = transport.get_extra_info("sockname")[1]
        self._task = asyncio.create_task(self._integrate())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._transport is not None:
            self._transport.close()

    def send_raw(self, data: bytes, to: tuple[int, int, int]) -> None:
        """Any bytes to a client the emulator has heard from (for hostile-input tests)."""
        assert self._transport is not None
        self._transport.sendto(data, self._peer[to])

    def codes_from(self, source: tuple[int, int, int], code: int) -> list[Received]:
        return [r for r in self.received if r.source == source and r.code == code]

    async def _integrate(self) -> None:
        loop = asyncio.get_running_loop()
        t = loop.time()
        while True:
            await asyncio.sleep(STEP)
            now = loop.time()
            if self.controller is not None and now - self._last_request > self.control_timeout:
                self.revoke(None)  # the controller went quiet: control times out
            if now - self._last_drive > self.watchdog:
                self.v = self.vy = self.yaw_rate = 0.0
                self.efforts = [0.0] * len(self.efforts)
            while t + STEP <= now:
                t += STEP
                for i, effort in enumerate(self.efforts[: len(self.joints)]):
                    self.joints[i] += effort / 100 * self.joint_speed * STEP
                self.x += (self.v * math.cos(self.yaw) - self.vy * math.sin(self.yaw)) * STEP
                self.y += (self.v * math.sin(self.yaw) + self.vy * math.cos(self.yaw)) * STEP
                self.yaw = math.remainder(self.yaw + self.yaw_rate * STEP, math.tau)
            self._pose_time = t  # the time the pose is integrated to

    @property
    def integrated_to(self) -> float:
        """The event loop's time the pose and the joints are integrated to."""
        return self._pose_time

    def revoke(self, new: tuple[int, int, int] | None, authority: int = 255) -> None:
        """Take control from the controller (RejectControl CONTROL_RELEASED) and give it to
        ``new`` (another client) or nobody; the robot stops and goes to Standby."""
        if self.controller is not None:
            self._reply(self.controller, REJECT, bytes([0]))
        self.controller, self.controller_authority = new, authority if new else 0
        self.v = self.vy = self.yaw_rate = 0.0
        self.state = STANDBY_STATE

    # -- messages ---------------------------------------------------------------------------

    def datagram(self, data: bytes, addr: tuple[str, int], now: float) -> None:
        if len(data) < 15 or data[0] != 2:
            self.malformed += 1
            return
        at = 1
        while at < len(data):
            if len(data) - at < 16:
                self.malformed += 1
                return
            kind, size, _, dc, dn, ds, sc, sn, ss = struct.unpack_from("<BHBBBHBBH", data, at)
            if kind != 0 or size < 16 or at + size > len(data):
                self.malformed += 1
                return
            (code,) = struct.unpack_from("<H", data, at + 12)
            body = data[at + 14 : at + size - 2]
            at += size
            source = (ss, sn, sc)
            if (ds, dn, dc) not in (self.me, (0xFFFF, 0xFF, 0xFF)):
                continue
            self._peer[source] = addr
            self.received.append(Received(now, source, code, body))
            if not self.silent:
                self._handle(source, code, body, now)

    def _reply(self, to: tuple[int, int, int], code: int, body: bytes) -> None:
        if self._transport is not None and to in self._peer:
            self._transport.sendto(judp(to, self.me, code, body), self._peer[to])

    def _handle(self, src: tuple[int, int, int], code: int, body: bytes, now: float) -> None:
        if code == QUERY_ID:
            name = self.name.encode()
            self._reply(src, REPORT_ID, struct.pack("<BHB", body[0], 10001, len(name)) + name)
        elif code == QUERY_SERVICES:
            out = struct.pack("<BBBBBB", 1, self.me[1], 1, self.me[2], 0, len(self.services))
            for uri in self.services:
                out += bytes([len(uri)]) + uri.encode() + bytes([1, 0])
            self._reply(src, REPORT_SERVICES, out)
        elif code == REQUEST:
            self._request(src, body[0], now)
        elif code == RELEASE and src == self.controller:
            self.controller = None
            self.v = self.vy = self.yaw_rate = 0.0
            self.state = STANDBY_STATE
            self._reply(src, REJECT, bytes([0]))
        elif code == QUERY_CONTROL:
            who = self.controller or (0, 0, 0)
            auth = self.controller_authority
            self._reply(src, REPORT_CONTROL, struct.pack("<HBBB", *who, auth))
        elif code == QUERY_TIMEOUT:
            self._reply(src, REPORT_TIMEOUT, bytes([self.control_timeout]))
        elif code == QUERY_STATUS:
            self._reply(src, REPORT_STATUS, struct.pack("<BI", self.state, 0))
        elif code == RESUME and src == self.controller:
            self.state = READY_STATE
        elif code == JOINT_EFFORT and MANIPULATOR in self.services:
            if src == self.controller and self.state == READY_STATE:
                self._last_drive = now
                count = body[0]
                self.efforts = [
                    unscale(struct.unpack_from("<H", body, 1 + 2 * i)[0], -100, 100, 16)
                    for i in range(count)
                ]
        elif code == QUERY_JOINTS and JOINT_SENSOR in self.services:
            out = bytes([len(self.joints)])
            for q in self.joints:  # revolute (0), u32 over −8π … 8π rad
                out += struct.pack("<BI", 0, scale(q, -8 * math.pi, 8 * math.pi, 32))
            self._reply(src, REPORT_JOINTS, out)
        elif code in (WRENCH, VELOCITY_COMMAND):
            if src == self.controller and self.state == READY_STATE:
                self._drive(code, body, now)
        elif code == QUERY_POSE and POSE_SENSOR in self.services:
            wanted = struct.unpack_from("<H", body)[0] & 0b1_0100_0111
            out = struct.pack("<H", wanted)
            if wanted & 1:
                out += struct.pack("<I", scale(self.x, -1e5, 1e5, 32))
            if wanted & 2:
                out += struct.pack("<I", scale(self.y, -1e5, 1e5, 32))
            if wanted & 4:
                out += struct.pack("<I", scale(0.0, -1e5, 1e5, 32))
            if wanted & 64:
                out += struct.pack("<H", scale(self.yaw, -math.pi, math.pi, 16))
            if wanted & 256:  # the time stamp: ms, s, min, h, day of month in bit fields
                ms = round(self._pose_time * 1000.0)
                s, minute, hour = ms // 1000 % 60, ms // 60_000 % 60, ms // 3_600_000 % 24
                day = ms // 86_400_000 % 28 + 1
                out += struct.pack(
                    "<I", ms % 1000 | s << 10 | minute << 16 | hour << 22 | day << 27
                )
            self._reply(src, REPORT_POSE, out)
        elif code == QUERY_VELOCITY and VELOCITY_SENSOR in self.services:
            out = struct.pack("<H", 0b1000011)
            v = self.v if self.reported_v is None else self.reported_v
            out += struct.pack("<I", scale(v, -327.68, 327.67, 32))
            out += struct.pack("<I", scale(self.vy, -327.68, 327.67, 32))
            out += struct.pack("<H", scale(self.yaw_rate, -32.768, 32.767, 16))
            self._reply(src, REPORT_VELOCITY, out)

    def _request(self, src: tuple[int, int, int], authority: int, now: float) -> None:
        if self.controller is not None and not self.answer_renewals:
            return
        if self.refuse_with is not None:
            self._reply(src, CONFIRM, bytes([self.refuse_with]))
        elif self.controller in (None, src) or authority > self.controller_authority:
            if self.controller not in (None, src):
                self.revoke(src, authority)
            if self.controller is None:  # without Management, ready at once
                self.state = STANDBY_STATE if MANAGEMENT in self.services else READY_STATE
            self.controller, self.controller_authority = src, authority
            self._last_request = now
            self._reply(src, CONFIRM, bytes([0]))
        else:
            self._reply(src, CONFIRM, bytes([2]))

    def _drive(self, code: int, body: bytes, now: float) -> None:
        self._last_drive = now
        if code == WRENCH:
            (presence,) = struct.unpack_from("<H", body)
            values, at = {}, 2
            for bit in range(12):
                if presence >> bit & 1:
                    if bit < 6:
                        values[bit] = unscale(struct.unpack_from("<H", body, at)[0], -100, 100, 16)
                        at += 2
                    else:
                        at += 1
            self.v = values.get(0, 0.0) / 100 * self.max_speed
            self.vy = values.get(1, 0.0) / 100 * self.max_speed
            self.yaw_rate = values.get(5, 0.0) / 100 * self.max_turn_rate
        else:
            presence, command_type = body[0], body[1]
            if command_type != 0:
                return
            values, at = {}, 2
            for bit in range(6):
                if presence >> bit & 1:
                    if bit < 3:
                        k = struct.unpack_from("<I", body, at)[0]
                        values[bit] = unscale(k, -327.68, 327.67, 32)
                        at += 4
                    else:
                        values[bit] = unscale(
                            struct.unpack_from("<H", body, at)[0], -32.768, 32.767, 16
                        )
                        at += 2
            self.v, self.vy, self.yaw_rate = (
                values.get(0, 0.0),
                values.get(1, 0.0),
                values.get(5, 0.0),
            )

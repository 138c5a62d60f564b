"""An ARCOS robot for the tests: a sans-I/O core, a TCP server and a pty serial end.

Written from the protocol description, independently of ``freelook.hardware.arcos`` (its own
framing, checksum, argument and SIP encoding), so the two check each other. The core answers
the SYNC handshake, obeys OPEN, ENABLE, VEL, RVEL, SETV, SETRV, STOP, E_STOP and CLOSE,
integrates the commanded velocities at a fixed 10 ms step, sends a SIP every 100 ms (pose,
wheel speeds, battery, bumpers, four sonar readings in turn), applies ARCOS's 2 s watchdog, and
checks the checksum of every packet it gets.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import struct
import termios
import time
import tty
from dataclasses import dataclass, field

STEP = 0.01  # s, motion integration
SIP_PERIOD = 0.1  # s
WATCHDOG = 2.0  # s without a command: the robot stops
ANGLE_UNIT = 2.0 * math.pi / 4096.0
SONAR_PER_SIP = 4

PULSE, OPEN, CLOSE, ENABLE, SETV, SETRV, VEL, RVEL, STOP, ESTOP = 0, 1, 2, 4, 6, 10, 11, 21, 29, 55


def arcos_checksum(payload: bytes) -> int:
    """Big-endian 16-bit words summed, an odd last byte XOR'd in (written out longhand)."""
    total = 0
    for i in range(0, len(payload) - 1, 2):
        total = (total + (payload[i] << 8) + payload[i + 1]) & 0xFFFF
    if len(payload) % 2:
        total ^= payload[-1]
    return total


def frame(payload: bytes) -> bytes:
    c = arcos_checksum(payload)
    return bytes((0xFA, 0xFB, len(payload) + 2)) + payload + bytes((c >> 8, c & 0xFF))


def sip_payload(
    *,
    moving: bool = False,
    x: int = 0,
    y: int = 0,
    th: int = 0,
    left: int = 0,
    right: int = 0,
    battery: int = 130,
    stall: int = 0,
    flags: int = 1,
    sonar: tuple[tuple[int, int], ...] = (),
    extra: bytes = b"",
) -> bytes:
    """A standard SIP payload: fields in the manual's order, little-endian."""
    body = bytes((0x33 if moving else 0x32,))
    body += struct.pack(
        "<HHhhhBHhHB", x & 0xFFFF, y & 0xFFFF, th, left, right, battery, stall, 0, flags, 0
    )
    body += bytes((len(sonar),))
    for number, rng in sonar:
        body += bytes((number,)) + struct.pack("<H", rng)
    return body + extra


@dataclass
class Received:
    stamp: float
    command: int
    argument: int | bytes | None


@dataclass
class ArcosEmulator:
    """The robot end of an ARCOS session, sans-I/O: ``receive(data, now)``, ``advance(now)``."""

    name: str = "Emulated"
    robot_type: str = "Pioneer"
    subtype: str = "p3dx-sh"
    x: float = 0.0  # mm
    y: float = 0.0
    th: float = 0.0  # rad
    track: float = 381.0  # mm
    answer_handshake: bool = True
    corrupt_every: int = 0  # every n-th SIP goes out with a broken checksum
    sonar_ranges: dict[int, int] = field(
        default_factory=lambda: {i: 1000 + 100 * i for i in range(16)}
    )
    stall: int = 0  # the stall-and-bumpers word
    # what happened
    phase: str = "sync0"  # sync0, sync1, sync2 (expecting that), ready (wants OPEN), open
    commands: list[Received] = field(default_factory=list)
    bad_packets: int = 0  # client packets with a bad checksum, count or argument
    stray_bytes: int = 0  # client bytes outside any packet
    sips_sent: int = 0
    watchdog_trips: int = 0
    sessions_opened: int = 0
    v: float = 0.0  # mm/s
    w: float = 0.0  # deg/s
    max_v: float = 1500.0
    max_w: float = 300.0
    enabled: bool = False
    _buffer: bytearray = field(default_factory=bytearray)
    _out: bytearray = field(default_factory=bytearray)
    _clock: float | None = None
    _next_sip: float = 0.0
    _last_command: float = 0.0
    _sonar_next: int = 0

    def receive(self, data: bytes, now: float) -> None:
        self._catch_up(now)
        self._buffer += data
        buf = self._buffer
        while True:
            start = buf.find(b"\xfa\xfb")
            if start < 0:
                keep = 1 if buf[-1:] == b"\xfa" else 0
                self.stray_bytes += len(buf) - keep
                del buf[: len(buf) - keep]
                return
            self.stray_bytes += start
            del buf[:start]
            if len(buf) < 3:
                return
            count = buf[2]
            if count < 3:
                self.bad_packets += 1
                del buf[:2]
                continue
            if len(buf) < 3 + count:
                return
            payload, check = bytes(buf[3 : 1 + count]), buf[1 + count] << 8 | buf[2 + count]
            if arcos_checksum(payload) != check:
                self.bad_packets += 1
                del buf[:2]
                continue
            del buf[: 3 + count]
            self._on_command(payload, now)

    def advance(self, now: float) -> bytes:
        """Integrate to ``now`` and return what the robot sends (echoes, SIPs)."""
        self._catch_up(now)
        out = bytes(self._out)
        self._out.clear()
        return out

    def new_connection(self) -> None:
        """A new client on the TCP port: MobileSim starts each connection at SYNC0."""
        self.phase = "sync0"
        self._buffer.clear()
        self._out.clear()
        self.v = self.w = 0.0

    def commands_named(self, command: int) -> list[Received]:
        return [c for c in self.commands if c.command == command]

    # -- inside ------------------------------------------------------------------------------

    def _argument(self, payload: bytes) -> tuple[bool, int | bytes | None]:
        if len(payload) == 1:
            return True, None
        kind = payload[1]
        if kind in (0x3B, 0x1B) and len(payload) == 4:
            value = payload[2] | payload[3] << 8
            return True, value if kind == 0x3B else -value
        if kind == 0x2B and len(payload) >= 3 and len(payload) == 3 + payload[2]:
            return True, payload[3:]
        return False, None

    def _on_command(self, payload: bytes, now: float) -> None:
        ok, arg = self._argument(payload)
        if not ok:
            self.bad_packets += 1
            return
        cmd = payload[0]
        self.commands.append(Received(now, cmd, arg))
        if self.phase.startswith("sync"):
            if not self.answer_handshake:
                return
            step = int(self.phase[-1])
            if cmd != step or arg is not None:
                self.phase = "sync0"
                return
            if step < 2:
                self._out += frame(bytes((step,)))
                self.phase = f"sync{step + 1}"
            else:
                names = f"{self.name}\0{self.robot_type}\0{self.subtype}\0".encode()
                self._out += frame(b"\x02" + names)
                self.phase = "ready"
            return
        if self.phase == "ready":  # synced, not yet open: a new SYNC0 starts over
            if cmd == 0 and arg is None and self.answer_handshake:
                self._out += frame(b"\x00")
                self.phase = "sync1"
            elif cmd == OPEN:
                self.phase = "open"
                self.sessions_opened += 1
                self._next_sip = now
                self._last_command = now
            return
        self._last_command = now
        if cmd == CLOSE:
            self.phase = "sync0"
            self.v = self.w = 0.0
            self.enabled = False
        elif cmd == ENABLE:
            self.enabled = arg == 1
        elif cmd == SETV and isinstance(arg, int):
            self.max_v = float(arg)
        elif cmd == SETRV and isinstance(arg, int):
            self.max_w = float(arg)
        elif cmd == VEL and isinstance(arg, int):
            self.v = max(-self.max_v, min(self.max_v, float(arg)))
        elif cmd == RVEL and isinstance(arg, int):
            self.w = max(-self.max_w, min(self.max_w, float(arg)))
        elif cmd in (STOP, ESTOP):
            self.v = self.w = 0.0

    def _catch_up(self, now: float) -> None:
        if self._clock is None:
            self._clock = now
        while self._clock + STEP <= now + 1e-12:
            self._clock += STEP
            t = self._clock
            if self.phase == "open" and t - self._last_command > WATCHDOG and (self.v or self.w):
                self.v = self.w = 0.0
                self.watchdog_trips += 1
            if self.phase == "open" and self.enabled:
                self.x += self.v * math.cos(self.th) * STEP
                self.y += self.v * math.sin(self.th) * STEP
                self.th = math.remainder(self.th + math.radians(self.w) * STEP, 2 * math.pi)
            if self.phase == "open" and t >= self._next_sip - 1e-12:
                self._next_sip = t + SIP_PERIOD
                self._out += self._sip()

    def _sip(self) -> bytes:
        moving = self.enabled and (self.v != 0.0 or self.w != 0.0)
        spin = math.radians(self.w) * self.track / 2.0 if self.enabled else 0.0
        v = self.v if self.enabled else 0.0
        numbers = sorted(self.sonar_ranges)
        readings = []
        for _ in range(min(SONAR_PER_SIP, len(numbers))):
            n = numbers[self._sonar_next % len(numbers)]
            self._sonar_next += 1
            readings.append((n, self.sonar_ranges[n]))
        packet = frame(
            sip_payload(
                moving=moving,
                x=round(self.x) & 0x7FFF,
                y=round(self.y) & 0x7FFF,
                th=round(self.th / ANGLE_UNIT) % 4096,
                left=round(v - spin),
                right=round(v + spin),
                stall=self.stall,
                flags=int(self.enabled),
                sonar=tuple(readings),
            )
        )
        self.sips_sent += 1
        if self.corrupt_every and self.sips_sent % self.corrupt_every == 0:
            packet = packet[:-1] + bytes((packet[-1] ^ 0x5A,))
        return packet

    def pose_m(self) -> tuple[float, float, float]:
        return self.x / 1000.0, self.y / 1000.0, self.th


class TcpRobot:
    """The emulator on a real TCP socket on 127.0.0.1 (an ephemeral port, kept on restart)."""

    def __init__(self, emulator: ArcosEmulator) -> None:
        self.emulator = emulator
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    def drop(self) -> None:
        """Cut every open connection, as a robot that reboots or a cable that is pulled."""
        for writer in list(self._writers):
            writer.transport.abort()

    async def stop(self) -> None:
        """Go away: refuse new connections and drop the current ones."""
        if self._server is not None:
            self._server.close()
            self._server = None
        self.drop()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        self.emulator.new_connection()
        try:
            while not writer.is_closing():
                try:
                    async with asyncio.timeout(STEP):
                        data = await reader.read(4096)
                    if not data:
                        break
                except TimeoutError:
                    data = b""
                now = time.monotonic()
                self.emulator.receive(data, now)
                out = self.emulator.advance(now)
                if out:
                    writer.write(out)
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self._writers.discard(writer)
            self._tasks.discard(task)
            writer.transport.abort()


class PtyRobot:
    """The emulator at the far end of a real pty pair; the client opens :attr:`device`.

    ``baud``: the only speed the robot understands; at any other speed the client's bytes are
    lost (as line noise would garble them). ``muted``: the cable is cut both ways.
    """

    def __init__(self, emulator: ArcosEmulator, baud: int | None = None) -> None:
        self.emulator = emulator
        self.baud = baud
        self.muted = False
        self.master, self._slave = os.openpty()
        tty.setraw(self._slave)
        os.set_blocking(self.master, False)
        self.device = os.ttyname(self._slave)
        self._task: asyncio.Task[None] | None = None

    def speed(self) -> int:
        """The baud rate the client set on its end."""
        code = termios.tcgetattr(self.master)[5]
        bauds = (9600, 19200, 38400, 57600, 115200)
        return next(b for b in bauds if getattr(termios, f"B{b}") == code)

    def _speed_ok(self) -> bool:
        if self.baud is None:
            return True
        speed = termios.tcgetattr(self.master)[5]
        return bool(speed == getattr(termios, f"B{self.baud}"))

    def _on_readable(self) -> None:
        try:
            data = os.read(self.master, 4096)
        except OSError:
            return
        if not self.muted and self._speed_ok():
            self.emulator.receive(data, time.monotonic())

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(STEP)
            out = self.emulator.advance(time.monotonic())
            if out and not self.muted:
                with contextlib.suppress(BlockingIOError, OSError):
                    os.write(self.master, out)

    async def start(self) -> None:
        asyncio.get_running_loop().add_reader(self.master, self._on_readable)
        self._task = asyncio.create_task(self._tick())

    async def stop(self) -> None:
        asyncio.get_running_loop().remove_reader(self.master)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        os.close(self.master)
        os.close(self._slave)

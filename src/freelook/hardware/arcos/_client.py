"""The client side of an ARCOS session, sans-I/O: bytes and the time in, events and bytes out.

Like h11's ``Connection``, :class:`ArcosClient` owns no socket and no clock. The caller feeds it
what arrived with :meth:`~ArcosClient.receive` (``b""`` when nothing did, so timeouts still
fire) and writes what :meth:`~ArcosClient.poll` returns. One client serves one robot for its
whole life: :meth:`~ArcosClient.start` begins each session on a fresh byte stream, and the
odometry stays continuous across sessions.

A session: SYNC0, SYNC1, SYNC2, each echoed by the robot (SYNC2's echo names it), retried
from SYNC0 when an echo does not come and abandoned after ``handshake_timeout``; then OPEN,
the SETV/SETRV limits, ENABLE 1 and a STOP, then the newest motion command if one is held. A
motion command is written on the next poll and refreshed every ``pulse_interval`` (as ARIA
refreshes its state reflection); with none held a PULSE keeps the robot's own 2 s watchdog
quiet. A held command older than ``command_timeout`` becomes a stop. No SIP for
``link_timeout`` ends the session as lost.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple

from freelook.errors import ProtocolError
from freelook.geometry import wrap_angle
from freelook.hal import BumperState, OdometrySample
from freelook.hardware.arcos._packets import (
    SIP_MOVING,
    SIP_STOPPED,
    Command,
    PacketDecoder,
    Sip,
    encode_command,
    parse_sip,
    parse_sync2,
)

__all__ = [
    "ANGLE_UNIT",
    "ArcosClient",
    "ArcosEvent",
    "ArcosStats",
    "ClientState",
    "Closed",
    "Connected",
    "HandshakeFailed",
    "LinkLost",
    "SipReceived",
    "SonarReading",
]

ANGLE_UNIT = 2.0 * math.pi / 4096.0  # rad per ARCOS angle unit (≈ 0.001534)
_HALF15 = 0x4000


class ClientState(Enum):
    IDLE = "idle"  # no session started
    SYNCING = "syncing"  # handshake under way
    CONNECTED = "connected"
    CLOSING = "closing"  # STOP and CLOSE wait for the next poll
    CLOSED = "closed"
    LOST = "lost"  # the session ended without a close: silence or a dropped stream
    FAILED = "failed"  # the handshake did not complete


@dataclass(frozen=True, slots=True)
class Connected:
    """The handshake completed; the robot named itself in its SYNC2 echo."""

    stamp: float
    name: str
    robot_type: str
    subtype: str


@dataclass(frozen=True, slots=True)
class HandshakeFailed:
    """The robot did not complete SYNC0-2 (no answer, or the wrong echo)."""

    stamp: float
    reason: str


@dataclass(frozen=True, slots=True)
class SipReceived:
    """A server information packet: the robot's odometry, sonar and state."""

    stamp: float
    sip: Sip


@dataclass(frozen=True, slots=True)
class LinkLost:
    """No SIP for longer than the link allows: the serial line or the robot is gone."""

    stamp: float
    reason: str


@dataclass(frozen=True, slots=True)
class Closed:
    """The session closed as asked: STOP and CLOSE sent to the robot."""

    stamp: float


ArcosEvent = Connected | HandshakeFailed | SipReceived | LinkLost | Closed


class SonarReading(NamedTuple):
    range: float  # m
    stamp: float  # when the SIP carrying it arrived


@dataclass(frozen=True, slots=True)
class ArcosStats:
    """Counters since the client was made (every session)."""

    sessions: int
    sync_packets_sent: int
    packets_sent: int
    bytes_sent: int
    packets_received: int
    sips: int
    malformed_sips: int
    other_packets: int  # valid packets that are neither a SIP nor an expected echo
    bad_checksums: int
    bad_counts: int
    skipped_bytes: int
    links_lost: int


def _signed15(raw: int) -> int:
    return raw - 0x8000 if raw >= _HALF15 else raw


def _wrap15(delta: int) -> int:
    return ((delta + _HALF15) & 0x7FFF) - _HALF15


class ArcosClient:
    """One robot's ARCOS conversation; see the module docstring for the session."""

    def __init__(
        self,
        *,
        max_speed: float,
        max_turn_rate: float,
        handshake_timeout: float = 3.0,
        sync_retry: float = 0.3,
        pulse_interval: float = 0.5,
        link_timeout: float = 1.0,
        command_timeout: float | None = 1.0,
    ) -> None:
        """``max_speed`` (m/s) and ``max_turn_rate`` (rad/s) go to the robot as SETV and SETRV
        at every connect, and clamp every motion command."""
        if not 0.0 < max_speed <= 32.767:
            raise ValueError(f"max_speed {max_speed} m/s: must be in (0, 32.767]")
        if not 0.0 < max_turn_rate <= math.radians(32767):
            raise ValueError(f"max_turn_rate {max_turn_rate} rad/s: must be > 0")
        for name, value in (
            ("handshake_timeout", handshake_timeout),
            ("sync_retry", sync_retry),
            ("pulse_interval", pulse_interval),
            ("link_timeout", link_timeout),
        ):
            if not value > 0.0:
                raise ValueError(f"{name} {value} s: must be > 0")
        self._max_mm = round(max_speed * 1000.0)
        self._max_deg = round(math.degrees(max_turn_rate))
        self.handshake_timeout = handshake_timeout
        self.sync_retry = sync_retry
        self.pulse_interval = pulse_interval
        self.link_timeout = link_timeout
        self.command_timeout = command_timeout
        self.state = ClientState.IDLE
        self.robot_name = self.robot_type = self.robot_subtype = ""
        self._decoder = PacketDecoder()
        self._events: list[ArcosEvent] = []
        self._outbox: list[bytes] = []
        self._sync_step = 0
        self._awaiting_echo = False
        self._next_sync = 0.0
        self._handshake_deadline = 0.0
        self._last_sent = 0.0
        self._last_sip = 0.0
        # the newest motion command, in wire units (mm/s, deg/s); None: none held
        self._motion: tuple[int, int] | None = None
        self._motion_dirty = False
        self._motion_given: float | None = None
        # what the SIPs say
        self._raw_xy: tuple[int, int] | None = None
        self._x_mm = self._y_mm = 0
        self.odometry: OdometrySample | None = None
        self.bumpers: BumperState | None = None
        self.sonar: dict[int, SonarReading] = {}  # sonar number → its newest reading
        self.battery_volts: float | None = None
        self.stalled = (False, False)
        self.motors_enabled = False
        self.last_sip: Sip | None = None
        self._counts = dict.fromkeys(
            (
                "sessions",
                "sync_packets_sent",
                "packets_sent",
                "bytes_sent",
                "sips",
                "malformed_sips",
                "other_packets",
                "links_lost",
            ),
            0,
        )

    # -- the caller's side -------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self.state is ClientState.CONNECTED

    def start(self, now: float) -> None:
        """Begin a session on a fresh byte stream: the handshake goes out on the next poll."""
        self._decoder.reset()
        self._outbox.clear()
        self.state = ClientState.SYNCING
        self._sync_step = 0
        self._awaiting_echo = False
        self._next_sync = now
        self._handshake_deadline = now + self.handshake_timeout
        self._counts["sessions"] += 1

    def command_velocity(self, v: float, omega: float, now: float | None = None) -> None:
        """Drive at ``v`` m/s and ``omega`` rad/s (clamped to the limits), newest wins.

        A changed command is sent on the next poll as VEL and RVEL; the same command again
        only renews it (a 50 Hz control loop must not fill a 9600 baud line), and the refresh
        every ``pulse_interval`` repeats it. ``now`` dates the command for ``command_timeout``;
        without it, the next receive or poll dates it.
        """
        if not (math.isfinite(v) and math.isfinite(omega)):
            raise ValueError(f"velocity command ({v}, {omega}): must be finite")
        mm = max(-self._max_mm, min(self._max_mm, round(v * 1000.0)))
        deg = max(-self._max_deg, min(self._max_deg, round(math.degrees(omega))))
        if self._motion != (mm, deg):
            self._motion = (mm, deg)
            self._motion_dirty = True
        self._motion_given = now

    def stop(self) -> None:
        """STOP now (motors stay enabled) and drop the held motion command."""
        self._drop_motion()
        if self.state is ClientState.CONNECTED:
            self._outbox.append(encode_command(Command.STOP))

    def e_stop(self) -> None:
        """E_STOP now: the robot brakes at its maximum deceleration."""
        self._drop_motion()
        if self.state is ClientState.CONNECTED:
            self._outbox.append(encode_command(Command.ESTOP))

    def close(self) -> None:
        """End the session: STOP and CLOSE go out on the next poll, if it is connected."""
        if self.state is ClientState.CONNECTED:
            self.state = ClientState.CLOSING
        elif self.state is ClientState.SYNCING:
            self.state = ClientState.CLOSED

    def connection_lost(self, now: float, reason: str) -> list[ArcosEvent]:
        """The byte stream ended (EOF, reset, unplugged): the session is over."""
        events = self._take_events()
        if self.state is ClientState.SYNCING:
            self.state = ClientState.FAILED
            events.append(HandshakeFailed(now, reason))
        elif self.state is ClientState.CONNECTED:
            self._lose(now, reason, events)
        elif self.state is ClientState.CLOSING:
            self.state = ClientState.CLOSED
            events.append(Closed(now))
        return events

    def receive(self, data: bytes, now: float) -> list[ArcosEvent]:
        """Take bytes from the robot (``b""`` if none came) and return what happened."""
        events = self._take_events()
        self._advance(now, events)
        if self.state in (ClientState.SYNCING, ClientState.CONNECTED) and data:
            for payload in self._decoder.feed(data):
                self._on_packet(payload, now, events)
        return events

    def poll(self, now: float) -> bytes:
        """The bytes to write now (often ``b""``). Events it causes come with the next receive."""
        self._advance(now, self._events)
        out: list[bytes] = []
        if self.state is ClientState.SYNCING:
            out += self._outbox
            self._outbox.clear()
            if now >= self._next_sync:
                if self._awaiting_echo:  # it did not come: begin again, as ARIA does
                    self._sync_step = 0
                out.append(encode_command(self._sync_step))
                self._counts["sync_packets_sent"] += 1
                self._awaiting_echo = True
                self._next_sync = now + self.sync_retry
        elif self.state is ClientState.CONNECTED:
            out += self._outbox
            self._outbox.clear()
            if self._motion_dirty or (not out and now >= self._last_sent + self.pulse_interval):
                out += self._motion_packets()
        elif self.state is ClientState.CLOSING:
            out += self._outbox
            out += [encode_command(Command.STOP), encode_command(Command.CLOSE)]
            self._outbox.clear()
            self.state = ClientState.CLOSED
            self._events.append(Closed(now))
        if not out:
            return b""
        data = b"".join(out)
        self._last_sent = now
        self._counts["packets_sent"] += len(out)
        self._counts["bytes_sent"] += len(data)
        return data

    def next_deadline(self) -> float | None:
        """When :meth:`poll` next has something to do by itself (None: nothing planned)."""
        if self.state is ClientState.SYNCING:
            return 0.0 if self._outbox else min(self._next_sync, self._handshake_deadline)
        if self.state is ClientState.CLOSING:
            return 0.0
        if self.state is not ClientState.CONNECTED:
            return None
        if self._outbox or self._motion_dirty:
            return 0.0
        due = min(self._last_sent + self.pulse_interval, self._last_sip + self.link_timeout)
        expiry = self._motion_expiry()
        return due if expiry is None else min(due, expiry)

    def stats(self) -> ArcosStats:
        d = self._decoder
        return ArcosStats(
            packets_received=d.packets,
            bad_checksums=d.bad_checksums,
            bad_counts=d.bad_counts,
            skipped_bytes=d.skipped_bytes,
            **self._counts,
        )

    # -- inside ------------------------------------------------------------------------------

    def _take_events(self) -> list[ArcosEvent]:
        events, self._events = self._events, []
        return events

    def _drop_motion(self) -> None:
        self._motion = None
        self._motion_dirty = False
        self._motion_given = None

    def _motion_expiry(self) -> float | None:
        if self.command_timeout is None or self._motion in (None, (0, 0)):
            return None
        return None if self._motion_given is None else self._motion_given + self.command_timeout

    def _motion_packets(self) -> list[bytes]:
        self._motion_dirty = False
        if self._motion is None:
            return [encode_command(Command.PULSE)]
        mm, deg = self._motion
        return [encode_command(Command.VEL, mm), encode_command(Command.RVEL, deg)]

    def _advance(self, now: float, events: list[ArcosEvent]) -> None:
        if self._motion is not None and self._motion_given is None:
            self._motion_given = now
        if self.state is ClientState.SYNCING and now >= self._handshake_deadline:
            self.state = ClientState.FAILED
            step = self._sync_step
            events.append(
                HandshakeFailed(
                    now,
                    f"no answer to the SYNC handshake within {self.handshake_timeout:.1f} s "
                    f"(expected the robot to echo SYNC{step}; "
                    f"{self._counts['sync_packets_sent']} SYNC packets sent)",
                )
            )
        elif self.state is ClientState.CONNECTED:
            if now >= self._last_sip + self.link_timeout:
                silence = now - self._last_sip
                self._lose(
                    now,
                    f"no SIP from the robot for {silence:.2f} s (limit {self.link_timeout:.2f} s)",
                    events,
                )
                return
            expiry = self._motion_expiry()
            if expiry is not None and now >= expiry:
                self._motion = (0, 0)  # the program stopped commanding: stop the robot
                self._motion_dirty = True

    def _lose(self, now: float, reason: str, events: list[ArcosEvent]) -> None:
        self.state = ClientState.LOST
        self._counts["links_lost"] += 1
        events.append(LinkLost(now, reason))

    def _on_packet(self, payload: bytes, now: float, events: list[ArcosEvent]) -> None:
        kind = payload[0]
        if self.state is ClientState.SYNCING:
            self._on_sync_echo(kind, payload, now, events)
        elif kind in (SIP_STOPPED, SIP_MOVING):
            try:
                sip = parse_sip(payload)
            except ProtocolError:
                self._counts["malformed_sips"] += 1
                return
            self._on_sip(sip, now)
            events.append(SipReceived(now, sip))
        else:
            self._counts["other_packets"] += 1

    def _on_sync_echo(
        self, kind: int, payload: bytes, now: float, events: list[ArcosEvent]
    ) -> None:
        if kind in (SIP_STOPPED, SIP_MOVING):
            # still open from an earlier client that never closed: close it and start over
            self._outbox.append(encode_command(Command.CLOSE))
            self._sync_step = 0
            self._awaiting_echo = False
            self._next_sync = now + self.sync_retry
        elif kind == self._sync_step == 2:
            self.robot_name, self.robot_type, self.robot_subtype = parse_sync2(payload)
            self._on_connected(now)
            events.append(Connected(now, self.robot_name, self.robot_type, self.robot_subtype))
        elif kind == self._sync_step:
            self._sync_step += 1
            self._awaiting_echo = False
            self._next_sync = now
        elif kind > self._sync_step:  # out of step: begin again
            self._sync_step = 0
            self._awaiting_echo = False
            self._next_sync = now
        else:  # a late echo of a step already passed
            self._counts["other_packets"] += 1

    def _on_connected(self, now: float) -> None:
        self.state = ClientState.CONNECTED
        self._last_sip = now
        self._last_sent = now
        self._outbox += [
            encode_command(Command.OPEN),
            encode_command(Command.SETV, self._max_mm),
            encode_command(Command.SETRV, self._max_deg),
            encode_command(Command.ENABLE, 1),
            encode_command(Command.STOP),  # whatever ran before, start from rest
        ]
        self._motion_dirty = self._motion is not None  # then only the newest command

    def _on_sip(self, sip: Sip, now: float) -> None:
        self._last_sip = now
        self._counts["sips"] += 1
        if self._raw_xy is None:
            self._x_mm, self._y_mm = _signed15(sip.x), _signed15(sip.y)
        else:
            self._x_mm += _wrap15(sip.x - self._raw_xy[0])
            self._y_mm += _wrap15(sip.y - self._raw_xy[1])
        self._raw_xy = (sip.x, sip.y)
        self.odometry = OdometrySample(
            now,
            self._x_mm / 1000.0,
            self._y_mm / 1000.0,
            wrap_angle(sip.th * ANGLE_UNIT),
            sip.left_velocity / 1000.0,
            sip.right_velocity / 1000.0,
        )
        self.bumpers = BumperState(now, sip.front_bumpers != 0, sip.rear_bumpers != 0)
        for number, range_mm in sip.sonar:
            self.sonar[number] = SonarReading(range_mm / 1000.0, now)
        self.battery_volts = sip.battery / 10.0
        self.stalled = (sip.left_stalled, sip.right_stalled)
        self.motors_enabled = sip.motors_enabled
        self.last_sip = sip

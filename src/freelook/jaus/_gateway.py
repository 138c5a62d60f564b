"""The JAUS gateway's core (sans-I/O): JUDP datagrams and link messages in, replies out.

The gateway is one JAUS component (Access Control, Identification, Primitive Driver, Velocity
State Driver, Local Pose and Velocity State Sensor) in front of one robot, and one operator
station on the robot's authenticated link. JAUS clients are arbitrated here (AS5710 access
control: a higher authority takes over, an equal or lower one is refused while the holder is
heard); the gateway then asks the robot for control with its own station's key and authority,
so the robot's arbitration still decides against other stations. A RequestControl is confirmed
only once the robot has granted it; a robot that refuses (another station holds it) is
reported as NOT_AVAILABLE.

Only the controlling client drives. A drive command holds for ``command_hold`` seconds, then
the gateway commands a stop; a controller silent for ``control_timeout`` seconds loses control
(RejectControl CONTROL_RELEASED). Reports are answered to any client: reading is not control.
Every datagram that is malformed, addressed elsewhere, unsupported or not allowed is dropped
and counted by reason in :attr:`JausGateway.dropped`; nothing a client sends raises.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from typing import TypeVar

from freelook import judp
from freelook.link import (
    ControlGrant,
    ControlReject,
    ControlRelease,
    ControlRequest,
    Heartbeat,
    Message,
    Telemetry,
    VelocityCommand,
)

__all__ = [
    "MAX_CLIENTS",
    "MAX_PENDING",
    "MAX_REPLIES",
    "Address",
    "GatewayOptions",
    "GatewayOutput",
    "JausGateway",
]

Address = tuple[str, int]
VEHICLE, NODE, COMPONENT = 10001, 40001, 60001  # ReportIdentification types
_IDENTITY_TYPES = {1: VEHICLE, 2: VEHICLE, 3: NODE, 4: COMPONENT}
DEFAULT_COMPONENT = judp.JausId(1, 1, 1)  # subsystem 1, node 1, component 1
CONTROL_RENEWAL = 1.0  # s between the gateway's control requests to the robot while it drives
#: bounds on what strangers can make the gateway keep or send: clients whose sequence numbers
#: it keeps (the least recently heard forgotten), clients waiting for the robot's answer, and
#: replies (acknowledgements included) to one datagram
MAX_CLIENTS = 256
MAX_PENDING = 16
MAX_REPLIES = 8


@dataclass(frozen=True, slots=True)
class GatewayOptions:
    name: str
    max_speed: float  # m/s: 100 % propulsive effort, and the clamp of velocity commands
    max_turn_rate: float  # rad/s
    component: judp.JausId = DEFAULT_COMPONENT
    station: int = 2  # the gateway's station id on the robot's link
    authority: int = 10  # what the gateway claims when it asks the robot for control
    command_hold: float = 0.5  # s a drive command drives without a new one
    control_timeout: float = 5.0  # s of controller silence before control is released
    grant_timeout: float = 1.0  # s to wait for the robot's answer to a control request


@dataclass
class GatewayOutput:
    datagrams: list[tuple[bytes, Address]] = field(default_factory=list)
    link: list[Message] = field(default_factory=list)


@dataclass
class _Client:
    id: judp.JausId
    address: Address
    authority: int
    heard: float


class JausGateway:
    """One JAUS component for one robot."""

    def __init__(self, options: GatewayOptions) -> None:
        self.options = options
        self.controller: _Client | None = None
        self.pending: list[tuple[_Client, float]] = []  # waiting for the robot's answer
        self.in_control = False  # the robot granted the gateway's station
        self.telemetry: Telemetry | None = None
        self.command: tuple[float, VelocityCommand] | None = None
        self.dropped: Counter[str] = Counter()
        self.received = 0
        self._sequence: OrderedDict[judp.JausId, int] = OrderedDict()
        self._renewed = -math.inf

    # -- JUDP --------------------------------------------------------------------------------

    def on_datagram(self, data: bytes, source: Address, now: float) -> GatewayOutput:
        """One datagram from a JAUS client: its messages handled, replies returned."""
        out = GatewayOutput()
        try:
            messages = judp.parse_judp(data)
        except judp.JudpError:
            self.dropped["malformed"] += 1
            return out
        for frame in messages:
            if not frame.destination.matches(self.options.component):
                self.dropped["not addressed to this component"] += 1
                continue
            if frame.ack_nak in (judp.AckNak.ACK, judp.AckNak.NAK):
                continue  # an answer to nothing this gateway asks
            if frame.ack_nak == judp.AckNak.REQUIRED:
                self._reply(out, frame.source, source, b"", ack=True, sequence=frame.sequence)
            try:
                message = judp.decode_message(frame.code, frame.body)
            except judp.JudpError:
                self.dropped["malformed or unsupported message"] += 1
                continue
            self.received += 1
            self._handle(message, frame, source, now, out)
        if len(out.datagrams) > MAX_REPLIES:
            self.dropped["replies beyond what one datagram may draw"] += (
                len(out.datagrams) - MAX_REPLIES
            )
            del out.datagrams[MAX_REPLIES:]
        return out

    def _handle(
        self,
        message: judp.JausMessage,
        frame: judp.JudpMessage,
        source: Address,
        now: float,
        out: GatewayOutput,
    ) -> None:
        client = frame.source
        controller = self.controller
        is_controller = (
            controller is not None and controller.id == client and controller.address == source
        )
        if is_controller:
            assert controller is not None
            controller.heard = now
        if isinstance(message, judp.RequestControl):
            self._request(_Client(client, source, message.authority, now), now, out)
        elif isinstance(message, judp.ReleaseControl):
            if is_controller:
                self._release(now, out)
            else:
                self.dropped["release from a client not in control"] += 1
        elif isinstance(message, judp.SetWrenchEffort | judp.SetVelocityCommand):
            if not (is_controller and self.in_control):
                self.dropped["command from a client not in control"] += 1
                return
            command = self._drive(message)
            if command is None:
                self.dropped["unsupported command"] += 1
                return
            self.command = (now, command)
            out.link.append(command)
        elif isinstance(message, judp.QueryIdentification):
            kind = _IDENTITY_TYPES.get(message.query_type, COMPONENT)
            report = judp.ReportIdentification(message.query_type, kind, self.options.name)
            self._send(out, client, source, report)
        elif isinstance(message, judp.QueryLocalPose):
            self._send(out, client, source, judp.ReportLocalPose(self._pose(message.presence)))
        elif isinstance(message, judp.QueryVelocityState):
            self._send(
                out, client, source, judp.ReportVelocityState(self._velocity(message.presence))
            )
        else:
            self.dropped["message a component does not take"] += 1

    # -- access control ----------------------------------------------------------------------

    def _request(self, client: _Client, now: float, out: GatewayOutput) -> None:
        holder = self.controller
        if holder is not None and (holder.id, holder.address) != (client.id, client.address):
            if client.authority <= holder.authority:
                self._send(
                    out,
                    client.id,
                    client.address,
                    judp.ConfirmControl(judp.ConfirmResponse.INSUFFICIENT_AUTHORITY),
                )
                return
            # a higher authority takes over: the holder hears it lost control
            self._send(
                out,
                holder.id,
                holder.address,
                judp.RejectControl(judp.RejectResponse.CONTROL_RELEASED),
            )
            self.controller = None
            self.command = None
        if self.in_control:
            self._accept(client, out)
            return
        waiting = [(c, t) for c, t in self.pending if c.id != client.id]
        if len(waiting) >= MAX_PENDING:
            self.dropped["control request beyond the clients that may wait"] += 1
            self._confirm(out, client, judp.ConfirmResponse.NOT_AVAILABLE)
            return
        self.pending = [*waiting, (client, now)]
        out.link.append(self._control_request(now))

    def _accept(self, client: _Client, out: GatewayOutput) -> None:
        self.controller = client
        self._confirm(out, client, judp.ConfirmResponse.CONTROL_ACCEPTED)

    def _release(self, now: float, out: GatewayOutput) -> None:
        """The controller lets go (or went silent): stop, give the robot back, tell it."""
        holder = self.controller
        self.controller = None
        self.command = None
        if holder is not None:
            self._send(
                out,
                holder.id,
                holder.address,
                judp.RejectControl(judp.RejectResponse.CONTROL_RELEASED),
            )
        if self.in_control:
            out.link += [VelocityCommand(0.0, 0.0), ControlRelease(self.options.station)]
            self.in_control = False

    def _control_request(self, now: float) -> ControlRequest:
        self._renewed = now
        return ControlRequest(self.options.station, self.options.authority)

    # -- the robot ---------------------------------------------------------------------------

    def on_link(self, message: Message, now: float) -> GatewayOutput:
        """One message from the robot."""
        out = GatewayOutput()
        station = self.options.station
        if isinstance(message, Telemetry):
            self.telemetry = message
            if self.in_control and message.controller not in (0, station):
                self._lost(out)  # another station took the robot
        elif isinstance(message, ControlGrant) and message.station == station:
            self.in_control = True
            for client, _ in self.pending:
                self._accept(client, out)
            self.pending = []
        elif isinstance(message, ControlReject) and message.station == station:
            self.in_control = False
            self._refuse_pending(out)
        return out

    def _lost(self, out: GatewayOutput) -> None:
        self.in_control = False
        self.command = None
        holder, self.controller = self.controller, None
        if holder is not None:
            self._send(
                out,
                holder.id,
                holder.address,
                judp.RejectControl(judp.RejectResponse.CONTROL_RELEASED),
            )

    def _refuse_pending(self, out: GatewayOutput) -> None:
        for client, _ in self.pending:
            self._send(
                out,
                client.id,
                client.address,
                judp.ConfirmControl(judp.ConfirmResponse.NOT_AVAILABLE),
            )
        self.pending = []

    # -- time --------------------------------------------------------------------------------

    def tick(self, now: float) -> GatewayOutput:
        """Timeouts: unanswered control requests, a silent controller, a lapsed command."""
        out = GatewayOutput()
        opts = self.options
        if self.pending and now - self.pending[0][1] > opts.grant_timeout:
            expired = [p for p in self.pending if now - p[1] > opts.grant_timeout]
            self.pending = [p for p in self.pending if p not in expired]
            for client, _ in expired:
                self._send(
                    out,
                    client.id,
                    client.address,
                    judp.ConfirmControl(judp.ConfirmResponse.NOT_AVAILABLE),
                )
        holder = self.controller
        if holder is not None and now - holder.heard > opts.control_timeout:
            self._release(now, out)
        if self.command is not None and now - self.command[0] > opts.command_hold:
            self.command = None
            out.link.append(VelocityCommand(0.0, 0.0))
        return out

    def periodic(self, now: float) -> list[Message]:
        """What the link session re-sends at its spacing: the held command (or a heartbeat),
        and a control request now and then while a client controls."""
        out: list[Message] = [self.command[1] if self.command is not None else Heartbeat()]
        if self.controller is not None and now - self._renewed >= CONTROL_RENEWAL:
            out.append(self._control_request(now))
        return out

    # -- conversions -------------------------------------------------------------------------

    def _drive(
        self, message: judp.SetWrenchEffort | judp.SetVelocityCommand
    ) -> VelocityCommand | None:
        """JAUS (z down: yaw rate positive clockwise) to freelook (counter-clockwise)."""
        opts = self.options
        if isinstance(message, judp.SetWrenchEffort):
            forward = message.propulsive_linear[0] or 0.0
            turn = message.propulsive_rotational[2] or 0.0
            v, omega = forward / 100.0 * opts.max_speed, -turn / 100.0 * opts.max_turn_rate
        else:
            if message.command_type != 0:
                return None  # maximum, minimum and default values are not kept
            v = message.velocity[0] or 0.0
            omega = -(message.rates[2] or 0.0)
        return VelocityCommand(
            max(-opts.max_speed, min(opts.max_speed, v)),
            max(-opts.max_turn_rate, min(opts.max_turn_rate, omega)),
        )

    def _pose(self, wanted: int) -> judp.LocalPose:
        t = self.telemetry
        if t is None:
            return judp.LocalPose()
        x, y, theta = t.odom
        full = judp.LocalPose(
            x=x, y=-y, z=0.0, roll=0.0, pitch=0.0, yaw=-theta, timestamp=_timestamp(t.stamp)
        )
        return _only(full, wanted)

    def _velocity(self, wanted: int) -> judp.VelocityState:
        t = self.telemetry
        if t is None:
            return judp.VelocityState()
        full = judp.VelocityState(
            vx=t.v,
            vy=0.0,
            vz=0.0,
            roll_rate=0.0,
            pitch_rate=0.0,
            yaw_rate=-t.omega,
            timestamp=_timestamp(t.stamp),
        )
        return _only(full, wanted)

    # -- sending -----------------------------------------------------------------------------

    def _confirm(self, out: GatewayOutput, client: _Client, response: judp.ConfirmResponse) -> None:
        self._send(out, client.id, client.address, judp.ConfirmControl(response))

    def _released(self, out: GatewayOutput, client: _Client) -> None:
        self._send(
            out, client.id, client.address, judp.RejectControl(judp.RejectResponse.CONTROL_RELEASED)
        )

    def _send(
        self, out: GatewayOutput, to: judp.JausId, address: Address, message: judp.JausMessage
    ) -> None:
        self._reply(out, to, address, judp.encode_message(message))

    def _reply(
        self,
        out: GatewayOutput,
        to: judp.JausId,
        address: Address,
        payload: bytes,
        *,
        ack: bool = False,
        sequence: int | None = None,
    ) -> None:
        if sequence is None:
            sequence = self._sequence.pop(to, 0)
            self._sequence[to] = (sequence + 1) & 0xFFFF  # most recently heard last
            while len(self._sequence) > MAX_CLIENTS:
                self._sequence.popitem(last=False)
        frame = judp.JudpMessage(
            destination=to,
            source=self.options.component,
            payload=payload,
            sequence=sequence,
            ack_nak=judp.AckNak.ACK if ack else judp.AckNak.NONE,
        )
        out.datagrams.append((judp.pack_judp([frame]), address))


_R = TypeVar("_R", judp.LocalPose, judp.VelocityState)


def _only(record: _R, wanted: int) -> _R:
    """``record`` with only the fields whose presence bit is set in ``wanted``."""
    names = record.__dataclass_fields__
    values = {
        name: getattr(record, name) if wanted >> bit & 1 else None for bit, name in enumerate(names)
    }
    return type(record)(**values)


def _timestamp(stamp: float) -> int | None:
    """A wall-clock stamp as JAUS's UTC time-of-month bit field."""
    if not math.isfinite(stamp) or stamp < 0:
        return None
    t = dt.datetime.fromtimestamp(stamp, dt.UTC)
    return t.microsecond // 1000 | t.second << 10 | t.minute << 16 | t.hour << 22 | t.day << 27

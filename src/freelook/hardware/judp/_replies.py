"""What a JAUS robot says to the client: datagrams parsed, acknowledged and each message taken.

:class:`_Replies` is :class:`~._client.JausClient`'s input side (sans-I/O, as the client): the
identification and services found in discovery (:attr:`drive_service`, :attr:`controlled`),
control confirmed or taken away, the robot's status and timeout, and its sensors' reports, each
only from the component that offers that sensor.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from freelook.hardware.judp._motion import ReportedMotion
from freelook.hardware.judp._options import (
    LOCAL_POSE_SENSOR,
    MANAGEMENT,
    MANIPULATOR_JOINT_POSITION_SENSOR,
    PRIMITIVE_DRIVER,
    PRIMITIVE_MANIPULATOR,
    VELOCITY_STATE_DRIVER,
    VELOCITY_STATE_SENSOR,
    ClientOptions,
    Phase,
    _ok,
    _printable,
)
from freelook.judp import (
    AckNak,
    ComponentServices,
    ConfirmControl,
    ConfirmResponse,
    JausId,
    JausMessage,
    JudpError,
    JudpMessage,
    ManagementStatus,
    RejectControl,
    ReportControl,
    ReportIdentification,
    ReportJointPositions,
    ReportLocalPose,
    ReportServices,
    ReportStatus,
    ReportTimeout,
    ReportVelocityState,
    decode_message,
    pack_judp,
    parse_judp,
)

__all__: list[str] = []


class _Replies:
    """The robot's datagrams in (a mixin of :class:`~._client.JausClient`)."""

    options: ClientOptions
    phase: Phase
    robot: JausId | None
    robot_name: str
    services: dict[str, JausId]
    offered: tuple[ComponentServices, ...]
    timeout: float | None
    status: ManagementStatus | None
    joint_positions: tuple[float, ...] | None
    last_heard: float | None
    dropped: Counter[str]
    motion: ReportedMotion
    _due: dict[str, float]
    _granted: set[JausId]
    _sent_command: tuple[float, float, float] | None
    _set_phase: Callable[[Phase, float], None]
    _fail: Callable[[str, float], None]
    _fault: Callable[[str, float], None]
    _keep_alive_period: Callable[[], float]

    @property
    def drive_service(self) -> str | None:
        """The drive service used: the Velocity State Driver if offered, else the Primitive
        Driver, else None."""
        for uri in (VELOCITY_STATE_DRIVER, PRIMITIVE_DRIVER):
            if uri in self.services:
                return uri
        return None

    @property
    def has_arm(self) -> bool:
        return PRIMITIVE_MANIPULATOR in self.services

    @property
    def controlled(self) -> tuple[JausId, ...]:
        """The components control is asked of: those whose services are commanded."""
        used = (self.drive_service, PRIMITIVE_MANIPULATOR)
        return tuple(sorted({self.services[u] for u in used if u in self.services}))

    def receive(self, datagram: bytes, now: float) -> list[bytes]:
        """Take one datagram from the robot; returns acknowledgements it asked for."""
        try:
            messages = parse_judp(datagram)
        except JudpError:
            self.dropped["malformed datagram"] += 1
            return []
        out: list[bytes] = []
        for m in messages:
            if not m.destination.matches(self.options.own_id):
                self.dropped["not addressed to this client"] += 1
                continue
            if m.ack_nak == AckNak.REQUIRED:
                ack = JudpMessage(
                    m.source, self.options.own_id, b"", m.sequence, ack_nak=AckNak.ACK
                )
                out.append(pack_judp([ack]))
            if m.ack_nak in (AckNak.ACK, AckNak.NAK) and not m.payload:
                continue
            try:
                message = decode_message(m.code, m.body)
            except JudpError:
                self.dropped["malformed or unsupported message"] += 1
                continue
            self._handle(m.source, message, now)
        return out

    def _from_robot(self, source: JausId) -> bool:
        robot = self.robot
        return robot is not None and source.subsystem == robot.subsystem

    def _handle(self, source: JausId, message: JausMessage, now: float) -> None:
        if isinstance(message, ReportIdentification):
            if self.phase == Phase.DISCOVERING and self.robot is None:
                self.robot, self.robot_name = source, message.identification
                self.last_heard = now
                self._due.pop("identify", None)
                self._due["services"] = now
            return
        if not self._from_robot(source):
            self.dropped["from a component that is not the robot"] += 1
            return
        self.last_heard = now
        if isinstance(message, ReportServices):
            self._on_services(message, now)
        elif isinstance(message, ConfirmControl):
            self._on_confirm(source, message.response, now)
        elif isinstance(message, RejectControl):
            if source in self._granted or self.phase == Phase.READY:
                self._fault(
                    f"the robot's component {source} took control away "
                    f"(RejectControl {message.response.name})",
                    now,
                )
        elif isinstance(message, ReportControl):
            if self.phase == Phase.FAULT and source in self.controlled:
                if message.controller == self.options.own_id:
                    self._granted.add(source)
                else:
                    self._granted.discard(source)
            elif self.phase == Phase.READY and message.controller != self.options.own_id:
                who = message.controller
                holder = "nobody" if who == JausId(0, 0, 0) else f"{who}"
                self._fault(
                    f"the robot's component {source} is controlled by {holder} "
                    f"(authority {message.authority}), not by this client "
                    f"{self.options.own_id}",
                    now,
                )
        elif isinstance(message, ReportTimeout):
            self.timeout = float(message.timeout)
            if "keep_alive" in self._due:  # a shorter timeout than assumed: renew sooner
                soon = now + self._keep_alive_period()
                self._due["keep_alive"] = min(self._due["keep_alive"], soon)
        elif isinstance(message, ReportStatus):
            self._on_status(message.status, now)
        elif isinstance(message, ReportLocalPose | ReportVelocityState | ReportJointPositions):
            self._on_report(source, message, now)
        else:
            self.dropped[f"unexpected {_ok(message)}"] += 1

    def _on_report(
        self,
        source: JausId,
        message: ReportLocalPose | ReportVelocityState | ReportJointPositions,
        now: float,
    ) -> None:
        """A sensor's report, taken only from the component that offers that sensor."""
        if isinstance(message, ReportLocalPose):
            sensor = LOCAL_POSE_SENSOR
        elif isinstance(message, ReportVelocityState):
            sensor = VELOCITY_STATE_SENSOR
        else:
            sensor = MANIPULATOR_JOINT_POSITION_SENSOR
        if self.services.get(sensor) != source:
            self.dropped[f"{_ok(message)} from a component without that sensor"] += 1
        elif isinstance(message, ReportLocalPose):
            self.motion.on_pose(message.pose, now, VELOCITY_STATE_SENSOR in self.services)
        elif isinstance(message, ReportVelocityState):
            self.motion.on_velocity(message.state)
        else:
            self.joint_positions = tuple(v for _, v in message.positions)

    def _on_services(self, report: ReportServices, now: float) -> None:
        if self.phase != Phase.DISCOVERING or self.robot is None:
            return
        self.offered = report.components
        for entry in report.components:
            where = JausId(self.robot.subsystem, entry.node, entry.component)
            for service in entry.services:
                self.services.setdefault(service.uri, where)
        if self.drive_service is None:
            offered = sorted({_printable(s.uri) for c in report.components for s in c.services})
            self._fail(
                f"the JAUS robot {self.robot_name!r} ({self.robot}) offers neither a "
                f"Velocity State Driver nor a Primitive Driver (it offers: "
                f"{', '.join(offered) or 'nothing'})",
                now,
            )
            return
        self._set_phase(Phase.REQUESTING, now)
        self._due.update(control=now, timeout=now)

    def _on_confirm(self, source: JausId, response: ConfirmResponse, now: float) -> None:
        if source not in self.controlled:
            self.dropped["ConfirmControl from a component not asked"] += 1
            return
        if self.phase == Phase.FAULT and response != ConfirmResponse.CONTROL_ACCEPTED:
            self._granted.discard(source)  # asked again, refused: the fault stands as it was
            return
        if response != ConfirmResponse.CONTROL_ACCEPTED:
            what = (
                f"the robot's component {source} refused control to authority "
                f"{self.options.authority}: ConfirmControl {response.name}"
            )
            if self.phase == Phase.READY:
                self._fault(what, now)
            elif self.phase == Phase.REQUESTING:
                self._fail(what, now)
            return
        self._granted.add(source)
        if self.phase == Phase.FAULT:
            return  # held (stopped) until the operator recovers it
        if self.phase == Phase.REQUESTING and self._granted >= set(self.controlled):
            if MANAGEMENT in self.services:
                self._set_phase(Phase.RESUMING, now)
                self._due["status"] = now
            else:
                self._set_phase(Phase.READY, now)
                self._ready(now)

    def _on_status(self, status: ManagementStatus, now: float) -> None:
        self.status = status
        if status in (ManagementStatus.FAILURE, ManagementStatus.EMERGENCY):
            what = f"the robot reports {status.name}"
            if self.phase == Phase.READY:
                self._fault(what, now)
            elif self.phase == Phase.RESUMING:
                self._fail(what, now)
            return
        if self.phase != Phase.RESUMING:
            return
        if status == ManagementStatus.READY:
            self._set_phase(Phase.READY, now)
            self._ready(now)
        elif status == ManagementStatus.STANDBY:
            self._due["resume"] = now

    def _ready(self, now: float) -> None:
        self._due.update(sensors=now, keep_alive=now + self._keep_alive_period())
        self._sent_command = None

"""The client side of driving a JAUS robot, sans-I/O: datagrams and the time in, datagrams out.

Like :class:`~freelook.hardware.arcos.ArcosClient`, :class:`JausClient` owns no socket and no
clock: the caller feeds it what arrived with :meth:`~JausClient.receive`, writes what
:meth:`~JausClient.poll` returns and calls again by :meth:`~JausClient.next_deadline`.

One life: discovery (QueryIdentification to the broadcast id, then QueryServices of the
component that answered), Access Control (RequestControl with the configured authority to
every component it will command, QueryTimeout), Management (QueryStatus; Resume while the
robot is in Standby), then driving: SetVelocityCommand to a Velocity State Driver or else
SetWrenchEffort to a Primitive Driver, QueryLocalPose/QueryVelocityState for the odometry,
RequestControl and QueryControl again well before the robot's timeout. A RejectControl, a
ConfirmControl that is not CONTROL_ACCEPTED, a ReportControl naming someone else or an
EMERGENCY or FAILURE status is a fault, held until :meth:`~JausClient.recover` (the operator's
deliberate act) and said (``problem``). A fault fails safe: any one datagram can cause it (a
forged one too), so the client never falls silent in it but keeps sending zero commands and asks
for control again, so a robot that still obeys this client stops and stays stopped; the
operator's commands are not sent until :meth:`~JausClient.recover`. :meth:`~JausClient.close`
sends a stop and ReleaseControl.

Frames: JAUS's are z-down (y right, yaw clockwise); the client's inputs and outputs are
freelook's (y left, counter-clockwise), so y, yaw and yaw rate change sign on the wire. The pose
and velocity reports become odometry in :mod:`._motion`.

What the robot says is taken by :mod:`._replies`; the services, phases and options the
conversation is about are :mod:`._options`'.
"""

from __future__ import annotations

import math
from collections import Counter

from freelook.hal import OdometrySample
from freelook.hardware.judp._motion import ReportedMotion
from freelook.hardware.judp._options import (
    BROADCAST,
    LOCAL_POSE_SENSOR,
    MANAGEMENT,
    MANIPULATOR_JOINT_POSITION_SENSOR,
    PRIMITIVE_MANIPULATOR,
    VELOCITY_STATE_DRIVER,
    VELOCITY_STATE_SENSOR,
    ClientOptions,
    Phase,
    _ok,
)
from freelook.hardware.judp._replies import _Replies
from freelook.judp import (
    ComponentServices,
    JausId,
    JausMessage,
    JudpMessage,
    ManagementStatus,
    QueryControl,
    QueryIdentification,
    QueryJointPositions,
    QueryLocalPose,
    QueryServices,
    QueryStatus,
    QueryTimeout,
    QueryVelocityState,
    ReleaseControl,
    RequestControl,
    Resume,
    SetJointEffort,
    SetVelocityCommand,
    SetWrenchEffort,
    encode_message,
    pack_judp,
)

__all__ = ["JausClient"]


_POSE_FIELDS = 1 << 0 | 1 << 1 | 1 << 6 | 1 << 8  # X, Y, Yaw, TimeStamp
_VELOCITY_FIELDS = 1 << 0 | 1 << 1 | 1 << 6  # Velocity_X, Velocity_Y, YawRate
_SUBSYSTEM_QUERY = 2  # QueryIdentification: the subsystem (the robot)


class JausClient(_Replies):
    """One JAUS robot's conversation; see the module docstring."""

    def __init__(self, options: ClientOptions | None = None) -> None:
        self.options = options or ClientOptions()
        self.phase = Phase.DISCOVERING
        self.problem = ""  # why FAILED or FAULT
        self.robot: JausId | None = None  # the component that answered identification
        self.robot_name = ""
        self.services: dict[str, JausId] = {}  # service URI → the component offering it
        self.offered: tuple[ComponentServices, ...] = ()
        self.timeout: float | None = None  # the robot's control timeout, s (0: none)
        self.status: ManagementStatus | None = None
        self.joint_positions: tuple[float, ...] | None = None
        self.last_heard: float | None = None
        self.dropped: Counter[str] = Counter()
        self.motion = ReportedMotion(self.options, self.dropped)
        self.sent: Counter[str] = Counter()
        self._started: float | None = None
        self._phase_since = 0.0
        self._due: dict[str, float] = {}  # what is sent when (per kind)
        self._granted: set[JausId] = set()
        # the newest command and when it was given, one tuple: the robot program's thread
        # replaces it whole while the I/O thread reads it
        self._command: tuple[float, float, float, float] = (0.0, 0.0, 0.0, -math.inf)
        self._sent_command: tuple[float, float, float] | None = None
        self._arm: tuple[tuple[float, ...], float] | None = None  # efforts, when given
        self._sent_arm: tuple[float, ...] | None = None
        self._sequence = 0

    # -- what the robot offers and reports ----------------------------------------------------

    @property
    def odometry(self) -> OdometrySample | None:
        """The newest odometry the robot's pose reports gave (:mod:`._motion`)."""
        return self.motion.odometry

    @property
    def velocity(self) -> tuple[float, float, float] | None:
        """The newest body velocity the robot reported: vx, vy, ω (freelook's frame)."""
        return self.motion.velocity

    def connected(self, now: float) -> bool:
        """Ready to drive and heard from within the link timeout."""
        window = max(self.options.link_timeout, 2.0 * self._keep_alive_period())
        return (
            self.phase == Phase.READY
            and self.last_heard is not None
            and now - self.last_heard <= window
        )

    # -- commands -----------------------------------------------------------------------------

    def command(self, vx: float, vy: float, omega: float, now: float) -> None:
        """A body velocity (m/s, m/s, rad/s; freelook's frame); non-finite values stop."""
        if not all(math.isfinite(v) for v in (vx, vy, omega)):
            vx = vy = omega = 0.0
        self._command = (vx, vy, omega, now)

    def command_arm(self, efforts: tuple[float, ...], now: float) -> None:
        """Joint efforts in percent of each joint's maximum; non-finite values stop."""
        if not all(math.isfinite(e) for e in efforts):
            efforts = (0.0,) * len(efforts)
        self._arm = (tuple(max(-100.0, min(100.0, e)) for e in efforts), now)

    def close(self, now: float) -> list[bytes]:
        """A stop and ReleaseControl to every controlled component (after a fault: a stop,
        and ReleaseControl only of what the robot has confirmed this client holds since)."""
        out: list[bytes] = []
        if self.phase == Phase.FAULT:
            out += self._drive((0.0, 0.0, 0.0))
            out += [self._to(c, ReleaseControl()) for c in self.controlled if c in self._granted]
        elif self.phase in (Phase.READY, Phase.RESUMING, Phase.REQUESTING):
            if self.phase == Phase.READY:
                out += self._drive((0.0, 0.0, 0.0))
                if self.has_arm and self._arm is not None:
                    out.append(self._to(self.services[PRIMITIVE_MANIPULATOR], self._zero_arm()))
            out += [self._to(c, ReleaseControl()) for c in self.controlled]
        self._set_phase(Phase.CLOSED, now)
        return out

    def recover(self, now: float) -> bool:
        """The operator's deliberate act after a fault: control is asked for anew and driving
        resumes once granted, from a stop (a command given before the fault is not resumed).
        False (nothing done) when there is no fault to recover from."""
        if self.phase != Phase.FAULT:
            return False
        self.problem = ""
        self._granted.clear()
        self._command = (0.0, 0.0, 0.0, -math.inf)
        self._set_phase(Phase.REQUESTING, now)
        self._due.update(control=now, timeout=now)
        return True

    def _zero_arm(self) -> SetJointEffort:
        return SetJointEffort((0.0,) * (len(self._arm[0]) if self._arm else 0))

    # -- output -------------------------------------------------------------------------------

    def poll(self, now: float) -> list[bytes]:
        """The datagrams due now."""
        if self._started is None:
            self._started = self._phase_since = now
            self._due["identify"] = now
        phase = self.phase
        if phase in (Phase.FAILED, Phase.CLOSED):
            return []
        if phase == Phase.FAULT:
            return self._fault_cycle(now)
        out: list[bytes] = []
        waited = now - self._phase_since
        if phase == Phase.DISCOVERING:
            if waited > self.options.discovery_timeout:
                asked = "QueryIdentification" if self.robot is None else "QueryServices"
                self._fail(
                    f"no answer to {asked} within {self.options.discovery_timeout:.1f} s", now
                )
                return []
            if self.robot is None and self._take("identify", now, self.options.retry):
                out.append(self._to(BROADCAST, QueryIdentification(_SUBSYSTEM_QUERY)))
            elif self.robot is not None and self._take("services", now, self.options.retry):
                query = QueryServices(((self.robot.node, (self.robot.component,)),))
                out.append(self._to(self.robot, query))
            return out
        if phase in (Phase.REQUESTING, Phase.RESUMING):
            if waited > self.options.control_timeout:
                if phase == Phase.REQUESTING:
                    missing = sorted(set(self.controlled) - self._granted)
                    self._fail(
                        f"no ConfirmControl within {self.options.control_timeout:.1f} s to "
                        f"RequestControl (authority {self.options.authority}) from "
                        f"{', '.join(str(c) for c in missing)}",
                        now,
                    )
                else:
                    state = "no ReportStatus" if self.status is None else self.status.name
                    self._fail(
                        f"the robot is not Ready {self.options.control_timeout:.1f} s after "
                        f"control was granted (QueryStatus, Resume: {state})",
                        now,
                    )
                return []
            if phase == Phase.REQUESTING and self._take("control", now, self.options.retry):
                missing = [c for c in self.controlled if c not in self._granted]
                out += [self._to(c, RequestControl(self.options.authority)) for c in missing]
            if self._take("timeout", now, self.options.retry) and self.timeout is None:
                out.append(self._to(self.services[self.drive_service or ""], QueryTimeout()))
            if phase == Phase.RESUMING:
                where = self.services[MANAGEMENT]
                if self._due.get("resume", math.inf) <= now:
                    del self._due["resume"]
                    out.append(self._to(where, Resume()))
                    self._due["status"] = now
                if self._take("status", now, self.options.retry):
                    out.append(self._to(where, QueryStatus()))
            return out
        return self._drive_cycle(now)

    def _drive_cycle(self, now: float) -> list[bytes]:
        o = self.options
        out = self._keep_control(now)
        if self._take("sensors", now, o.sensor_period):
            if LOCAL_POSE_SENSOR in self.services:
                out.append(self._to(self.services[LOCAL_POSE_SENSOR], QueryLocalPose(_POSE_FIELDS)))
            if VELOCITY_STATE_SENSOR in self.services:
                query = QueryVelocityState(_VELOCITY_FIELDS)
                out.append(self._to(self.services[VELOCITY_STATE_SENSOR], query))
            if MANIPULATOR_JOINT_POSITION_SENSOR in self.services:
                where = self.services[MANIPULATOR_JOINT_POSITION_SENSOR]
                out.append(self._to(where, QueryJointPositions()))
        vx, vy, omega, given = self._command
        command = (vx, vy, omega) if now - given <= o.command_timeout else (0.0, 0.0, 0.0)
        if command != self._sent_command or self._take("drive", now, o.command_refresh):
            out += self._drive(command)
            self._sent_command = command
            self._due["drive"] = now + o.command_refresh
        held = self._arm
        if self.has_arm and held is not None:
            efforts, given = held
            arm = efforts if now - given <= o.command_timeout else (0.0,) * len(efforts)
            if arm != self._sent_arm or self._take("arm", now, o.command_refresh):
                where = self.services[PRIMITIVE_MANIPULATOR]
                out.append(self._to(where, SetJointEffort(arm)))
                self._sent_arm = arm
                self._due["arm"] = now + o.command_refresh
        return out

    def _keep_control(self, now: float) -> list[bytes]:
        """RequestControl and QueryControl to every controlled component, and QueryStatus,
        when the keep-alive period is due (driving, and asking again in a fault)."""
        if not self._take("keep_alive", now, self._keep_alive_period()):
            return []
        out: list[bytes] = []
        for c in self.controlled:
            out.append(self._to(c, RequestControl(self.options.authority)))
            out.append(self._to(c, QueryControl()))
        if MANAGEMENT in self.services:
            out.append(self._to(self.services[MANAGEMENT], QueryStatus()))
        return out

    def _fault_cycle(self, now: float) -> list[bytes]:
        """In a fault: a stop (and still arm) every refresh, control asked for again and its
        holder and the robot's status queried; none of the operator's commands."""
        o = self.options
        out = self._keep_control(now)
        if self._take("drive", now, o.command_refresh):
            out += self._drive((0.0, 0.0, 0.0))
            if self.has_arm and self._arm is not None:
                out.append(self._to(self.services[PRIMITIVE_MANIPULATOR], self._zero_arm()))
        return out

    def _drive(self, command: tuple[float, float, float]) -> list[bytes]:
        vx, vy, omega = command
        service = self.drive_service
        if service is None:
            return []
        where = self.services[service]
        o = self.options
        message: JausMessage
        if service == VELOCITY_STATE_DRIVER:
            message = SetVelocityCommand(0, (vx, -vy, None), (None, None, -omega))
        else:

            def pct(value: float, limit: float) -> float:
                return max(-100.0, min(100.0, 100.0 * value / limit))

            message = SetWrenchEffort(
                (pct(vx, o.max_speed), pct(-vy, o.max_speed), None),
                (None, None, pct(-omega, o.max_turn_rate)),
            )
        return [self._to(where, message)]

    def _keep_alive_period(self) -> float:
        """Well inside the robot's control timeout: a third of it, at most keep_alive."""
        if not self.timeout:
            return self.options.keep_alive
        return max(0.05, min(self.options.keep_alive, self.timeout / 3.0))

    def next_deadline(self) -> float | None:
        """When :meth:`poll` next has something to send (None: nothing planned)."""
        if self.phase in (Phase.FAILED, Phase.CLOSED):
            return None
        return min(self._due.values(), default=None)

    # -- helpers ------------------------------------------------------------------------------

    def _take(self, kind: str, now: float, period: float) -> bool:
        due = self._due.get(kind)
        if due is None or now < due:
            return False
        self._due[kind] = now + period
        return True

    def _to(self, destination: JausId, message: JausMessage) -> bytes:
        self.sent[_ok(message)] += 1
        self._sequence = (self._sequence + 1) & 0xFFFF
        payload = encode_message(message)
        return pack_judp([JudpMessage(destination, self.options.own_id, payload, self._sequence)])

    def _set_phase(self, phase: Phase, now: float) -> None:
        self.phase = phase
        self._phase_since = now
        self._due.clear()  # each phase plans its own sends

    def _fail(self, problem: str, now: float) -> None:
        self.problem = problem
        self._set_phase(Phase.FAILED, now)

    def _fault(self, problem: str, now: float) -> None:
        self.problem = problem
        self._set_phase(Phase.FAULT, now)
        self._granted.clear()  # held again only once the robot confirms it
        self._due.update(drive=now, keep_alive=now)  # the first stop goes out at once

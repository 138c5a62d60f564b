"""Discovery, management, access-control queries (AS5710 core) and manipulator (AS6057)
messages, sans-I/O: what a client needs to find a robot's services, take it and keep it.

Layouts follow the JAUS Tool Set's JSIDL (``urn.jaus.jss.core-v1.1``, the manipulator set);
lists are a u8 count then the records, strings a u8 length then UTF-8 bytes.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from enum import IntEnum

from freelook.judp._fields import Reader, Scaled, enum_value
from freelook.judp._framing import JausId, JudpError

__all__ = [
    "JOINT_EFFORT",
    "PRISMATIC_POSITION",
    "REVOLUTE_POSITION",
    "ComponentServices",
    "ManagementStatus",
    "QueryControl",
    "QueryJointPositions",
    "QueryServices",
    "QueryStatus",
    "QueryTimeout",
    "ReportControl",
    "ReportJointPositions",
    "ReportServices",
    "ReportStatus",
    "ReportTimeout",
    "Resume",
    "ServiceMessage",
    "ServiceRecord",
    "SetJointEffort",
    "Standby",
    "decode_service_message",
    "encode_service_message",
]

#: AS6057 joint fields (as the JSIDL manipulator set scales them)
JOINT_EFFORT = Scaled("H", -100.0, 100.0)  # percent of maximum
REVOLUTE_POSITION = Scaled("I", -8.0 * math.pi, 8.0 * math.pi)  # rad
PRISMATIC_POSITION = Scaled("I", -10.0, 10.0)  # m
_MAX_LIST = 255


class ManagementStatus(IntEnum):
    INIT = 0
    READY = 1
    STANDBY = 2
    SHUTDOWN = 3
    FAILURE = 4
    EMERGENCY = 5


@dataclass(frozen=True, slots=True)
class Standby:
    CODE = 0x0003


@dataclass(frozen=True, slots=True)
class Resume:
    CODE = 0x0004


@dataclass(frozen=True, slots=True)
class QueryStatus:
    CODE = 0x2002


@dataclass(frozen=True, slots=True)
class ReportStatus:
    """The component's state; ``reserved`` the standard's reserved u32, kept as read so what
    decodes re-encodes to the same bytes."""

    status: ManagementStatus
    reserved: int = 0
    CODE = 0x4002


@dataclass(frozen=True, slots=True)
class QueryTimeout:
    CODE = 0x2003


@dataclass(frozen=True, slots=True)
class ReportTimeout:
    """The access-control timeout in seconds (0: control never times out)."""

    timeout: int
    CODE = 0x4003


@dataclass(frozen=True, slots=True)
class QueryControl:
    CODE = 0x200D


@dataclass(frozen=True, slots=True)
class ReportControl:
    """Who controls the component (0.0.0 for nobody) and with which authority."""

    controller: JausId
    authority: int
    CODE = 0x400D


@dataclass(frozen=True, slots=True)
class QueryServices:
    """The services of the listed components: (node id, (component ids…)) per node."""

    nodes: tuple[tuple[int, tuple[int, ...]], ...]
    CODE = 0x2B03


@dataclass(frozen=True, slots=True)
class ServiceRecord:
    uri: str  # e.g. "urn:jaus:jss:mobility:PrimitiveDriver"
    major: int
    minor: int


@dataclass(frozen=True, slots=True)
class ComponentServices:
    node: int
    component: int
    instance: int
    services: tuple[ServiceRecord, ...]


@dataclass(frozen=True, slots=True)
class ReportServices:
    components: tuple[ComponentServices, ...]
    CODE = 0x4B03


@dataclass(frozen=True, slots=True)
class SetJointEffort:
    """Each joint's effort in percent of its maximum (Primitive Manipulator)."""

    efforts: tuple[float, ...]
    CODE = 0x0601


@dataclass(frozen=True, slots=True)
class QueryJointPositions:
    CODE = 0x2602


@dataclass(frozen=True, slots=True)
class ReportJointPositions:
    """Each joint's position: (True, rad) for a revolute joint, (False, m) for a prismatic one."""

    positions: tuple[tuple[bool, float], ...]
    CODE = 0x4602


ServiceMessage = (
    Standby
    | Resume
    | QueryStatus
    | ReportStatus
    | QueryTimeout
    | ReportTimeout
    | QueryControl
    | ReportControl
    | QueryServices
    | ReportServices
    | SetJointEffort
    | QueryJointPositions
    | ReportJointPositions
)

_EMPTY: dict[int, ServiceMessage] = {
    m.CODE: m
    for m in (
        Standby(),
        Resume(),
        QueryStatus(),
        QueryTimeout(),
        QueryControl(),
        QueryJointPositions(),
    )
}
_EMPTY_TYPES = (Standby, Resume, QueryStatus, QueryTimeout, QueryControl, QueryJointPositions)


def _string(r: Reader) -> str:
    raw = bytes(r.take("B") for _ in range(r.take("B")))
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise JudpError("a string that is not UTF-8") from None


def _pack_string(text: str) -> bytes:
    raw = text.encode()
    if len(raw) > _MAX_LIST:
        raise JudpError(f"string of {len(raw)} bytes is longer than 255")
    return struct.pack("<B", len(raw)) + raw


def _count(n: int, what: str) -> bytes:
    if n > _MAX_LIST:
        raise JudpError(f"{n} {what}: a JAUS list holds at most {_MAX_LIST}")
    return struct.pack("<B", n)


def decode_service_message(code: int, r: Reader) -> ServiceMessage | None:
    """The message ``code`` names, read from ``r`` (None: a code this module does not know)."""
    if code in _EMPTY:
        return _EMPTY[code]
    if code == ReportStatus.CODE:
        status = enum_value(ManagementStatus, r.take("B"))
        return ReportStatus(status, r.take("I"))
    if code == ReportTimeout.CODE:
        return ReportTimeout(r.take("B"))
    if code == ReportControl.CODE:
        subsystem, node, component = r.take("H"), r.take("B"), r.take("B")
        return ReportControl(JausId(subsystem, node, component), r.take("B"))
    if code == QueryServices.CODE:
        nodes = []
        for _ in range(r.take("B")):
            node = r.take("B")
            nodes.append((node, tuple(r.take("B") for _ in range(r.take("B")))))
        return QueryServices(tuple(nodes))
    if code == ReportServices.CODE:
        components = []
        for _ in range(r.take("B")):
            node = r.take("B")
            for _ in range(r.take("B")):
                component, instance = r.take("B"), r.take("B")
                services = []
                for _ in range(r.take("B")):
                    uri = _string(r)
                    services.append(ServiceRecord(uri, r.take("B"), r.take("B")))
                components.append(ComponentServices(node, component, instance, tuple(services)))
        return ReportServices(tuple(components))
    if code == SetJointEffort.CODE:
        count = r.take("B")
        return SetJointEffort(tuple(JOINT_EFFORT.decode(r.take("H")) for _ in range(count)))
    if code == ReportJointPositions.CODE:
        positions = []
        for _ in range(r.take("B")):
            kind = r.take("B")
            if kind == 0:
                positions.append((True, REVOLUTE_POSITION.decode(r.take("I"))))
            elif kind == 1:
                positions.append((False, PRISMATIC_POSITION.decode(r.take("I"))))
            else:
                raise JudpError(f"joint position type {kind} is not defined (0 or 1)")
        return ReportJointPositions(tuple(positions))
    return None


def encode_service_message(message: ServiceMessage) -> bytes:
    """The body (after the message code) of ``message``."""
    if isinstance(message, _EMPTY_TYPES):
        return b""
    if isinstance(message, ReportStatus):
        return struct.pack("<BI", int(message.status), message.reserved)
    if isinstance(message, ReportTimeout):
        return struct.pack("<B", message.timeout)
    if isinstance(message, ReportControl):
        who = message.controller
        return struct.pack("<HBBB", who.subsystem, who.node, who.component, message.authority)
    if isinstance(message, QueryServices):
        out = bytearray(_count(len(message.nodes), "nodes"))
        for node, components in message.nodes:
            out += struct.pack("<B", node) + _count(len(components), "components")
            out += bytes(components)
        return bytes(out)
    if isinstance(message, ReportServices):
        by_node: dict[int, list[ComponentServices]] = {}
        for entry in message.components:
            by_node.setdefault(entry.node, []).append(entry)
        out = bytearray(_count(len(by_node), "nodes"))
        for node, entries in by_node.items():
            out += struct.pack("<B", node) + _count(len(entries), "components")
            for c in entries:
                out += struct.pack("<BB", c.component, c.instance)
                out += _count(len(c.services), "services")
                for s in c.services:
                    out += _pack_string(s.uri) + struct.pack("<BB", s.major, s.minor)
        return bytes(out)
    if isinstance(message, SetJointEffort):
        out = bytearray(_count(len(message.efforts), "joints"))
        for effort in message.efforts:
            out += struct.pack("<H", JOINT_EFFORT.encode(effort))
        return bytes(out)
    out = bytearray(_count(len(message.positions), "joints"))
    for revolute, value in message.positions:
        field = REVOLUTE_POSITION if revolute else PRISMATIC_POSITION
        out += struct.pack("<BI", 0 if revolute else 1, field.encode(value))
    return bytes(out)

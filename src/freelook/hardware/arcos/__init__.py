"""ARCOS: Pioneer robots and MobileSim behind the robot program's hardware interfaces.

:class:`ArcosRobot` connects over TCP (``arcos://HOST:PORT``, MobileSim's 8101) or a serial
port (``arcos:///dev/ttyUSB0[?baud=N]``), keeps the link up and exposes ``.hardware``.
Underneath, :class:`ArcosClient` is the whole protocol as a sans-I/O state machine, and the
packet codec (:class:`PacketDecoder`, :func:`encode_command`, :func:`parse_sip`) is usable alone.
:func:`open_arcos_server` puts the robot program on such a robot.
"""

from freelook.hardware.arcos._client import (
    ANGLE_UNIT,
    ArcosClient,
    ArcosEvent,
    ArcosStats,
    ClientState,
    Closed,
    Connected,
    HandshakeFailed,
    LinkLost,
    SipReceived,
    SonarReading,
)
from freelook.hardware.arcos._errors import ArcosError
from freelook.hardware.arcos._hal import PIONEER_3DX_SONAR, SonarLayout, arcos_hardware
from freelook.hardware.arcos._io import ArcosAddress, parse_arcos_url
from freelook.hardware.arcos._packets import (
    MAX_PAYLOAD,
    ArgType,
    Command,
    PacketDecoder,
    Sip,
    checksum,
    encode_command,
    encode_packet,
    parse_sip,
)
from freelook.hardware.arcos._robot import ArcosRobot
from freelook.hardware.arcos._server import open_arcos_server

__all__ = [
    "ANGLE_UNIT",
    "MAX_PAYLOAD",
    "PIONEER_3DX_SONAR",
    "ArcosAddress",
    "ArcosClient",
    "ArcosError",
    "ArcosEvent",
    "ArcosRobot",
    "ArcosStats",
    "ArgType",
    "ClientState",
    "Closed",
    "Command",
    "Connected",
    "HandshakeFailed",
    "LinkLost",
    "PacketDecoder",
    "Sip",
    "SipReceived",
    "SonarLayout",
    "SonarReading",
    "arcos_hardware",
    "checksum",
    "encode_command",
    "encode_packet",
    "open_arcos_server",
    "parse_arcos_url",
    "parse_sip",
]

"""The transport table: a URL scheme → how its URLs are written, parsed and opened.

:data:`TRANSPORTS` maps a URL scheme to its :class:`Transport`: the parser of its URLs, how an
end opens it (:meth:`Transport.open`, the robot's end or a station's, into an
:class:`~freelook.link._transport.Endpoint`) and how the link frames packets on it. Nothing
else in freelook tests a scheme: a new transport adds one entry, here, with
:func:`register_transport`, or from an installed package's ``freelook.transports`` entry point
(``link/_plugins.py``), and the robot server, the station and the JAUS gateway open it
as they open UDP.

What differs between transports on one side is said by the side (:class:`Side`: the kernel
filter it wants, the one peer a robot hears, the bus it shares, the keys a bus checks) and by
the endpoint (its local address, its link rate): each transport takes what applies to it.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal
from urllib.parse import parse_qs, urlparse

from freelook.errors import ConfigError
from freelook.link._plugins import TRANSPORTS_GROUP, install_plugins, installed_plugin
from freelook.link._transport import Endpoint, LinkRate, SerialEndpoint, UdpEndpoint
from freelook.link._udp_socket import Address
from freelook.link._zenoh import RobotInfo, ZenohBus, ZenohEndpoint, check_robot_name

if TYPE_CHECKING:
    from freelook.link._keys import KeyRing

__all__ = [
    "TRANSPORTS",
    "Side",
    "Transport",
    "TransportUrl",
    "known_transports",
    "parse_transport_url",
    "register_transport",
    "transport_for",
]

Framing = Literal["datagram", "stream"]


@dataclass(frozen=True, slots=True)
class TransportUrl:
    scheme: str  # a key of TRANSPORTS: "udp", "serial", "zenoh" or an installed one
    host: str = ""
    port: int = 0
    device: str = ""
    baud: int = 921600
    robot: str = ""  # zenoh: the robot's name on the bus
    mode: str = "peer"  # zenoh: "peer" (listen or connect at HOST:PORT) or "client" (a router's)
    tls: bool = False  # zenoh: the link to the router is TLS (zenoh+tls://, a relay)
    #: zenoh+tls: further relays (HOST, PORT), in order, tried when the first cannot be reached
    more_relays: tuple[tuple[str, int], ...] = ()
    #: zenoh+tls ``?direct``: punch a direct UDP path beside the relay when the NATs allow
    direct: bool = False

    @property
    def transport(self) -> Transport:
        """The entry of :data:`TRANSPORTS` that serves this URL."""
        return transport_for(self.scheme)

    @property
    def zenoh_endpoint(self) -> str:
        """``tcp/HOST:PORT`` (Zenoh's spelling of the address)."""
        return _zenoh_endpoint(self.host, self.port)

    @property
    def zenoh_endpoints(self) -> list[str]:
        """The first address's Zenoh endpoint, then each further relay's, in order."""
        return [self.zenoh_endpoint, *(_zenoh_endpoint(h, p) for h, p in self.more_relays)]


def _zenoh_endpoint(host: str, port: int) -> str:
    return f"tcp/[{host}]:{port}" if ":" in host else f"tcp/{host}:{port}"


MAX_BAUD = 16_000_000  # beyond any serial radio or USB adapter


def parse_transport_url(url: str) -> TransportUrl:
    """``udp://HOST:PORT``, ``serial:///dev/ttyUSB0?baud=921600``,
    ``zenoh://HOST:PORT/ROBOT[?mode=client]`` (peer mode: the robot listens at HOST:PORT and
    stations connect there; client mode: both connect to a Zenoh router at HOST:PORT) or
    ``zenoh+tls://RELAY:PORT/ROBOT`` (both connect out to a relay, ``freelook relay``, on TLS).

    Anything else raises :class:`ConfigError` with a one-line message naming the URL."""
    if not url.isprintable() or any(c.isspace() for c in url):
        raise ConfigError(f"{url!r}: a transport URL has no spaces or control characters")
    try:
        parsed = _parse(url)
    except ValueError as err:  # urllib's own refusals: an open bracket, a bad IPv6 literal
        raise ConfigError(f"{url}: not a transport URL ({err})") from None
    if parsed.host and not _HOST.fullmatch(parsed.host):
        raise ConfigError(f"{url}: {parsed.host!r} is not a host name or address")
    return parsed


_HOST = re.compile(r"[A-Za-z0-9._:%-]{1,253}")


def _parse(url: str) -> TransportUrl:
    scheme = urlparse(url).scheme
    transport = installed_plugin(TRANSPORTS, TRANSPORTS_GROUP, scheme, Transport)
    if transport is None:
        raise ConfigError(f"{url}: unknown transport (use {known_transports()})")
    return transport.parse(url)


def _udp_url(url: str) -> TransportUrl:
    parsed = urlparse(url)
    try:
        port = parsed.port
    except ValueError:  # not a number, or outside 0–65535
        raise ConfigError(f"{url}: expected udp://HOST:PORT with a port 0–65535") from None
    if not parsed.hostname or port is None:
        raise ConfigError(f"{url}: expected udp://HOST:PORT")
    return TransportUrl("udp", parsed.hostname, port)


def _serial_url(url: str) -> TransportUrl:
    parsed = urlparse(url)
    if not parsed.path:
        raise ConfigError(f"{url}: expected serial:///dev/DEVICE[?baud=N]")
    baud = parse_qs(parsed.query).get("baud", ["921600"])[0]
    if not (baud.isascii() and baud.isdigit() and 50 <= int(baud) <= MAX_BAUD):
        raise ConfigError(f"{url}: baud must be a whole number 50…{MAX_BAUD}, got {baud!r}")
    return TransportUrl("serial", device=parsed.path, baud=int(baud))


def _zenoh_url(url: str) -> TransportUrl:
    parsed = urlparse(url)
    try:
        port = parsed.port
    except ValueError:
        port = None
    robot = parsed.path.strip("/")
    if not parsed.hostname or port is None or not robot or "/" in robot:
        raise ConfigError(f"{url}: expected zenoh://HOST:PORT/ROBOT[?mode=peer|client]")
    mode = parse_qs(parsed.query).get("mode", ["peer"])[0]
    if mode not in ("peer", "client"):
        raise ConfigError(f"{url}: mode must be peer or client, got {mode!r}")
    return TransportUrl("zenoh", parsed.hostname, port, robot=check_robot_name(robot), mode=mode)


def _relay_url(url: str) -> TransportUrl:
    """``zenoh+tls://RELAY:PORT[,RELAY:PORT...]/ROBOT``: one relay, or several in order (both
    ends connect to the first they reach, and to the next when it is lost)."""
    usage = f"{url}: expected zenoh+tls://RELAY:PORT/ROBOT (or RELAY:PORT,RELAY:PORT,...)"
    parsed = urlparse(url)
    robot = parsed.path.strip("/")
    if not robot or "/" in robot or parsed.query not in ("", "direct") or "@" in parsed.netloc:
        raise ConfigError(usage)
    relays = []
    for address in parsed.netloc.split(","):
        try:
            one = urlparse(f"//{address}")
            port = one.port
        except ValueError:
            port = None
        if not one.hostname or port is None or not _HOST.fullmatch(one.hostname):
            raise ConfigError(usage)
        relays.append((one.hostname, port))
    (host, port), *more = relays
    return TransportUrl(
        "zenoh", host, port, robot=check_robot_name(robot), mode="client", tls=True,
        more_relays=tuple(more), direct=parsed.query == "direct",
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Side:
    """The end that opens a transport, and what it asks of it (each transport takes what
    applies to it and leaves the rest)."""

    role: Literal["robot", "station"]  # the robot's end, or a station's (or the gateway's)
    #: (prefix, least length): the kernel may drop whatever cannot be a packet (UDP)
    kernel_filter: tuple[bytes, int] | None = None
    peer: Address | None = None  # a robot on UDP: hear and answer this address alone
    follow: bool = False  # a station on UDP: follow a robot whose address changes
    link_rate: float | None = None  # UDP, Zenoh: bit/s the link carries (None: not limited)
    bus: ZenohBus | None = None  # a Zenoh bus shared with other ends; None: one of its own
    keys: KeyRing | None = None  # a robot's station keys, checked by the bus it opens
    key: bytes | None = None  # the key an end logs in to an authenticated bus with
    model: str = ""  # a robot: the model it says it is on a bus
    wire: str = "native"  # a robot: the wire profile it says it speaks on a bus


Opener = Callable[["TransportUrl", Side], Awaitable[Endpoint]]


@dataclass(frozen=True, slots=True)
class Transport:
    """One entry of :data:`TRANSPORTS`."""

    usage: str  # how its URL is written, for the error that lists them
    parse: Callable[[str], TransportUrl]  # a URL of this scheme, checked (ConfigError if not)
    #: the endpoint of one side on a URL of this scheme (ConfigError when it cannot be opened)
    open: Opener
    framing: Framing = "datagram"  # "stream": a byte stream the link resynchronises on
    #: robots on it are found by name on one Zenoh bus (``fleet list``, the fleet station)
    shared_bus: bool = False


async def _open_udp(url: TransportUrl, side: Side) -> Endpoint:
    """A robot listens at the URL (answering ``side.peer`` alone when given); a station
    connects to it from wherever the route leaves."""
    if side.role == "robot":
        endpoint = await UdpEndpoint.open((url.host, url.port), remote=side.peer)
    else:
        endpoint = await UdpEndpoint.open(None, (url.host, url.port), follow=side.follow)
    if side.kernel_filter is not None:  # what cannot be a packet never leaves the kernel
        endpoint.drop_in_kernel_unless(*side.kernel_filter)
    if side.link_rate is not None:
        endpoint.link_rate = LinkRate(side.link_rate, stream=False)
    return endpoint


async def _open_serial(url: TransportUrl, side: Side) -> Endpoint:
    """Either end opens its own serial port (a USB radio node)."""
    return SerialEndpoint(url.device, url.baud)


async def _open_zenoh(url: TransportUrl, side: Side) -> Endpoint:
    """The robot's end (listening in peer mode) or a station's end, on the bus ``side``
    shares, or on one of its own that the endpoint closes when it closes."""
    bus = side.bus
    own = bus is None
    if bus is None:
        robot = side.role == "robot"
        bus = ZenohBus.for_url(url, listen=robot, keys=side.keys if robot else None, key=side.key)
    try:
        if url.direct:
            endpoint = await _direct(bus, url, side)
        elif side.role == "robot":
            endpoint = bus.robot(RobotInfo(url.robot, side.model, side.wire))
        else:
            endpoint = bus.station(url.robot)
    except BaseException:
        if own:
            bus.close()
        raise
    endpoint.owns_bus = own
    if side.link_rate is not None:  # an LTE modem's uplink, say: video fits in what is left
        endpoint.link_rate = LinkRate(side.link_rate, stream=False)
    return endpoint


async def _direct(bus: ZenohBus, url: TransportUrl, side: Side) -> ZenohEndpoint:
    """An end on the relay that punches a direct path, its STUN reflector the first relay's
    address and port on UDP."""
    from freelook.link._direct_zenoh import open_direct

    info = RobotInfo(url.robot, side.model, side.wire) if side.role == "robot" else None
    return await open_direct(
        bus, check_robot_name(url.robot), side.role, (url.host, url.port), info
    )


#: URL scheme → its transport (python-can's ``BACKENDS``, by URL scheme).
TRANSPORTS: dict[str, Transport] = {
    "udp": Transport("udp://HOST:PORT", _udp_url, _open_udp),
    "serial": Transport("serial:///dev/…", _serial_url, _open_serial, framing="stream"),
    "zenoh": Transport("zenoh://HOST:PORT/ROBOT", _zenoh_url, _open_zenoh, shared_bus=True),
    "zenoh+tls": Transport(
        "zenoh+tls://RELAY:PORT/ROBOT", _relay_url, _open_zenoh, shared_bus=True
    ),
}


def register_transport(scheme: str, transport: Transport) -> None:
    """Add a transport under ``scheme`` (a name no other transport has)."""
    if scheme in TRANSPORTS:
        raise ValueError(f"a transport already serves {scheme!r}")
    TRANSPORTS[scheme] = transport


def transport_for(scheme: str) -> Transport:
    """The transport serving ``scheme`` (registered, or installed by a package)."""
    transport = installed_plugin(TRANSPORTS, TRANSPORTS_GROUP, scheme, Transport)
    if transport is None:
        raise ConfigError(f"{scheme}: unknown transport (use {known_transports()})")
    return transport


def known_transports() -> str:
    """How every transport's URL is written (installed ones too), for an error message."""
    install_plugins(TRANSPORTS, TRANSPORTS_GROUP, Transport)
    *rest, last = [transport.usage for transport in TRANSPORTS.values()]
    return f"{', '.join(rest)} or {last}" if rest else last

"""``freelook sim`` and ``freelook operator``: the processes that make up a session, wired up."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as dt
import errno
import logging
import math
import secrets
import socket
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import uvicorn
from starlette.types import ASGIApp

from freelook.config import PhysicalTruth, RobotConfig, physical_robot
from freelook.errors import ConfigError
from freelook.hardware.sim import simulated_server
from freelook.link import LinkShaping, TransportUrl, VideoCodec
from freelook.maps import World
from freelook.operator import FoxgloveBridge, OperatorStation
from freelook.record import BackgroundRecorder, Recorder, RecorderStats, RosStreams, Tee
from freelook.robot import ServerOptions
from freelook.web import cockpit_server, create_app, is_loopback, new_token

__all__ = [
    "SessionOptions",
    "WebAccess",
    "default_run_path",
    "listen_web",
    "recorded_line",
    "run_operator",
    "run_session",
    "web_access",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SessionOptions:
    host: str = "127.0.0.1"
    port: int = 8080
    record: Path | None = None  # None: no recording
    open_browser: bool = True
    seed: int = 0
    wire: str = "native"
    key: bytes | None = None
    camera: bool = True
    certfile: Path | None = None  # TLS for the cockpit (with keyfile)
    keyfile: Path | None = None
    station: int = 1  # this station's id on the link (its key's entry in a keys file)
    start: tuple[float, float, float] | None = None  # the simulated robot's start; None: the map's
    foxglove: int | None = None  # the live Foxglove bridge's port (0: any free one); None: off
    #: the simulated robot differs from its description by its error model (off: a demo robot
    #: that is exactly its description)
    error_model: bool = True
    video: VideoCodec = VideoCodec.JPEG  # the driving camera's codec
    #: the link rehearsed on this machine (with sim: each way; its seed, and the next for the
    #: robot's way); None: not shaped
    shaping: LinkShaping | None = None


def _robot_way(shaping: LinkShaping | None) -> LinkShaping | None:
    """The shaping of the robot's way of a simulated session: the same, its own draws."""
    return None if shaping is None else dataclasses.replace(shaping, seed=shaping.seed + 1)


def _physical_robot(config: RobotConfig, options: SessionOptions) -> PhysicalTruth | None:
    """The simulated robot's physics: its error model's draw for the session's seed (None:
    the model is off, or the robot has none)."""
    return physical_robot(config, options.seed) if options.error_model else None


@dataclass(frozen=True)
class WebAccess:
    """How the cockpit of one launch is reached: its random token and the URL to announce."""

    host: str
    port: int
    token: str
    tls: bool = False

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    @property
    def url(self) -> str:
        """The URL to open, token included (a wildcard address is shown as loopback)."""
        shown = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(self.host, self.host)
        if ":" in shown:
            shown = f"[{shown}]"
        return f"{'https' if self.tls else 'http'}://{shown}:{self.port}/?token={self.token}"

    def warnings(self) -> list[str]:
        """What the operator must hear before anyone connects."""
        if self.loopback or self.tls:
            return []
        return [
            f"WARNING: the cockpit listens on {self.host}:{self.port} beyond loopback WITHOUT "
            "TLS: anyone on the network can read the token and the video, and take the robot. "
            "Use --certfile/--keyfile, or --host 127.0.0.1 with an SSH tunnel."
        ]


def web_access(options: SessionOptions) -> WebAccess:
    """A fresh token for this launch (needed on loopback too: any web page the operator has
    open can reach loopback) and whether TLS is on; TLS needs both files, and they must exist."""
    if (options.certfile is None) != (options.keyfile is None):
        raise ConfigError("TLS needs both --certfile and --keyfile")
    for path in (options.certfile, options.keyfile):
        if path is not None and not path.is_file():
            raise ConfigError(f"{path}: no such file (TLS certificate or key)")
    return WebAccess(options.host, options.port, new_token(), options.certfile is not None)


def listen_web(host: str, port: int) -> list[socket.socket]:
    """The cockpit's listening sockets on ``host``:``port``, bound before anything else of a
    session starts: a port in use or out of range is a one-line :class:`ConfigError` naming
    the address, and nothing (a recording, a robot) is left behind."""
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if not 0 <= port <= 65535:
        raise ConfigError(f"cannot serve the cockpit on {where}: a port is 0–65535 (--port)")
    try:
        found = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except (socket.gaierror, UnicodeError) as err:
        raise ConfigError(f"cannot serve the cockpit on {where}: {err}") from None
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(found):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as asyncio does
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind((address[0], port, *address[2:]))
            if port == 0:  # any free port: the same one on the next addresses
                port = int(sock.getsockname()[1])
    except OSError as err:
        for sock in sockets:
            sock.close()
        hint = "; another program holds it: pick another with --port"
        reason = err.strerror or str(err)
        raise ConfigError(
            f"cannot serve the cockpit on {where}: {reason}"
            + (hint if err.errno == errno.EADDRINUSE else "")
        ) from None
    return sockets


def _bound(access: WebAccess, sockets: list[socket.socket]) -> WebAccess:
    """``access`` with the port the sockets hold (``--port 0``: the one the system gave)."""
    return dataclasses.replace(access, port=int(sockets[0].getsockname()[1]))


def _web_server(app: ASGIApp, options: SessionOptions) -> uvicorn.Server:
    return cockpit_server(
        app, options.host, options.port, certfile=options.certfile, keyfile=options.keyfile
    )


def _announce_access(access: WebAccess, announce: Callable[[str], None]) -> None:
    for line in access.warnings():
        log.warning("%s", line)
        announce(line)


def _foxglove_bridge(
    config: RobotConfig, options: SessionOptions, access: WebAccess, announce: Callable[[str], None]
) -> FoxgloveBridge | None:
    """The live Foxglove bridge on the cockpit's address and TLS; teleop needs its token."""
    if options.foxglove is None:
        return None
    bridge = FoxgloveBridge(
        access.token,
        max_speed=config.limits.max_speed,
        max_turn_rate=math.radians(config.limits.max_turn_rate_deg),
        host=options.host,
        port=options.foxglove,
        certfile=options.certfile,
        keyfile=options.keyfile,
    )
    where = f"{options.host}:{options.foxglove}"
    if not 0 <= options.foxglove <= 65535:
        raise ConfigError(f"cannot serve Foxglove on {where}: a port is 0–65535 (--foxglove)")
    try:
        port = bridge.start()
    except RuntimeError as err:  # foxglove-sdk's error: a port in use, an address not here
        raise ConfigError(
            f"cannot serve Foxglove on {where}: {err}; pick another with --foxglove"
        ) from None
    announce(
        f"Foxglove: {'wss' if access.tls else 'ws'}://{options.host}:{port} "
        '(to drive, publish {"token": TOKEN} on /freelook/auth)'
    )
    return bridge


def _background(
    recorder: Recorder | None, bridge: FoxgloveBridge | None
) -> BackgroundRecorder | None:
    """One background writer for the file and the live view (either, both or none)."""
    sinks: list[RosStreams] = [] if recorder is None else [recorder]
    if bridge is not None:
        sinks.append(bridge.streams)
    if not sinks:
        return None
    return BackgroundRecorder(sinks[0] if len(sinks) == 1 else Tee(*sinks))


def recorded_line(stats: RecorderStats) -> str:
    """What a finished recording says of itself: the messages its file holds (each queued
    write, a telemetry say, is many of them), and the writes lost."""
    count = stats.messages if stats.messages is not None else stats.written
    lost = []
    if stats.dropped:
        lost.append(f"{stats.dropped} writes dropped: the disk fell behind")
    if stats.errors:
        lost.append(f"{stats.errors} writes failed (logged)")
    return f"recorded {count} messages" + (f" ({'; '.join(lost)})" if lost else "")


def _recorder(options: SessionOptions, config: RobotConfig, world: str) -> Recorder | None:
    """The recording ``--record`` asks for (its folder made), or None."""
    if options.record is None:
        return None
    options.record.parent.mkdir(parents=True, exist_ok=True)
    return Recorder(
        options.record, metadata={"robot": config.name, "world": world, "wire": options.wire}
    )


def _open_page(options: SessionOptions, url: str, announce: Callable[[str], None]) -> None:
    """Say where the recording goes, and open the cockpit in a browser when asked."""
    if options.record is not None:
        announce(f"recording to {options.record}")
    if options.open_browser:
        with contextlib.suppress(Exception):
            webbrowser.open(url)


async def _wind_down(
    web: uvicorn.Server,
    web_task: asyncio.Task[None],
    tasks: tuple[asyncio.Task[None] | None, ...],
    bridge: FoxgloveBridge | None,
    background: BackgroundRecorder | None,
    options: SessionOptions,
    announce: Callable[[str], None],
) -> None:
    """The web server stopped, the session's tasks cancelled and awaited, the Foxglove
    bridge stopped and the recording closed (and said, when one was asked for)."""
    await _stop_web(web, web_task)
    running = [t for t in tasks if t is not None]
    for task in running:
        task.cancel()
    await asyncio.gather(*running, return_exceptions=True)
    if bridge is not None:
        bridge.stop()
    if background is not None and options.record is None:
        background.close()
    elif background is not None:
        announce(recorded_line(background.close()))


async def _stop_web(web: uvicorn.Server, task: asyncio.Task[None], grace: float = 2.0) -> None:
    """Ask the web server to exit and give it ``grace`` seconds to close its sockets."""
    web.should_exit = True
    with contextlib.suppress(Exception):
        await asyncio.wait({task}, timeout=grace)


def default_run_path() -> Path:
    return Path("runs") / f"{dt.datetime.now():%Y-%m-%d-%H%M%S}.mcap"


def _station(url: str) -> str:
    """The virtual operator station's address beside the cockpit's (same token)."""
    return url.replace("/?token=", "/station?token=", 1)


async def run_session(
    config: RobotConfig,
    world: World,
    options: SessionOptions,
    announce: Callable[[str], None] = print,
    started: asyncio.Event | None = None,
    parts: dict[str, object] | None = None,
) -> None:
    """Robot server + operator station + web server in one process, until cancelled."""
    access = web_access(options)
    sockets = listen_web(options.host, options.port)  # first: a port in use leaves nothing
    try:
        await _session(
            config, world, options, _bound(access, sockets), sockets, announce, started, parts
        )
    finally:
        for sock in sockets:
            sock.close()


async def _session(
    config: RobotConfig,
    world: World,
    options: SessionOptions,
    access: WebAccess,
    sockets: list[socket.socket],
    announce: Callable[[str], None],
    started: asyncio.Event | None,
    parts: dict[str, object] | None,
) -> None:
    bridge = _foxglove_bridge(config, options, access, announce)  # before a recording
    background = _background(_recorder(options, config, world.name), bridge)
    key = options.key or secrets.token_bytes(32)  # a fresh key for this local session
    server, _ = simulated_server(
        config,
        world,
        ServerOptions(
            listen="udp://127.0.0.1:0",
            wire=options.wire,
            key=key,
            camera=options.camera,
            video=options.video,
            shaping=_robot_way(options.shaping),
        ),
        seed=options.seed,
        recorder=background,
        start=options.start,
        truth=_physical_robot(config, options),
    )
    robot_task = asyncio.create_task(server.run())
    await server.ready.wait()
    assert server.local_address is not None
    station = OperatorStation(
        config,
        world,
        server.local_address,
        wire=options.wire,
        key=key,
        recorder=background,
        shaping=options.shaping,
    )
    station_task = asyncio.create_task(station.run())
    bridge_task = asyncio.create_task(bridge.run(station)) if bridge else None
    if parts is not None:  # for benchmarks and tests that need to look inside
        parts.update(server=server, station=station, token=access.token, url=access.url)
        parts.update(foxglove=bridge)
    web = _web_server(create_app(station, access.token, wire_clock=station.wire_clock), options)
    url = access.url
    web_task = asyncio.create_task(web.serve(sockets=sockets))
    try:
        while not web.started:
            if web_task.done():
                await web_task
                raise OSError(f"web server could not start on {options.host}:{access.port}")
            await asyncio.sleep(0.02)
        _announce_access(access, announce)
        for line in server.program.core.unavailable():  # what the cockpit will not offer, and why
            announce(f"{config.name}: {line}")
        announce(f"freelook: {config.name} in {world.name} — open {url}")
        announce(f"virtual operator station (WebXR): {_station(url)}")
        _open_page(options, url, announce)
        if started is not None:
            started.set()
        await asyncio.shield(web_task)  # a cancel lets the server close its sockets
    finally:
        tasks = (station_task, robot_task, web_task, bridge_task)
        await _wind_down(web, web_task, tasks, bridge, background, options, announce)


async def run_operator(
    config: RobotConfig,
    world: World | None,
    robot: TransportUrl,
    options: SessionOptions,
    announce: Callable[[str], None] = print,
) -> None:
    """The operator station and the cockpit for a robot elsewhere (UDP or a serial radio),
    until cancelled. A serial port that cannot be opened raises :class:`ConfigError`."""
    access = web_access(options)
    sockets = listen_web(options.host, options.port)  # first: a port in use leaves nothing
    try:
        await _operator(config, world, robot, options, _bound(access, sockets), sockets, announce)
    finally:
        for sock in sockets:
            sock.close()


async def _operator(
    config: RobotConfig,
    world: World | None,
    robot: TransportUrl,
    options: SessionOptions,
    access: WebAccess,
    sockets: list[socket.socket],
    announce: Callable[[str], None],
) -> None:
    bridge = _foxglove_bridge(config, options, access, announce)  # before a recording
    background = _background(_recorder(options, config, world.name if world else ""), bridge)
    station = OperatorStation(
        config,
        world,
        robot,
        wire=options.wire,
        key=options.key,
        recorder=background,
        station=options.station,
        shaping=options.shaping,
    )
    station.on_status = announce
    station_task = asyncio.create_task(station.run())
    await asyncio.sleep(0)  # the station opens its link first: a missing port fails here
    if station_task.done() and station_task.exception() is not None:
        if bridge is not None:
            bridge.stop()
        if background is not None:
            background.close()
        if options.record is not None:  # a run that never began leaves no recording
            options.record.unlink(missing_ok=True)
        station_task.result()
    bridge_task = asyncio.create_task(bridge.run(station)) if bridge else None
    web = _web_server(create_app(station, access.token, wire_clock=station.wire_clock), options)
    web_task = asyncio.create_task(web.serve(sockets=sockets))
    try:
        while not web.started and not web_task.done():
            await asyncio.sleep(0.02)
        if web_task.done():
            await web_task
            raise OSError(f"web server could not start on {options.host}:{access.port}")
        _announce_access(access, announce)
        url = access.url
        where = robot.device or f"{robot.host}:{robot.port}"  # a serial line's, or an address
        announce(f"freelook operator: robot at {where} — open {url}")
        announce(f"virtual operator station (WebXR): {_station(url)}")
        _open_page(options, url, announce)
        await asyncio.shield(web_task)  # a cancel lets the server close its sockets
    finally:
        tasks = (station_task, web_task, bridge_task)
        await _wind_down(web, web_task, tasks, bridge, background, options, announce)

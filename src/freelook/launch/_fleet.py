"""Fleet sessions: ``freelook sim --robots N --stations M`` (simulated robots on Zenoh and
their stations, each with a cockpit) and ``freelook operator --robot zenoh://…`` (one station
for every robot on a bus)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import secrets
import socket
from collections.abc import Callable, Iterator
from typing import Any

from freelook.config import RobotConfig
from freelook.errors import ConfigError
from freelook.hardware.sim import SimulatedFleet, published_map
from freelook.launch._session import (
    SessionOptions,
    _announce_access,
    _web_server,
    listen_web,
    recorded_line,
    web_access,
)
from freelook.link import (
    BusAccess,
    KeyRing,
    TransportUrl,
    ZenohAuth,
    ZenohBus,
    derive_key,
    station_user,
)
from freelook.maps import World
from freelook.operator import MAX_ROBOTS, FleetStation
from freelook.record import BackgroundRecorder, Recorder
from freelook.robot import ServerOptions
from freelook.web import create_app

__all__ = ["fleet_names", "run_fleet_operator", "run_fleet_session"]

#: what a fleet cockpit shows in place of the camera: the batched simulator has none
FLEET_VIDEO_NOTE = (
    "no camera: the fleet simulator models each robot's drive and laser only"
    " (freelook sim without --robots runs one robot with its camera)"
)


def fleet_names(count: int) -> list[str]:
    """The simulated fleet's robot names: robot-1 … robot-N."""
    return [f"robot-{i + 1}" for i in range(count)]


@contextlib.contextmanager
def _listening(options: SessionOptions, count: int) -> Iterator[list[list[socket.socket]]]:
    """The ``count`` cockpits' sockets (ports from ``options.port`` up; port 0: each on one
    the system picks, as announced), bound before the session starts anything (a port in use
    leaves nothing behind), closed at its end."""
    web_access(options)  # TLS files first
    bound: list[list[socket.socket]] = []
    try:
        for k in range(count):
            bound.append(listen_web(options.host, options.port + k if options.port else 0))
        yield bound
    finally:
        for sockets in bound:
            for sock in sockets:
                sock.close()


async def _serve(
    backends: list[FleetStation],
    options: SessionOptions,
    bound: list[list[socket.socket]],
    announce: Callable[[str], None],
    started: asyncio.Event | None,
    lines: Callable[[int, str], str],
) -> None:
    """One cockpit web server per station (on ``bound``: ports from ``options.port`` up),
    until cancelled."""
    servers: list[Any] = []
    webs: list[asyncio.Task[None]] = []
    stations: list[asyncio.Task[None]] = []
    try:
        for k, backend in enumerate(backends):
            sockets = bound[k]
            opts = dataclasses.replace(options, port=int(sockets[0].getsockname()[1]))
            access = web_access(opts)
            web = _web_server(create_app(backend, access.token), opts)
            servers.append(web)
            webs.append(asyncio.create_task(web.serve(sockets=sockets)))
            stations.append(asyncio.create_task(backend.run()))
            while not web.started:
                if webs[-1].done():
                    await webs[-1]
                    raise OSError(f"web server could not start on {opts.host}:{opts.port}")
                await asyncio.sleep(0.02)
            _announce_access(access, announce)
            announce(lines(k, access.url))
        if started is not None:
            started.set()
        done, _ = await asyncio.wait([*webs, *stations], return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            task.result()  # a web server or a station that stopped ends the session
    finally:
        for web in servers:
            web.should_exit = True
        # the web servers close their sockets on their way out; the stations are cancelled
        with contextlib.suppress(Exception):
            await asyncio.wait(webs, timeout=2.0)
        for task in (*webs, *stations):
            task.cancel()
        await asyncio.gather(*webs, *stations, return_exceptions=True)


@contextlib.contextmanager
def _recording(
    options: SessionOptions, metadata: dict[str, str], announce: Callable[[str], None]
) -> Iterator[BackgroundRecorder | None]:
    """The fleet's recording (``--record``), finished and counted when the session ends."""
    if options.record is None:
        yield None
        return
    options.record.parent.mkdir(parents=True, exist_ok=True)
    background = BackgroundRecorder(Recorder(options.record, metadata=metadata))
    announce(f"recording every robot to {options.record}")
    try:
        yield background
    finally:
        announce(recorded_line(background.close()))


def _station_keys(stations: int) -> tuple[dict[int, str], KeyRing]:
    """A random passphrase for each of ``stations`` stations, and the robots' ring of them."""
    passphrases = {k: secrets.token_hex(32) for k in range(1, stations + 1)}
    ring = KeyRing.from_mapping(
        {"stations": {str(k): {"key": phrase} for k, phrase in passphrases.items()}}
    )
    return passphrases, ring


async def run_fleet_session(
    config: RobotConfig,
    world: World,
    robots: int,
    stations: int,
    options: SessionOptions,
    *,
    zenoh_address: tuple[str, int] = ("127.0.0.1", 7447),
    announce: Callable[[str], None] = print,
    started: asyncio.Event | None = None,
    parts: dict[str, object] | None = None,
) -> None:
    """``freelook sim --robots N --stations M``: N simulated robots on one batched simulator,
    each served over Zenoh (peer mode, listening at ``zenoh_address``), and M operator
    stations, each with its own key and cockpit (web ports from ``options.port`` up); station
    k drives robot k first (cycling)."""
    _check_fleet_size(robots, stations)
    passphrases, ring = _station_keys(stations)
    names = fleet_names(robots)
    zenoh_listen = TransportUrl("zenoh", *zenoh_address).zenoh_endpoint
    # the robots' peer admits the stations' users only, each to its own key expressions
    robots_bus = ZenohBus.peer(
        listen=[zenoh_listen], auth=ZenohAuth(access=BusAccess.of(ring.station_keys()))
    )
    buses: list[ZenohBus] = [robots_bus]
    metadata = {"robots": ",".join(names), "robot": config.name, "world": world.name}
    try:
        with (
            _listening(options, stations) as bound,
            _recording(options, metadata, announce) as recorder,
        ):
            fleet = _simulated_fleet(config, world, names, zenoh_address, ring, robots_bus, options)
            fleet_task = asyncio.create_task(fleet.run())
            await fleet.ready()
            backends = _fleet_stations(
                config, world, names, passphrases, zenoh_listen, recorder, buses
            )
            if parts is not None:
                parts.update(fleet=fleet, stations=backends)
            announce(f"freelook: {robots} × {config.name} in {world.name} on Zenoh {zenoh_listen}")
            for line in fleet.servers[0].program.core.unavailable():  # alike for every robot
                announce(f"each {config.name}: {line}")
            try:
                await _serve(
                    backends,
                    options,
                    bound,
                    announce,
                    started,
                    lambda k, url: f"  station {k + 1} (drives {backends[k].selected}): open {url}",
                )
            finally:
                fleet_task.cancel()
                await asyncio.gather(fleet_task, return_exceptions=True)
    finally:
        for bus in reversed(buses):
            bus.close()


def _check_fleet_size(robots: int, stations: int) -> None:
    if not 1 <= robots <= MAX_ROBOTS:
        raise ConfigError(f"--robots {robots}: expected 1…{MAX_ROBOTS}")
    if not 1 <= stations <= 16:
        raise ConfigError(f"--stations {stations}: expected 1…16")


def _simulated_fleet(
    config: RobotConfig,
    world: World,
    names: list[str],
    zenoh_address: tuple[str, int],
    ring: KeyRing,
    bus: ZenohBus,
    options: SessionOptions,
) -> SimulatedFleet:
    """The robots on one batched simulator, robot i served on ``bus`` as ``names[i]``."""
    host, port = zenoh_address
    return SimulatedFleet(
        config,
        world,
        len(names),
        lambda i: ServerOptions(
            listen=f"zenoh://{host}:{port}/{names[i]}", keys=ring, camera=False
        ),
        seed=options.seed,
        bus=bus,
        robot_map=published_map(world),
        error_model=options.error_model,
    )


def _fleet_stations(
    config: RobotConfig,
    world: World,
    names: list[str],
    passphrases: dict[int, str],
    zenoh_listen: str,
    recorder: BackgroundRecorder | None,
    buses: list[ZenohBus],
) -> list[FleetStation]:
    """Station k (from 1) on a bus of its own (added to ``buses``), logged in with its key,
    driving robot k first (cycling); station 1 alone records."""
    backends = []
    for k in sorted(passphrases):
        key = derive_key(passphrases[k])
        login = ZenohAuth(user=station_user(key))
        buses.append(ZenohBus.peer(connect=[zenoh_listen], auth=login))
        backends.append(
            FleetStation(
                config,
                world,
                buses[-1],
                key=key,
                station=k,
                first=names[(k - 1) % len(names)],
                recorder=recorder if k == 1 else None,  # one file: station 1's view
                video_note=FLEET_VIDEO_NOTE,
            )
        )
    return backends


async def run_fleet_operator(
    config: RobotConfig,
    world: World | None,
    robot: TransportUrl,
    options: SessionOptions,
    announce: Callable[[str], None] = print,
) -> None:
    """``freelook operator --robot zenoh://HOST:PORT/ROBOT``: the fleet view of every robot on
    the bus, driving ROBOT first, until cancelled."""
    if options.key is None:
        raise ConfigError("a station on Zenoh needs its key: --key or FREELOOK_LINK_KEY")
    bus = ZenohBus.for_url(robot, listen=False, key=options.key)
    metadata = {"robot": config.name, "world": world.name if world is not None else ""}
    try:
        with _listening(options, 1) as bound, _recording(options, metadata, announce) as recorder:
            backend = FleetStation(
                config,
                world,
                bus,
                key=options.key,
                station=options.station,
                first=robot.robot,
                recorder=recorder,
                on_status=announce,
                url=robot,
            )
            await _serve(
                [backend],
                options,
                bound,
                announce,
                None,
                lambda k, url: (
                    f"freelook operator: fleet on Zenoh {robot.zenoh_endpoint}, "
                    f"driving {robot.robot} — open {url}"
                ),
            )
    finally:
        bus.close()

"""``freelook fleet``: a Zenoh router for robots and stations on many hosts, and the robots
a bus holds."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from freelook.link import ZenohAuth, ZenohBus

__all__ = ["register"]

fleet_app = typer.Typer(
    help="Robots and stations on a Zenoh bus: a router for many hosts, the robots on it.",
    no_args_is_help=True,
)


def _endpoint(text: str, option: str) -> str:
    """``HOST:PORT`` as Zenoh's ``tcp/HOST:PORT``."""
    from freelook.errors import ConfigError

    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"{option} {text!r}: expected HOST:PORT")
    return f"tcp/{host}:{port}"


def _router_key(routers: dict[str, bytes], name: str | None, keys: Path) -> tuple[str, bytes]:
    """This router's name and key, to join another router with (a clear error without)."""
    from freelook.errors import ConfigError

    if name is None:
        raise ConfigError(
            f"--connect with --keys: name this router (--name NAME, its [routers.NAME] in "
            f"{keys}; freelook keys new --router NAME writes one)"
        )
    if name not in routers:
        raise ConfigError(f"--name {name}: {keys} has no [routers.{name}] (its key to join with)")
    return name, routers[name]


@fleet_app.command("router")
def router(
    listen: Annotated[
        list[str], typer.Option(help="HOST:PORT to listen on (repeat for several).")
    ] = ["0.0.0.0:7447"],  # noqa: B006 (typer reads the default, nothing mutates it)
    connect: Annotated[
        list[str] | None, typer.Option(help="HOST:PORT of another router to join.")
    ] = None,
    keys: Annotated[
        Path | None,
        typer.Option(
            help="Keys file (TOML): admit only its stations and [robots.NAME], each to its "
            "own key expressions (docs/security.md)."
        ),
    ] = None,
    weak_key: Annotated[
        bool, typer.Option("--weak-key", help="Accept keys of under 128 bits (never in the field).")
    ] = False,
    name: Annotated[
        str | None,
        typer.Option(
            help="This router's name in the keys file ([routers.NAME]): with --keys, it joins "
            "the routers of --connect with that key, and routers that join it know it by it."
        ),
    ] = None,
) -> None:
    """Run a Zenoh router (zenohd's part freelook needs): robots and stations on other hosts
    connect to it with zenoh://ROUTER:PORT/ROBOT?mode=client. With --keys it admits only the
    keys file's stations, robots and routers; joining another router (--connect) it logs in
    as router-NAME (--name). Ctrl-C stops it."""
    from freelook.cli._fail import fail
    from freelook.errors import FreelookError

    try:
        bus, auth = _router_bus(listen, connect or [], keys, weak_key, name)
    except FreelookError as err:
        fail(err)
    serve_router(bus, auth, listen, "freelook fleet router")


def _router_bus(
    listen: list[str], connect: list[str], keys: Path | None, weak_key: bool, name: str | None
) -> tuple[ZenohBus, ZenohAuth | None]:
    """The router's Zenoh session: open, or with a keys file admitting only its stations,
    robots and routers, joining the routers of ``connect`` as router-``name``."""
    from freelook.link import (
        BusAccess,
        KeyRing,
        ZenohAuth,
        ZenohBus,
        ZenohTls,
        router_user,
        router_zid,
        zenoh_config,
    )

    auth: ZenohAuth | None = None
    if keys is not None:
        ring = KeyRing.load(keys, allow_weak=weak_key)
        access = BusAccess.of(ring.station_keys(), ring.robots, ring.routers)
        user = zid = None
        if connect or name is not None:  # it joins with its user, is known by its id
            named = _router_key(ring.routers, name, keys)
            user, zid = router_user(*named), router_zid(*named)
        tls = ZenohTls.from_files(ring.zenoh_tls)
        auth = ZenohAuth(user=user, access=access, tls=tls, zid=zid)
    on = auth.endpoint if auth is not None else str
    bus = ZenohBus(
        zenoh_config(
            "router",
            listen=[on(_endpoint(text, "--listen")) for text in listen],
            connect=[on(_endpoint(text, "--connect")) for text in connect],
        ),
        auth=auth,
    )
    return bus, auth


@fleet_app.command("list")
def list_robots(
    bus_url: Annotated[
        str,
        typer.Argument(
            help="zenoh://HOST:PORT/ANY[?mode=client]: a robot's peer, or a router's address."
        ),
    ],
    timeout: Annotated[float, typer.Option(help="Seconds to wait for answers.")] = 1.0,
    key: Annotated[
        str | None,
        typer.Option(
            help="A station's key, to log in to a bus that checks (else FREELOOK_LINK_KEY)."
        ),
    ] = None,
    weak_key: Annotated[
        bool,
        typer.Option("--weak-key", help="Accept a key of under 128 bits (never in the field)."),
    ] = False,
) -> None:
    """List the robots on a Zenoh bus (name, model, wire profile). Exit code 1 when no robot
    answered (nothing wrong with the command, nothing found: a script can tell), 2 on a bad
    address."""
    import math

    from freelook.cli._fail import fail
    from freelook.errors import ConfigError, FreelookError
    from freelook.link import ZenohBus, link_key, parse_transport_url

    wait = max(0.1, min(timeout, 30.0)) if math.isfinite(timeout) else 1.0
    try:
        url = parse_transport_url(bus_url)
        if not url.transport.shared_bus:
            raise ConfigError(
                f"{bus_url}: fleet list asks a Zenoh bus (zenoh://HOST:PORT/ANY); a robot on "
                f"{url.scheme} answers only a station in session with it"
            )
        bus = ZenohBus.for_url(url, listen=False, key=link_key(key, allow_weak=weak_key))
    except FreelookError as err:
        fail(err)
    try:
        robots = bus.discover(timeout=wait)
    finally:
        bus.close()
    for info in robots:
        typer.echo(f"{info.name}\t{info.model}\t{info.wire}")
    if not robots:
        typer.echo(
            f"no robot answered on zenoh://{url.host}:{url.port} within {wait:g} s "
            "(no robot or router there, none reachable, or a bus that refuses this key)",
            err=True,
        )
        raise typer.Exit(1)


def serve_router(bus: ZenohBus, auth: ZenohAuth | None, said: list[str], what: str) -> None:
    """Run ``bus`` (a router) until SIGTERM or Ctrl-C, saying it listens on ``said``."""
    import signal
    import threading

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
    typer.echo(f"{what} listening on {', '.join(said)}")
    if auth is None:
        typer.echo(
            "  warning: no --keys: anyone who reaches this router can read and publish on "
            "every robot's key expressions",
            err=True,
        )
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        bus.close()
    typer.echo(f"{what}: stopped")


def register(app: typer.Typer) -> None:
    """Add the ``fleet`` group and ``relay`` (a router of its own, :mod:`._relay`) to
    ``app``."""
    from freelook.cli._relay import relay

    app.add_typer(fleet_app, name="fleet")
    app.command("relay")(relay)

"""``freelook relay`` and its users file: the bus users and passwords made from a keys file,
and no link key.

A relay (``freelook relay``) admits stations and robots by their Zenoh user names and
passwords. Both are one-way digests of the keys (``_zenoh_acl``), so the relay is given those
alone: it checks who logs in and what each may do, and holds nothing that signs a link packet,
so it can neither open a session as a station nor forge a command. ``freelook keys relay``
writes the file from a keys file::

    [stations]
    station-0123456789abcdef = "64 hex digits"
    [robots]
    r1 = "64 hex digits"            # user robot-r1
    [routers.a]                     # user router-a: a relay that joins others, or is joined
    password = "64 hex digits"
    id = "32 hex digits"            # its Zenoh id
    [zenoh]
    tls_certificate = "relay.pem"   # the relay's own, beside the file or absolute
    tls_private_key = "relay.key"
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import stat
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from freelook.errors import ConfigError
from freelook.link import BusAccess, BusUser, ZenohTls, check_robot_name

__all__ = ["load_relay_users", "relay", "relay_users_text"]

if TYPE_CHECKING:
    from freelook.link import ZenohBus

_STATION = re.compile(r"station-[0-9a-f]{16}")
_PASSWORD = re.compile(r"[0-9a-f]{64}")
_ZID = re.compile(r"[0-9a-f]{32}")
_TLS = ("tls_certificate", "tls_private_key")


def relay_users_text(access: BusAccess) -> str:
    """The users file for ``access`` (``BusAccess.of`` a keys file's keys)."""
    lines = ["# bus users for freelook relay: passwords made from the keys, no link key", ""]
    lines += ["[stations]", *(f'{u.name} = "{u.password}"' for u in access.stations)]
    if access.robots:
        lines += ["", "[robots]", *(f'{name} = "{u.password}"' for name, u in access.robots)]
    for user, zid in access.routers:
        name = user.name.removeprefix("router-")
        lines += ["", f"[routers.{name}]", f'password = "{user.password}"', f'id = "{zid}"']
    return "\n".join(lines) + "\n"


def load_relay_users(path: Path) -> tuple[BusAccess, ZenohTls | None]:
    """The users and TLS files of the users file at ``path`` (readable by its owner only);
    :class:`ConfigError` naming the field that is wrong."""
    try:
        mode = path.stat().st_mode
    except OSError as err:
        raise ConfigError(f"{path}: cannot read the relay users file: {err.strerror}") from None
    if not stat.S_ISREG(mode):
        raise ConfigError(f"{path}: not a regular file")
    if os.name == "posix" and mode & 0o077:
        raise ConfigError(
            f"{path}: readable or writable by others (mode {stat.S_IMODE(mode):04o}); whoever "
            f"reads it logs in to the relay as its stations: `chmod 600 {path}`"
        )
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise ConfigError(f"{path}: not a relay users file: {err}") from None
    unknown = set(raw) - {"stations", "robots", "routers", "zenoh"}
    if unknown:
        raise ConfigError(f"{path}: unknown table {sorted(unknown)[0]!r}")
    stations = tuple(
        BusUser(_match(_STATION, name, path, "a station user"), _password(pw, path, name))
        for name, pw in _table(raw, "stations", path).items()
    )
    if not stations:
        raise ConfigError(f"{path}: no [stations]: a relay admits at least one station")
    robots = tuple(
        (check_robot_name(name), BusUser(f"robot-{name}", _password(pw, path, f"robots.{name}")))
        for name, pw in _table(raw, "robots", path).items()
    )
    routers = []
    for name, entry in _table(raw, "routers", path).items():
        if not isinstance(entry, dict):
            raise ConfigError(f"{path}: [routers.{name}] is a table of password and id")
        password = _password(entry.get("password"), path, f"routers.{name}.password")
        zid = _match(_ZID, entry.get("id"), path, f"routers.{name}.id")
        routers.append((BusUser(f"router-{check_robot_name(name)}", password), zid))
    files = _table(raw, "zenoh", path)
    if set(files) - set(_TLS):
        raise ConfigError(f"{path}: [zenoh] holds {' and '.join(_TLS)} only")
    tls = None
    if files:
        paths = {field: path.parent / str(value) for field, value in files.items()}
        tls = ZenohTls(None, paths.get(_TLS[0]), paths.get(_TLS[1]))
        tls.check()
    return BusAccess(stations, robots, tuple(routers)), tls


def _table(raw: dict[str, Any], name: str, path: Path) -> dict[str, Any]:
    table = raw.get(name, {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: {name} is a table")
    return table


def _match(pattern: re.Pattern[str], value: object, path: Path, what: str) -> str:
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise ConfigError(f"{path}: {value!r} is not {what}")
    return value


def _password(value: object, path: Path, where: str) -> str:
    if not isinstance(value, str) or not _PASSWORD.fullmatch(value):
        raise ConfigError(f"{path}: {where}: a password is 64 hex digits")
    return value


def _relay_endpoint(text: str, option: str) -> tuple[str, bool]:
    """``tls/HOST:PORT`` or ``tcp/HOST:PORT`` as (Zenoh's ``tcp/HOST:PORT``, whether TLS)."""
    protocol, _, address = text.partition("/")
    host, _, port = address.rpartition(":")
    if protocol not in ("tls", "tcp") or not host or not port.isdigit():
        raise ConfigError(f"{option} {text!r}: expected tls/HOST:PORT (or tcp/HOST:PORT)")
    if not 0 < int(port) < 65536:
        raise ConfigError(f"{option} {text!r}: a port is 1-65535")
    return f"tcp/{address}", protocol == "tls"


def relay(
    users: Annotated[
        Path,
        typer.Option(
            help="The relay's users file (freelook keys relay KEYS FILE writes it): who may "
            "log in and, in its \\[zenoh] table, the relay's TLS certificate and key."
        ),
    ],
    listen: Annotated[
        list[str], typer.Option(help="tls/HOST:PORT to listen on (repeat for several).")
    ] = ["tls/0.0.0.0:7447"],  # noqa: B006 (typer reads the default, nothing mutates it)
    connect: Annotated[
        list[str] | None,
        typer.Option(help="tls/HOST:PORT of another relay to join (several for redundancy)."),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option(
            help="This relay's name (its \\[routers.NAME] in the users file), to join others "
            "and be known by them."
        ),
    ] = None,
    stun: Annotated[
        bool,
        typer.Option(
            help="Answer STUN binding requests on UDP at each --listen address and port, so "
            "ends on ?direct URLs learn their public address and punch a direct path."
        ),
    ] = True,
) -> None:
    """Run a relay that robots and stations behind NAT connect out to: a Zenoh router on TLS
    that admits only the stations and robots of its users file, each to its own key
    expressions (robots: --listen zenoh+tls://RELAY:PORT/NAME; stations: --robot
    zenoh+tls://RELAY:PORT/NAME; several relays, in order: RELAY:PORT,RELAY:PORT). It holds
    passwords made from the keys, never a link key: the link's sessions run end to end
    through it, and it cannot forge them. Ctrl-C stops it."""
    from freelook.cli._fail import fail
    from freelook.cli._fleet import serve_router
    from freelook.errors import FreelookError

    try:
        bus, said = _relay_bus(users, listen, connect or [], name)
    except FreelookError as err:
        fail(err)
    reflectors = []
    for text in listen if stun else []:
        try:
            sock = _reflector(text)
        except ConfigError as err:  # the relay still relays; ends on ?direct stay on it
            typer.echo(f"  warning: {err}", err=True)
            continue
        reflectors.append(sock)
        host, port = sock.getsockname()[:2]
        said.append(f"STUN on udp/{host}:{port}")
    serve_router(bus, bus.auth, said, "freelook relay")
    for sock in reflectors:
        sock.close()


def _reflector(text: str) -> socket.socket:
    """A UDP socket at ``--listen``'s address and port answering STUN binding requests
    (where each came from: a NAT's public mapping), on a thread of its own."""
    import threading

    from freelook.link import binding_response, parse_stun_request

    address = text.partition("/")[2]
    host, _, port = address.rpartition(":")
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.bind((host.strip("[]"), int(port)))
    except OSError as err:
        sock.close()
        raise ConfigError(f"--listen {text}: cannot answer STUN on udp: {err.strerror}") from None

    def answer() -> None:
        while True:
            try:
                data, source = sock.recvfrom(2048)
            except OSError:
                return  # closed
            transaction = parse_stun_request(data)
            if transaction is not None:
                with contextlib.suppress(OSError):
                    sock.sendto(binding_response(transaction, source[:2]), source)

    threading.Thread(target=answer, name="stun reflector", daemon=True).start()
    return sock


def _relay_bus(
    users: Path, listen: list[str], connect: list[str], name: str | None
) -> tuple[ZenohBus, list[str]]:
    """The relay's router session, and the endpoints it says it listens on."""
    from freelook.link import ZenohAuth, ZenohBus, zenoh_config

    listening = [_relay_endpoint(text, "--listen") for text in listen]
    joining = [_relay_endpoint(text, "--connect") for text in connect]
    access, tls = load_relay_users(users)
    on_tls = {on for _, on in listening + joining}
    if on_tls == {True, False}:
        raise ConfigError("a relay is on tls/ or on tcp/, not both")
    if True in on_tls and (tls is None or tls.certificate is None):
        raise ConfigError(
            f"{users}: a relay on tls/ needs [zenoh] tls_certificate and tls_private_key "
            "(its certificate, which robots and stations check against their root CA)"
        )
    if True not in on_tls:
        tls = None
    user = zid = None
    if name is not None:
        own = {u.name: (u, z) for u, z in access.routers}.get(f"router-{name}")
        if own is None:
            raise ConfigError(f"--name {name}: {users} has no [routers.{name}]")
        user, zid = own
    elif connect:
        raise ConfigError("--connect: name this relay (--name NAME, its [routers.NAME])")
    auth = ZenohAuth(user=user, access=access, tls=tls, zid=zid)
    config = zenoh_config(
        "router",
        listen=[auth.endpoint(e) for e, _ in listening],
        connect=[auth.endpoint(e) for e, _ in joining],
    )
    said = [("tls/" if on else "tcp/") + e.removeprefix("tcp/") for e, on in listening]
    return ZenohBus(config, auth=auth), said

"""``freelook keys``: make a keys file with a random key for each station."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

__all__ = ["register"]

keys_app = typer.Typer(help="Make station keys.", no_args_is_help=True)


def keys_file_text(
    keys: dict[int, str],
    observers: set[int],
    robots: dict[str, str] | None = None,
    routers: dict[str, str] | None = None,
    salt: str | None = None,
) -> str:
    """A keys file (TOML) giving each station its key (``observers`` only watch), each
    robot in ``robots`` its key for a Zenoh router and each router in ``routers`` its key to
    join another; ``salt``: the install's salt for any passphrase put in it later."""
    lines = ["# freelook station keys: give each station its own key, over a channel you trust"]
    if salt is not None:
        lines += [
            "# a passphrase in place of a key is stretched with this salt: its station is",
            "# given it as SALT:passphrase",
            f'salt = "{salt}"',
        ]
    for station, key in sorted(keys.items()):
        lines += ["", f"[stations.{station}]", f'key = "{key}"']
        if station in observers:
            lines.append("observer = true")
    for name, key in sorted((robots or {}).items()):
        lines += ["", f"[robots.{name}]  # logs in to a Zenoh router", f'key = "{key}"']
    for name, key in sorted((routers or {}).items()):
        lines += ["", f"[routers.{name}]  # joins another Zenoh router", f'key = "{key}"']
    return "\n".join(lines) + "\n"


@keys_app.command("new")
def new_command(
    output: Annotated[Path, typer.Argument(help="The keys file to write (never overwritten).")],
    stations: Annotated[
        int, typer.Option("--stations", min=1, max=64, help="How many stations (ids 1…N).")
    ] = 1,
    observer: Annotated[
        list[int] | None,
        typer.Option("--observer", help="A station id that may only watch (repeatable)."),
    ] = None,
    robot: Annotated[
        list[str] | None,
        typer.Option(
            "--robot", help="A robot that logs in to a Zenoh router: its bus key (repeatable)."
        ),
    ] = None,
    router: Annotated[
        list[str] | None,
        typer.Option(
            "--router",
            help="A router that joins another (fleet router --name): its key (repeatable).",
        ),
    ] = None,
) -> None:
    """Write a keys file with a random 256-bit key for each station, readable by its owner
    only; print where it went (the keys stay in the file)."""
    import secrets

    observers = set(observer or [])
    outside = sorted(s for s in observers if not 1 <= s <= stations)
    if outside:
        typer.echo(f"--observer {outside[0]}: not a station of 1…{stations}", err=True)
        raise typer.Exit(2)
    from freelook.errors import ConfigError
    from freelook.link import check_robot_name

    try:
        robots = {check_robot_name(name): secrets.token_hex(32) for name in robot or []}
    except ConfigError as err:
        typer.echo(f"--robot: {err}", err=True)
        raise typer.Exit(2) from None
    try:
        routers = {check_robot_name(name): secrets.token_hex(32) for name in router or []}
    except ConfigError as err:
        typer.echo(f"--router: {err}", err=True)
        raise typer.Exit(2) from None
    from freelook.link import new_salt

    stations_keys = {s: secrets.token_hex(32) for s in range(1, stations + 1)}
    text = keys_file_text(stations_keys, observers, robots, routers, new_salt())
    _write_private(output, text, " (keys in use would be lost)")
    typer.echo(f"{output}: {stations} station key(s), readable by you only")
    typer.echo(f"robot:    freelook robot --keys {output}")
    typer.echo("stations: each sets FREELOOK_LINK_KEY to its own key from the file")


@keys_app.command("relay")
def relay_command(
    keys: Annotated[Path, typer.Argument(help="The keys file the robots and stations hold.")],
    output: Annotated[Path, typer.Argument(help="The users file to write (never overwritten).")],
) -> None:
    """Write the users file of a relay (freelook relay --users): the bus user and password
    of each station, robot and router of KEYS, readable by its owner only. No link key goes in
    it: a relay holding it admits them, and can forge no command."""
    from freelook.cli._fail import fail
    from freelook.cli._relay import relay_users_text
    from freelook.errors import FreelookError
    from freelook.link import BusAccess, KeyRing

    try:
        ring = KeyRing.load(keys)
        text = relay_users_text(BusAccess.of(ring.station_keys(), ring.robots, ring.routers))
    except FreelookError as err:
        fail(err)
    _write_private(output, text)
    typer.echo(f"{output}: the relay's users, readable by you only (add its [zenoh] TLS files)")


@keys_app.command("salt")
def salt_command() -> None:
    """Print a random salt for a passphrase key: give the key as SALT:passphrase to the
    robot (--key, FREELOOK_LINK_KEY, a keys file) and to the station alike, or write it as a
    keys file's salt. Hex keys need none."""
    from freelook.link import new_salt

    typer.echo(new_salt())


def register(app: typer.Typer) -> None:
    """Add ``keys`` to the ``freelook`` command."""
    app.add_typer(keys_app, name="keys")


def _write_private(output: Path, text: str, why_kept: str = "") -> None:
    """Write ``text`` to a new file readable by its owner only; an existing file is never
    overwritten (exit 2, saying so)."""
    try:
        fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        typer.echo(f"{output}: exists; not overwritten{why_kept}", err=True)
        raise typer.Exit(2) from None
    except OSError as err:
        typer.echo(f"{output}: cannot write: {err.strerror}", err=True)
        raise typer.Exit(2) from None
    with os.fdopen(fd, "w", encoding="utf-8") as stream:
        stream.write(text)

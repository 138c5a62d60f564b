"""Transports and backends other packages install, found through entry points.

A package adds a transport or a hardware backend by naming it in its metadata, as python-can's
interfaces are found (``can.interface``)::

    [project.entry-points."freelook.transports"]
    radio = "freelook_radio:RADIO"      # a freelook.link.Transport

    [project.entry-points."freelook.backends"]
    rig = "freelook_rig:RIG"            # a freelook.hardware.Backend

The entry point's name is the URL scheme it serves. It is loaded the first time its scheme is
asked for (or when every known one is listed), then kept in its registry like a built-in one.
A name a registry already holds is served by what it holds. The link keeps this lookup because
it is the lowest of the two packages with a registry; the hardware backends use it too.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import TypeVar

from freelook.errors import ConfigError

__all__ = ["BACKENDS_GROUP", "TRANSPORTS_GROUP", "install_plugins", "installed_plugin"]

TRANSPORTS_GROUP = "freelook.transports"
BACKENDS_GROUP = "freelook.backends"

T = TypeVar("T")


def installed_plugin(table: dict[str, T], group: str, name: str, kind: type[T]) -> T | None:
    """What ``table`` holds under ``name``, or what an installed package names for it in
    entry point ``group`` (loaded and added to ``table``); None when neither has one. An entry
    point that names something other than a ``kind`` raises :class:`ConfigError`."""
    held = table.get(name)
    if held is not None:
        return held
    for point in entry_points(group=group, name=name):
        loaded = point.load()
        if not isinstance(loaded, kind):
            raise ConfigError(
                f"entry point {name} = {point.value} ({group}) is not a {kind.__name__}"
            )
        table[name] = loaded
        return loaded
    return None


def install_plugins(table: dict[str, T], group: str, kind: type[T]) -> None:
    """Every entry point of ``group`` loaded into ``table`` (to list what is known)."""
    for point in entry_points(group=group):
        installed_plugin(table, group, point.name, kind)

"""Per-station keys and permissions: the keys file, and the one-key shorthand.

A keys file (TOML) names each station that may talk to the robot::

    salt = "32 hex digits"             # this install's salt for the passphrases below

    [stations.1]
    key = "64 hex digits, or a passphrase"
    authority = 10                     # the highest authority it may ask control with
    modes = ["free_look", "tank"]      # the drive modes it may select (default: all)
    observer = false                   # an observer receives telemetry and video only

    [stations.2]
    key = "another passphrase"
    observer = true

A robot on a Zenoh router needs a bus key of its own, so does a router that joins another
(``freelook fleet router --name NAME --connect``), and the bus may run over TLS
(``docs/security.md``; paths relative to the keys file)::

    [robots.scout-1]
    key = "64 hex digits"

    [routers.site-b]
    key = "64 hex digits"

    [zenoh]
    tls_certificate = "robot.pem"      # a listening robot's or a router's certificate
    tls_private_key = "robot.key"
    tls_root_ca = "ca.pem"             # what a robot on a router checks the router with

A passphrase is stretched with scrypt and a salt: the one written before it
(``SALT:passphrase``), else the file's ``salt``, else the one salt every unsalted install
shares. A station of a file with a salt is given its passphrase as ``SALT:passphrase``.

A packet's station id is bound to its key: a packet claiming station 2 must verify with
station 2's key. A single key (``--key`` or ``FREELOOK_LINK_KEY``) is the one-station
shorthand: any station id, any mode, authority as each request asks (up to 255).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from freelook.config import format_validation_error, read_toml
from freelook.errors import ConfigError
from freelook.link._auth import parse_salt, strong_key
from freelook.types import Mode

__all__ = [
    "KeyRing",
    "KeysFile",
    "Permissions",
    "RobotEntry",
    "RouterEntry",
    "StationEntry",
    "StationKeys",
]

ALL_MODES = frozenset(Mode)
_ROBOT_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")  # a chunk of Zenoh key expressions


@dataclass(frozen=True, slots=True)
class Permissions:
    """What a station may do; the robot program enforces it."""

    authority: int = 255
    modes: frozenset[Mode] = ALL_MODES
    observer: bool = False

    def allows_mode(self, mode: Mode) -> bool:
        return not self.observer and mode in self.modes


@dataclass(frozen=True, slots=True)
class StationKeys:
    """One station's key and permissions."""

    station: int
    key: bytes
    permissions: Permissions


class StationEntry(BaseModel):
    """One ``[stations.N]`` table of a keys file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str = Field(min_length=1, description="64 hex digits, or a passphrase")
    authority: int = Field(10, ge=0, le=255)
    modes: list[str] | None = None
    observer: bool = False

    @field_validator("modes")
    @classmethod
    def _known_modes(cls, modes: list[str] | None) -> list[str] | None:
        if modes is None:
            return None
        known = {m.name.lower() for m in Mode}
        for name in modes:
            if name.lower() not in known:
                raise ValueError(f"unknown mode {name!r} (known: {', '.join(sorted(known))})")
        return modes

    @field_validator("key")
    @classmethod
    def _not_blank(cls, key: str) -> str:
        if not key.strip():
            raise ValueError("the key is blank")
        return key


class RobotEntry(BaseModel):
    """One ``[robots.NAME]`` table: the key a robot logs in to a Zenoh router with."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str = Field(min_length=1, description="64 hex digits, or a passphrase")


class RouterEntry(BaseModel):
    """One ``[routers.NAME]`` table: the key a router joins another router with."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str = Field(min_length=1, description="64 hex digits, or a passphrase")


class ZenohEntry(BaseModel):
    """``[zenoh]``: TLS files for the bus (paths relative to the keys file)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tls_certificate: str | None = None
    tls_private_key: str | None = None
    tls_root_ca: str | None = None


class KeysFile(BaseModel):
    """A whole keys file: station id (1…65535) → its entry; robot name → its bus key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    salt: str | None = Field(
        None, pattern=r"^[0-9A-Fa-f]{32}$", description="32 hex digits: the install's salt"
    )
    stations: dict[int, StationEntry] = Field(min_length=1)
    robots: dict[str, RobotEntry] = Field(default_factory=dict)
    routers: dict[str, RouterEntry] = Field(default_factory=dict)
    zenoh: ZenohEntry = Field(default_factory=ZenohEntry)

    @field_validator("stations")
    @classmethod
    def _station_ids(cls, stations: dict[int, StationEntry]) -> dict[int, StationEntry]:
        for station in stations:
            if not 0 < station <= 0xFFFF:
                raise ValueError(f"station id {station} outside 1…65535")
        return stations

    @field_validator("robots", "routers")
    @classmethod
    def _names(cls, named: dict[str, Any]) -> dict[str, Any]:
        for name in named:
            if not _ROBOT_NAME.fullmatch(name):
                raise ValueError(f"name {name!r}: expected 1-64 of A-Z a-z 0-9 _ - .")
        return named


def check_private(path: Path) -> None:
    """:class:`ConfigError` when the group or others may read or write ``path`` (POSIX
    permissions; what does not exist or is no regular file is left to the reader to name)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if not stat.S_ISREG(mode):
        return  # a folder or a FIFO: the reader names what it is
    if os.name == "posix" and mode & 0o077:
        raise ConfigError(
            f"{path}: keys readable or writable by others (mode {stat.S_IMODE(mode):04o}); "
            f"the keys in it are as good as known: `chmod 600 {path}` (freelook keys new "
            "writes files readable by their owner only)"
        )


class KeyRing:
    """Keys and permissions by station id (lookups are a dict access, no cryptography)."""

    def __init__(
        self, stations: Mapping[int, StationKeys] | None = None, *, any_station: bytes | None = None
    ) -> None:
        self._stations = dict(stations or {})
        self._any = None if any_station is None else StationKeys(0, any_station, Permissions())
        self.robots: dict[str, bytes] = {}  # robot name → its Zenoh bus key (``[robots.NAME]``)
        #: router name → the key it joins another router with (``[routers.NAME]``)
        self.routers: dict[str, bytes] = {}
        self.zenoh_tls: dict[str, Path] = {}  # ``[zenoh]``: tls_certificate … → its path

    @classmethod
    def single(cls, key: bytes) -> KeyRing:
        """The one-key shorthand: every station id shares ``key``, with every permission."""
        if len(key) < 16:
            raise ConfigError(f"link key of {len(key)} bytes is too short (at least 16)")
        return cls(any_station=key)

    @classmethod
    def from_mapping(
        cls, data: dict[str, Any], source: str = "<mapping>", *, allow_weak: bool = False
    ) -> KeyRing:
        """Validate a parsed keys file; errors name ``source``, the field and what was wrong.
        A key under :data:`MIN_KEY_BITS` bits is refused unless ``allow_weak``."""
        try:
            model = KeysFile.model_validate(data)
        except ValidationError as err:
            problems = format_validation_error(source, err)
            raise ConfigError(f"{source}: invalid keys file", problems) from None
        salt = None if model.salt is None else parse_salt(model.salt)
        stations = {}
        for station, entry in model.stations.items():
            modes = (
                ALL_MODES
                if entry.modes is None
                else frozenset(Mode[name.upper()] for name in entry.modes)
            )
            permissions = Permissions(entry.authority, modes, entry.observer)
            key = strong_key(
                entry.key,
                allow_weak=allow_weak,
                what=f"{source}: stations.{station}.key",
                salt=salt,
            )
            stations[station] = StationKeys(station, key, permissions)
        ring = cls(stations)
        for name, robot in model.robots.items():
            what = f"{source}: robots.{name}.key"
            ring.robots[name] = strong_key(robot.key, allow_weak=allow_weak, what=what, salt=salt)
        for name, router in model.routers.items():
            what = f"{source}: routers.{name}.key"
            ring.routers[name] = strong_key(router.key, allow_weak=allow_weak, what=what, salt=salt)
        base = Path(source).parent
        for field, value in model.zenoh.model_dump(exclude_none=True).items():
            ring.zenoh_tls[field] = base / value
        return ring

    @classmethod
    def load(cls, path: str | Path, *, allow_weak: bool = False) -> KeyRing:
        """Read a keys file (TOML); weak keys as :meth:`from_mapping`. A file that others
        may read is refused, as ssh refuses such a private key: its keys are as good as out."""
        path = Path(path)
        check_private(path)
        return cls.from_mapping(read_toml(path, "keys file"), str(path), allow_weak=allow_weak)

    def lookup(self, station: int) -> StationKeys | None:
        """The key and permissions of ``station``, or None when it has none."""
        found = self._stations.get(station)
        if found is not None:
            return found
        if self._any is not None and 0 < station <= 0xFFFF:
            return StationKeys(station, self._any.key, self._any.permissions)
        return None

    def lists(self, station: int) -> bool:
        """Whether ``station`` has an entry of its own (not only the one-key shorthand's)."""
        return station in self._stations

    def __contains__(self, station: object) -> bool:
        return isinstance(station, int) and self.lookup(station) is not None

    def __iter__(self) -> Iterator[StationKeys]:
        return iter(self._stations.values())

    def station_keys(self) -> list[bytes]:
        """Every distinct station key, the one-key shorthand's included (a Zenoh bus's
        station users are made from them)."""
        keys = [entry.key for entry in self._stations.values()]
        if self._any is not None:
            keys.append(self._any.key)
        return list(dict.fromkeys(keys))

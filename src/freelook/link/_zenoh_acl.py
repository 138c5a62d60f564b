"""Who may be on a Zenoh bus and what each may do: user names and passwords made from the
link keys, the access control lists a listening robot or a router enforces, and TLS.

Credentials (Zenoh's ``transport/auth/usrpwd``) are made from keys the ends already hold, so
nothing new is handed out to stations:

    station   user ``station-`` + 16 hex digits of BLAKE2s(key = station key, "user")
              password: 64 hex digits of BLAKE2s(key = station key, "password")
    robot     user ``robot-NAME``; password: BLAKE2s(key = the robot's bus key, "password")
              (``[robots.NAME]`` in the keys file; needed only to log in to a router)
    router    user ``router-NAME``; password: BLAKE2s(key = the router's key, "password")
              (``[routers.NAME]``: a router that joins another with ``--connect``); a named
              router also takes a Zenoh id made from its key, since usrpwd proves only the
              connecting side: the router joined is known to the one joining by that id

A station's tags start with its user name (``freelook/R/control/station-…-TAG``), so "its
own" keys are one key expression per station. The side that accepts connections (a robot
listening in peer mode, or ``freelook fleet router``) holds every user and enforces, default
deny:

    station U  puts on          freelook/*/control/U-*          (its own control channels)
               subscribes to    freelook/*/telemetry/U-*, freelook/*/video/U-*
               queries          freelook/*/info, liveliness freelook/*/alive (discovery)
    robot R    puts on          freelook/R/telemetry/*, freelook/R/video/*
               subscribes to    freelook/R/control/*
               answers          freelook/R/info; liveliness token freelook/R/alive

    router N   puts, subscribes, queries and answers on freelook/** (it holds the same keys
               file and enforces the rules above on its own clients)

and forwards to each only what it may receive. Everything else (another station's channels,
``**``, a robot's keys published by a station) is dropped by Zenoh before it reaches anyone.
Zenoh's usrpwd extension proves the password with a keyed hash over the listener's nonce; the
user name crosses in clear unless the link is TLS. Payloads are still authenticated by the
link session, as over UDP: the bus's access control is the outer wall, not the only one.
:func:`bus_auth` picks what one end of a ``zenoh://`` URL logs in with and enforces.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freelook.errors import ConfigError

if TYPE_CHECKING:
    import zenoh

    from freelook.link._keys import KeyRing
    from freelook.link._transport_table import TransportUrl

__all__ = [
    "TLS_CA_ENV",
    "BusAccess",
    "BusUser",
    "ZenohAuth",
    "ZenohTls",
    "bus_auth",
    "robot_user",
    "router_user",
    "router_zid",
    "station_user",
]

_ROOT = "freelook"
TLS_CA_ENV = "FREELOOK_ZENOH_CA"  # a station's root CA for a bus on TLS


@dataclass(frozen=True, slots=True)
class BusUser:
    """A user name and password for Zenoh's usrpwd authentication."""

    name: str
    password: str = field(repr=False)


def _digest(key: bytes, person: bytes) -> str:
    return hashlib.blake2s(person, key=key[:32], digest_size=32).hexdigest()


def station_user(key: bytes) -> BusUser:
    """The bus user of the station whose link key is ``key`` (stations sharing a key share
    it: the one-key shorthand is one user)."""
    if not key:
        raise ConfigError("a station on an authenticated Zenoh bus needs its link key")
    return BusUser(
        "station-" + _digest(key, b"freelook zenoh user")[:16],
        _digest(key, b"freelook zenoh password"),
    )


def robot_user(name: str, key: bytes) -> BusUser:
    """The bus user of robot ``name`` with bus key ``key`` (to log in to a router)."""
    if not key:
        raise ConfigError(f"robot {name!r} needs a bus key to log in to a router")
    return BusUser(f"robot-{name}", _digest(key, b"freelook zenoh robot password"))


def router_user(name: str, key: bytes) -> BusUser:
    """The bus user of router ``name`` with key ``key`` (to join another router)."""
    if not key:
        raise ConfigError(f"router {name!r} needs a key to join another router")
    return BusUser(f"router-{name}", _digest(key, b"freelook zenoh router password"))


def router_zid(name: str, key: bytes) -> str:
    """The Zenoh id router ``name`` takes (16 bytes as hex; the first byte non-zero, as
    Zenoh wants), so a router that joins it can tell it in its access control."""
    digest = bytearray(bytes.fromhex(_digest(key, b"freelook zenoh router id " + name.encode())))
    digest[0] |= 0x10
    return digest[:16].hex()


def _rule(rule_id: str, flow: str, messages: Iterable[str], keys: Iterable[str]) -> dict[str, Any]:
    return {
        "id": rule_id,
        "permission": "allow",
        "flows": [flow],
        "messages": list(messages),
        "key_exprs": list(keys),
    }


def _station_rules(user: str) -> list[dict[str, Any]]:
    own = [f"{_ROOT}/*/telemetry/{user}-$*", f"{_ROOT}/*/video/{user}-$*"]
    return [
        _rule(f"{user} puts", "ingress", ["put"], [f"{_ROOT}/*/control/{user}-$*"]),
        _rule(f"{user} subscribes", "ingress", ["declare_subscriber"], own),
        _rule(f"{user} discovers", "ingress", ["query"], [f"{_ROOT}/*/info"]),
        _rule(
            f"{user} watches",
            "ingress",
            ["liveliness_query", "declare_liveliness_subscriber"],
            [f"{_ROOT}/*/alive"],
        ),
        _rule(f"{user} receives", "egress", ["put"], own),
        _rule(f"{user} sees robots", "egress", ["declare_subscriber"], [f"{_ROOT}/*/control/*"]),
        _rule(
            f"{user} sees answers", "egress", ["declare_queryable", "reply"], [f"{_ROOT}/*/info"]
        ),
        _rule(f"{user} sees tokens", "egress", ["liveliness_token"], [f"{_ROOT}/*/alive"]),
    ]


def _robot_rules(name: str, user: str) -> list[dict[str, Any]]:
    base = f"{_ROOT}/{name}"
    return [
        _rule(f"{user} puts", "ingress", ["put"], [f"{base}/telemetry/*", f"{base}/video/*"]),
        _rule(f"{user} subscribes", "ingress", ["declare_subscriber"], [f"{base}/control/*"]),
        _rule(f"{user} answers", "ingress", ["declare_queryable", "reply"], [f"{base}/info"]),
        _rule(f"{user} is alive", "ingress", ["liveliness_token"], [f"{base}/alive"]),
        _rule(f"{user} receives", "egress", ["put"], [f"{base}/control/*"]),
        _rule(
            f"{user} sees stations",
            "egress",
            ["declare_subscriber"],
            [f"{_ROOT}/*/telemetry/*", f"{_ROOT}/*/video/*"],
        ),
        _rule(f"{user} is asked", "egress", ["query"], [f"{_ROOT}/*/info"]),
    ]


_EVERY_MESSAGE = [
    "put",
    "delete",
    "declare_subscriber",
    "query",
    "declare_queryable",
    "reply",
    "liveliness_token",
    "declare_liveliness_subscriber",
    "liveliness_query",
]


def _router_rules(user: str) -> list[dict[str, Any]]:
    every = [f"{_ROOT}/**"]
    return [
        _rule(f"{user} sends", "ingress", _EVERY_MESSAGE, every),
        _rule(f"{user} receives", "egress", _EVERY_MESSAGE, every),
    ]


@dataclass(frozen=True, slots=True)
class BusAccess:
    """The users an accepting node knows and what each may do (default deny)."""

    stations: tuple[BusUser, ...]
    robots: tuple[tuple[str, BusUser], ...] = ()
    routers: tuple[tuple[BusUser, str], ...] = ()  # each router's user and Zenoh id

    @classmethod
    def of(
        cls,
        station_keys: Iterable[bytes],
        robot_keys: Mapping[str, bytes] | None = None,
        router_keys: Mapping[str, bytes] | None = None,
    ) -> BusAccess:
        """Access for the stations with ``station_keys``, the robots with ``robot_keys``
        (name → bus key; a router's robots) and the routers with ``router_keys`` (name →
        key; routers that may join this one)."""
        stations = tuple(dict.fromkeys(station_user(key) for key in station_keys))
        if not stations:
            raise ConfigError("an authenticated Zenoh bus needs at least one station key")
        named = sorted((robot_keys or {}).items())
        robots = tuple((name, robot_user(name, key)) for name, key in named)
        routers = tuple(
            (router_user(n, k), router_zid(n, k)) for n, k in sorted((router_keys or {}).items())
        )
        return cls(stations, robots, routers)

    def dictionary(self) -> str:
        """Zenoh's usrpwd dictionary: ``user:password`` lines."""
        users = [*self.stations, *(user for _, user in self.robots)]
        users += [user for user, _ in self.routers]
        return "".join(f"{user.name}:{user.password}\n" for user in users)

    def access_control(self) -> dict[str, Any]:
        """Zenoh's ``access_control`` configuration: one subject and policy per user."""
        rules: list[dict[str, Any]] = []
        subjects: list[dict[str, Any]] = []
        policies: list[dict[str, Any]] = []
        entries = [(user.name, _station_rules(user.name)) for user in self.stations]
        entries += [(user.name, _robot_rules(name, user.name)) for name, user in self.robots]
        for name, its_rules in entries:
            rules += its_rules
            subjects.append({"id": name, "usernames": [name]})
            policies.append({"id": name, "rules": [r["id"] for r in its_rules], "subjects": [name]})
        for user, zid in self.routers:  # joining it (its user) or joined by it (its id)
            its_rules = _router_rules(user.name)
            rules += its_rules
            subjects += [
                {"id": user.name, "usernames": [user.name]},
                {"id": f"{user.name} id", "zids": [zid]},
            ]
            policies.append(
                {
                    "id": user.name,
                    "rules": [r["id"] for r in its_rules],
                    "subjects": [user.name, f"{user.name} id"],
                }
            )
        return {
            "enabled": True,
            "default_permission": "deny",
            "rules": rules,
            "subjects": subjects,
            "policies": policies,
        }


@dataclass(frozen=True, slots=True)
class ZenohTls:
    """TLS for the bus's links (``tls/HOST:PORT`` endpoints): ``root_ca`` verifies the
    listener's certificate (connecting side); ``certificate`` and ``private_key`` are the
    listener's (a robot in peer mode, a router)."""

    root_ca: Path | None = None
    certificate: Path | None = None
    private_key: Path | None = None

    @classmethod
    def from_files(cls, files: Mapping[str, Path]) -> ZenohTls | None:
        """TLS from a keys file's ``[zenoh]`` table (``tls_root_ca``, ``tls_certificate``,
        ``tls_private_key``); None when it names none."""
        if not files:
            return None
        return cls(
            files.get("tls_root_ca"), files.get("tls_certificate"), files.get("tls_private_key")
        )

    def check(self) -> None:
        """Every path given is a readable file, and a certificate comes with its key."""
        if (self.certificate is None) != (self.private_key is None):
            raise ConfigError("Zenoh TLS: a certificate needs its private key, and the other way")
        for what, path in (
            ("root CA", self.root_ca),
            ("certificate", self.certificate),
            ("private key", self.private_key),
        ):
            if path is not None and not Path(path).is_file():
                raise ConfigError(f"Zenoh TLS {what} {path}: no such file")


@dataclass(frozen=True, slots=True)
class ZenohAuth:
    """How one bus authenticates: ``user`` is presented when it connects (a station, a robot
    logging in to a router), ``access`` enforced on whoever connects to it, ``tls`` wraps its
    links."""

    user: BusUser | None = None
    access: BusAccess | None = None
    tls: ZenohTls | None = None
    zid: str | None = None  # the Zenoh id to take (a named router's, see router_zid)

    def endpoint(self, endpoint: str) -> str:
        """``endpoint`` on the link protocol this bus uses (``tls/…`` with TLS)."""
        if self.tls is not None and endpoint.startswith("tcp/"):
            return "tls/" + endpoint[4:]
        return endpoint

    @contextlib.contextmanager
    def applied(self, config: zenoh.Config) -> Iterator[zenoh.Config]:
        """``config`` with this authentication; the dictionary of passwords lives in a file
        only the owner reads, for as long as the session takes to open."""
        if self.tls is not None:
            self.tls.check()
            tls: dict[str, Any] = {}
            if self.tls.root_ca is not None:
                tls["root_ca_certificate"] = str(self.tls.root_ca)
            if self.tls.certificate is not None:
                tls["listen_certificate"] = str(self.tls.certificate)
                tls["listen_private_key"] = str(self.tls.private_key)
            for name, value in tls.items():
                config.insert_json5(f"transport/link/tls/{name}", json.dumps(value))
        if self.access is not None or self.user is not None:
            # peers learn of each other only from where they are told to connect
            config.insert_json5("scouting/gossip/enabled", "false")
        if self.zid is not None:
            config.insert_json5("id", json.dumps(self.zid))
        if self.user is not None:
            config.insert_json5("transport/auth/usrpwd/user", json.dumps(self.user.name))
            config.insert_json5("transport/auth/usrpwd/password", json.dumps(self.user.password))
        if self.access is None:
            yield config
            return
        config.insert_json5("access_control", json.dumps(self.access.access_control()))
        fd, name = tempfile.mkstemp(prefix="freelook-zenoh-", suffix=".txt")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as stream:
                stream.write(self.access.dictionary())
            config.insert_json5("transport/auth/usrpwd/dictionary_file", json.dumps(name))
            yield config
        finally:
            with contextlib.suppress(OSError):
                os.unlink(name)


def bus_auth(
    url: TransportUrl,
    *,
    listen: bool,
    keys: KeyRing | None = None,
    key: bytes | None = None,
    tls: ZenohTls | None = None,
) -> ZenohAuth:
    """How the end of ``url`` authenticates. A robot (``listen``) with station keys
    (``keys``, or the one-key shorthand ``key``) enforces access control in peer mode and
    logs in to the router as ``robot-NAME`` in client mode (its key: ``[robots.NAME]``, or
    the shorthand key). A station logs in with its ``key``. No keys: an open bus. TLS:
    ``tls``, else the keys file's ``[zenoh]`` files (a robot), else the root CA in
    ``FREELOOK_ZENOH_CA`` (a station; a robot too on ``zenoh+tls://``, which needs one)."""
    if tls is None and listen and keys is not None:
        tls = ZenohTls.from_files(keys.zenoh_tls)
    if tls is None and (url.tls or not listen) and os.environ.get(TLS_CA_ENV):
        tls = ZenohTls(root_ca=Path(os.environ[TLS_CA_ENV]))
    if url.tls and (tls is None or tls.root_ca is None):
        raise ConfigError(
            f"zenoh+tls://{url.host}:{url.port}/{url.robot}: the relay's certificate is checked "
            f"against a root CA: set {TLS_CA_ENV} to its file (or, for a robot, tls_root_ca "
            "in the keys file's [zenoh] table)"
        )
    if listen:
        ring = keys
        if ring is None and key is not None:
            from freelook.link._keys import KeyRing

            ring = KeyRing.single(key)
        if ring is None:
            return ZenohAuth(tls=tls)
        if url.mode == "peer":
            return ZenohAuth(access=BusAccess.of(ring.station_keys()), tls=tls)
        robot_key = ring.robots.get(url.robot, key)
        if robot_key is None:
            raise ConfigError(
                f"robot {url.robot!r} logs in to a Zenoh router with its bus key: add "
                f"[robots.{url.robot}] to the keys file (freelook keys new --robot {url.robot})"
            )
        return ZenohAuth(user=robot_user(url.robot, robot_key), tls=tls)
    if key is None:
        return ZenohAuth(tls=tls)
    return ZenohAuth(user=station_user(key), tls=tls)

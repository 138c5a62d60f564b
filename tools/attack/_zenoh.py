"""The campaign's Zenoh probe: a real ``freelook robot`` listening on Zenoh with a keys file
(access control on), its driver connected; strangers try to join, and a station holding a
valid key of its own sniffs everything and injects forged packets on the driver's control,
telemetry and video keys and on its own.

An unauthorised effect is a stranger admitted, a sample of the driver's heard by another, or
the robot commanded or displaced by an injection; the driver's telemetry and video rates
under the injections, against before them, are figures (they depend on the machine). A crash
is the robot process ending or printing a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import socket
import threading
import time
from typing import TYPE_CHECKING, Any

from tools.attack._link import (
    DRIVER,
    INTRUDER,
    START,
    _drives_after,
    _Keys,
    _keys_file,
    _until,
    _Watch,
)
from tools.attack._tally import ProcessUnderAttack, Tally

if TYPE_CHECKING:
    from freelook.operator import OperatorStation

__all__ = ["attack_zenoh"]

RATE = 300.0  # samples/s per key, as the finding that cut the driver's video to 0.6 fps


class _Peer:
    """A raw Zenoh session (no freelook end on it): what it hears of others, by key."""

    def __init__(self, endpoint: str, user: tuple[str, str] | None) -> None:
        import zenoh

        from freelook.link import zenoh_config

        config = zenoh_config("peer", connect=[endpoint])
        if user is not None:
            config.insert_json5("transport/auth/usrpwd/user", json.dumps(user[0]))
            config.insert_json5("transport/auth/usrpwd/password", json.dumps(user[1]))
        self.heard: list[str] = []
        self._lock = threading.Lock()
        try:
            self.session: Any = zenoh.open(config)
        except zenoh.ZError:
            self.session = None

    def connected(self) -> int:
        if self.session is None:
            return 0
        info = self.session.info
        return len(list(info.peers_zid())) + len(list(info.routers_zid()))

    def listen(self, key: str) -> None:
        import zenoh

        if self.session is None:
            return

        def hear(sample: Any) -> None:
            with self._lock:
                self.heard.append(str(sample.key_expr))

        self.session.declare_subscriber(key, hear, allowed_origin=zenoh.Locality.REMOTE)

    def count(self, pattern: str) -> int:
        with self._lock:
            return sum(pattern in key for key in self.heard)

    def close(self) -> None:
        if self.session is not None:
            self.session.close()


def _free_tcp_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _rates(station: OperatorStation) -> tuple[float, float]:
    now = station.clock()
    return station.core.telemetry_rate.rate(now), station.core.video_rate.rate(now)


async def _strangers_join(
    endpoint: str, keys: _Keys, driver_user: str, peers: list[_Peer], tally: Tally
) -> _Peer:
    """Three strangers (no login, a guessed station, the driver's name with a wrong password)
    and the intruder (a station with a key of its own) join the bus, each listening to
    everything; a stranger admitted is an effect. Returns the intruder (all are in
    ``peers``)."""
    from freelook.link import station_user

    strangers = [None, ("station-0000000000000000", "guess"), (driver_user, "wrong password")]
    for who in strangers:
        tally.tried("stranger joins")
        peers.append(await asyncio.to_thread(_Peer, endpoint, who))
    intruder = station_user(keys.intruder)
    attacker = await asyncio.to_thread(_Peer, endpoint, (intruder.name, intruder.password))
    peers.append(attacker)
    for peer in peers:
        for key in ("**", "freelook/**", "freelook/r1/*/*"):
            peer.listen(key)
    await _until("the intruder on the bus", lambda: attacker.connected() > 0, 10)
    admitted = [p.connected() for p in peers[:3]]
    if any(admitted):
        tally.effect(f"strangers admitted to the bus: {admitted}")
    return attacker


async def _inject(
    attacker: _Peer, keys: _Keys, tag: str, draw: random.Random, count: int, tally: Tally
) -> None:
    """``count`` mutated packets (a wrong key's, the intruder's own) put on the driver's
    control, telemetry and video keys and on keys of the intruder's own, at ``RATE`` a key."""
    from freelook.link import FreeLookCommand, Mutator, NativeCodec, VelocityCommand, station_user

    wrong = NativeCodec(draw.randbytes(32), sender=DRIVER)
    own = NativeCodec(keys.intruder, sender=INTRUDER)
    valid = [
        wrong.encode(VelocityCommand(1.0, 0.0), time.time()),
        own.encode(VelocityCommand(1.0, 0.0), time.time()),
        own.encode(FreeLookCommand(0.5, 0.0, 0.5), time.time()),
    ]
    mutator = Mutator(valid, draw.randrange(2**32))
    keys_to_hit = [
        f"freelook/r1/control/{tag}",
        f"freelook/r1/telemetry/{tag}",
        f"freelook/r1/video/{tag}",
        f"freelook/r1/control/{station_user(keys.intruder).name}-x",
        "freelook/r1/telemetry/x",
    ]
    started = time.monotonic()
    session = attacker.session
    for i in range(count):
        key = keys_to_hit[i % len(keys_to_hit)]
        how, data = mutator.one()
        tally.tried(f"injected on {key.split('/')[2]} ({how})")
        with contextlib.suppress(Exception):  # a put the bus refuses
            session.put(key, data)
        if i % 20 == 19:
            due = started + i / (RATE * len(keys_to_hit))
            await asyncio.sleep(max(0.0, due - time.monotonic()))


async def _campaign(count: int, seed: int, tally: Tally) -> None:
    from freelook.config import load_robot
    from freelook.link import FreeLookCommand, parse_transport_url, station_user
    from freelook.operator import OperatorStation

    config = load_robot("pioneer3dx")
    draw = random.Random(seed)
    port = _free_tcp_port()
    endpoint = f"tcp/127.0.0.1:{port}"
    url = f"zenoh://127.0.0.1:{port}/r1"
    with _keys_file() as keys:
        robot = ProcessUnderAttack(
            *("robot", "--hardware", "sim", "--world", "square", "--map", "none"),
            *("--listen", url, "--keys", str(keys.path), "--seed", str(seed)),
        )
        peers: list[_Peer] = []
        tasks: list[asyncio.Task[None]] = []
        try:
            await asyncio.to_thread(robot.wait_line, "profile on zenoh://")
            driver = OperatorStation(
                config, None, parse_transport_url(url), key=keys.driver, station=DRIVER
            )
            driver.drive_command = FreeLookCommand(0.0, 0.0, 0.0)
            tasks.append(asyncio.create_task(driver.run()))
            await _until(
                "the driver in control over Zenoh, with telemetry and video",
                lambda: driver.core.in_control and min(_rates(driver)) > 2,
                START,
            )
            await asyncio.sleep(2.5)  # a full window of the rates' 2 s
            quiet = _rates(driver)
            assert driver.driver is not None
            tag = str(getattr(driver.driver.endpoint, "tag", ""))
            driver_user = station_user(keys.driver).name
            attacker = await _strangers_join(endpoint, keys, driver_user, peers, tally)
            watch = _Watch(driver, controller=DRIVER)
            watching = asyncio.create_task(watch.watching(1e9))
            await _inject(attacker, keys, tag, draw, count, tally)
            attacked = _rates(driver)
            await asyncio.sleep(1.0)
            watching.cancel()
            await asyncio.gather(watching, return_exceptions=True)
            watch.tell(tally)
            sniffed = {i: peer.count(driver_user) for i, peer in enumerate(peers)}
            if any(sniffed.values()):
                tally.effect(f"the driver's samples heard by others: {sniffed}")
            tally.telemetry_share = attacked[0] / max(quiet[0], 1e-9)
            tally.video_share = attacked[1] / max(quiet[1], 1e-9)
            tally.notes.append(
                f"driver telemetry {quiet[0]:.1f} → {attacked[0]:.1f} Hz, video "
                f"{quiet[1]:.1f} → {attacked[1]:.1f} fps under {RATE:g} samples/s a key; "
                f"{watch.samples} telemetry samples watched"
            )
            await _drives_after(driver, driver, tally)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for peer in peers:
                await asyncio.to_thread(peer.close)
            for problem in robot.problems():
                tally.crash(f"robot: {problem}")
            robot.stop()


def attack_zenoh(count: int, seed: int) -> Tally:
    """Strangers and a key-holding station against a robot on Zenoh with access control."""
    tally = Tally("Zenoh (peer, access control)")
    asyncio.run(_campaign(count, seed, tally))
    return tally

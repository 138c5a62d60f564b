"""The campaign's link probes: a real ``freelook robot`` process attacked over UDP and over a
serial line (a pty), watched by an observer station holding its own key.

The driver's session is captured on the way (a relay between the station and the robot), so
replays are of real packets. Hostile inputs: garbage, packets signed with wrong keys,
captured packets replayed verbatim and mutated, forged and replayed session opens, and an
observer that holds a valid key trying to drive and to turn the driver's stream off. An
unauthorised effect is a telemetry sample, after the driver left, showing a commanded
motion, a station in control or the robot displaced; a crash is the robot process ending
or printing a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import random
import secrets
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tools.attack._tally import ProcessUnderAttack, Tally

if TYPE_CHECKING:
    import socket

    from freelook.config import RobotConfig
    from freelook.link import TransportUrl
    from freelook.operator import OperatorStation

__all__ = ["attack_robot_serial", "attack_robot_udp"]

DRIVER, GATEWAY, OBSERVER, INTRUDER = 1, 2, 3, 4  # the intruder: an observer with a key
START = 120.0  # s: a bound for a robot process to start (numba compiles on a first run)
MOVED = 0.02  # m: odometry drifts nowhere at rest; a forged command would move decimetres


@dataclass(frozen=True)
class _Keys:
    driver: bytes
    gateway: bytes
    observer: bytes
    intruder: bytes
    path: Path


@contextlib.contextmanager
def _keys_file() -> Iterator[_Keys]:
    driver, gateway, observer, intruder = (secrets.token_bytes(32) for _ in range(4))
    with tempfile.TemporaryDirectory(prefix="freelook-attack-") as folder:
        path = Path(folder) / "keys.toml"
        path.write_text(
            f'[stations.{DRIVER}]\nkey = "{driver.hex()}"\nauthority = 100\n\n'
            f'[stations.{GATEWAY}]\nkey = "{gateway.hex()}"\nauthority = 50\n\n'
            f'[stations.{OBSERVER}]\nkey = "{observer.hex()}"\nobserver = true\n\n'
            f'[stations.{INTRUDER}]\nkey = "{intruder.hex()}"\nobserver = true\n'
        )
        path.chmod(0o600)  # a keys file others may read is refused
        yield _Keys(driver, gateway, observer, intruder, path)


class _Relay(asyncio.DatagramProtocol):
    """Between the driver's station and the robot: passes everything, keeps what the station
    sent (an eavesdropper's capture), and later sends from the same address as the driver."""

    def __init__(self) -> None:
        self.captured: list[bytes] = []
        self.station: tuple[str, int] | None = None
        self.to_robot: asyncio.DatagramTransport | None = None
        self.to_station: asyncio.DatagramTransport | None = None

    @classmethod
    async def open(cls, robot: tuple[str, int]) -> tuple[_Relay, tuple[str, int]]:
        loop = asyncio.get_running_loop()
        relay = cls()
        relay.to_station, _ = await loop.create_datagram_endpoint(
            lambda: _Side(relay, toward_robot=True), local_addr=("127.0.0.1", 0)
        )
        relay.to_robot, _ = await loop.create_datagram_endpoint(
            lambda: _Side(relay, toward_robot=False), remote_addr=robot
        )
        return relay, relay.to_station.get_extra_info("sockname")

    def close(self) -> None:
        for side in (self.to_robot, self.to_station):
            if side is not None:
                side.close()


class _Side(asyncio.DatagramProtocol):
    def __init__(self, relay: _Relay, toward_robot: bool) -> None:
        self.relay, self.toward_robot = relay, toward_robot

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        relay = self.relay
        if self.toward_robot:
            relay.station = addr
            relay.captured.append(data)
            if relay.to_robot is not None:
                relay.to_robot.sendto(data)
        elif relay.station is not None and relay.to_station is not None:
            relay.to_station.sendto(data, relay.station)

    def error_received(self, exc: Exception) -> None:  # the robot's port closed: nothing to do
        pass


class _Watch:
    """Telemetry as an observer station sees it; an unauthorised effect is a sample showing a
    command, a controller, or the robot displaced from where the watch began."""

    def __init__(self, station: OperatorStation, controller: int = 0) -> None:
        self.station = station
        self.controller = controller  # the station rightly in control (0: none)
        self.samples = 0
        self.effects: list[str] = []
        self._origin: tuple[float, float] | None = None
        self._stamp = -1.0

    def look(self) -> None:
        telemetry = self.station.telemetry
        if telemetry is None or telemetry.stamp == self._stamp:
            return
        self._stamp = telemetry.stamp
        self.samples += 1
        x, y, _ = telemetry.odom
        if self._origin is None:
            self._origin = (x, y)
        moved = math.hypot(x - self._origin[0], y - self._origin[1])
        commanded = abs(telemetry.cmd_v) > 1e-3 or abs(telemetry.cmd_omega) > 1e-3
        if commanded or telemetry.controller != self.controller or moved > MOVED:
            self.effects.append(
                f"t={telemetry.stamp:.2f}: command ({telemetry.cmd_v:.3f} m/s, "
                f"{telemetry.cmd_omega:.3f} rad/s), controller {telemetry.controller}, "
                f"moved {moved:.3f} m"
            )

    async def watching(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        until = loop.time() + seconds
        while loop.time() < until:
            self.look()
            await asyncio.sleep(0.02)

    def tell(self, tally: Tally) -> None:
        """The effects seen into ``tally``: the first three by name, the rest counted."""
        for effect in self.effects[:3]:
            tally.effect(effect)
        tally.unauthorised += max(0, len(self.effects) - 3)


async def _drives_after(driver: OperatorStation, watcher: OperatorStation, tally: Tally) -> None:
    """The probe's control: the driver turns on the spot, and the watch must see it (else the
    watch was blind, or the attack left the driver unable to drive: either is reported)."""
    from freelook.link import VelocityCommand

    await _until("the driver in control after the attack", lambda: driver.core.in_control, 30)
    driver.drive_command = VelocityCommand(0.0, 0.5)  # on the spot
    control = _Watch(watcher, controller=DRIVER)
    await control.watching(1.5)
    driver.drive_command = VelocityCommand(0.0, 0.0)
    if not control.effects:
        tally.effect("the driver could not drive after the attack")
    else:
        tally.notes.append("the driver drove after the attack (the watch saw it)")


async def _until(what: str, test: Callable[[], bool], timeout: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not test():
        if loop.time() > deadline:
            raise RuntimeError(f"campaign: {what} not within {timeout:g} s")
        await asyncio.sleep(0.05)


def _still(station: OperatorStation) -> bool:
    telemetry = station.telemetry
    return (
        telemetry is not None
        and telemetry.controller == 0
        and abs(telemetry.cmd_v) < 1e-3
        and abs(telemetry.cmd_omega) < 1e-3
        and abs(telemetry.v) < 1e-3
        and abs(telemetry.omega) < 1e-3
    )


def _forgeries(draw: random.Random, captured: list[bytes]) -> list[tuple[str, bytes]]:
    """One round of hostile link inputs of every kind the probe knows."""
    from freelook.link import (
        ControlRequest,
        EStop,
        FreeLookCommand,
        LinkSession,
        Mutator,
        NativeCodec,
        SetTransmission,
        VelocityCommand,
    )

    now = time.time()
    wrong = NativeCodec(draw.randbytes(32), sender=draw.choice((DRIVER, OBSERVER, 2, 9)))
    messages = (
        VelocityCommand(1.0, 0.0),
        FreeLookCommand(0.5, 0.0, 0.5),
        ControlRequest(DRIVER, 255),
        EStop(False),
        SetTransmission(False),
    )
    opener = LinkSession(
        NativeCodec(draw.randbytes(32), sender=DRIVER),
        spacing=0.05,
        role="operator",
        nonce=draw.randbytes(8),
    )
    mutator = Mutator(captured, draw.randrange(2**32))
    out = [
        ("garbage", mutator.random_bytes()),
        ("wrong key", wrong.encode(draw.choice(messages), now)),
        ("forged session open", opener.poll(now)[0]),
    ]
    out += [(f"capture {kind}", data) for kind, data in mutator.many(3)]
    return out


def _observer(
    address: tuple[str, int] | TransportUrl, keys: _Keys, config: RobotConfig
) -> OperatorStation:
    """A station that only watches, with its own (observer's) key."""
    from freelook.operator import OperatorStation

    return OperatorStation(
        config,
        None,
        address,
        key=keys.observer,
        station=OBSERVER,
        driving=False,
    )


async def _drive_a_while(driver: OperatorStation) -> None:
    """The driver takes control, turns the robot for a second and leaves (through the relay,
    which captures what it sends)."""
    from freelook.link import FreeLookCommand

    driving = asyncio.create_task(driver.run())
    await _until("the driver in control", lambda: driver.core.in_control, 30)
    driver.drive_command = FreeLookCommand(0.0, 0.0, 0.5)
    await asyncio.sleep(1.0)
    driver.drive_command = FreeLookCommand(0.0, 0.0, 0.0)
    await asyncio.sleep(0.3)
    driving.cancel()
    await asyncio.gather(driving, return_exceptions=True)


async def _forge(
    relay: _Relay, target: tuple[str, int], draw: random.Random, count: int, tally: Tally
) -> None:
    """``count`` forgeries at about 2,000 a second: captured packets replayed from the
    driver's own address or from strangers, mutated ones, garbage, forged session opens."""
    sockets = [_socket() for _ in range(8)]
    replayer = relay.to_robot
    assert replayer is not None
    sent = 0
    started = time.monotonic()
    try:
        while sent < count:
            for kind, data in _forgeries(draw, relay.captured):
                if kind.startswith("capture") and draw.random() < 0.5:
                    replayer.sendto(data)  # from the driver's own address
                else:
                    with contextlib.suppress(OSError):
                        draw.choice(sockets).sendto(data, target)
                tally.tried(kind)
                sent += 1
            if sent % 400 < 7:  # about 2,000 inputs a second, not a flood
                await asyncio.sleep(max(0.0, started + sent / 2000 - time.monotonic()))
    finally:
        for sock in sockets:
            sock.close()


async def _udp_campaign(count: int, seed: int, tally: Tally) -> None:
    from freelook.config import load_robot
    from freelook.link import FreeLookCommand, SetTransmission, VelocityCommand
    from freelook.operator import OperatorStation

    config = load_robot("pioneer3dx")
    draw = random.Random(seed)
    with _keys_file() as keys:
        robot = ProcessUnderAttack(
            *("robot", "--hardware", "sim", "--world", "square", "--map", "none"),
            *("--listen", "udp://127.0.0.1:0", "--keys", str(keys.path), "--seed", str(seed)),
        )
        tasks: list[asyncio.Task[None]] = []
        relay: _Relay | None = None
        try:
            line = await asyncio.to_thread(robot.wait_line, "profile on udp://")
            port = int(line.rsplit(":", 1)[1])
            target = ("127.0.0.1", port)
            observer = _observer(target, keys, config)
            tasks.append(asyncio.create_task(observer.run()))
            await _until("telemetry at the observer", lambda: _still(observer), START)
            # the driver drives through a relay that captures everything it sends
            relay, relay_address = await _Relay.open(target)
            driver = OperatorStation(config, None, relay_address, key=keys.driver, station=DRIVER)
            await _drive_a_while(driver)
            await _until("the robot still after its driver left", lambda: _still(observer), 30)
            # an observer with a valid key tries to drive and to stop the others' stream
            intruder = OperatorStation(config, None, target, key=keys.intruder, station=INTRUDER)
            intruder.drive_command = FreeLookCommand(0.5, 0.0, 0.5)
            tasks.append(asyncio.create_task(intruder.run()))
            watch = _Watch(observer)
            watching = asyncio.create_task(watch.watching(1e9))
            await _until("the intruder's session", lambda: intruder.sessions_opened > 0, 30)
            intruder.send([SetTransmission(False), VelocityCommand(1.0, 0.0)])
            tally.tried("observer drives and stops the stream", 2)
            await _forge(relay, target, draw, count, tally)
            await asyncio.sleep(1.0)  # what was sent last has arrived and been judged
            watching.cancel()
            await asyncio.gather(watching, return_exceptions=True)
            watch.look()
            watch.tell(tally)
            tally.notes.append(f"{watch.samples} telemetry samples watched")
            # the driver comes back: a new session opens and drives despite what was replayed
            driver = OperatorStation(config, None, relay_address, key=keys.driver, station=DRIVER)
            tasks.append(asyncio.create_task(driver.run()))
            await _drives_after(driver, observer, tally)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if relay is not None:
                relay.close()
            for problem in robot.problems():
                tally.crash(f"robot: {problem}")
            robot.stop()


def _socket() -> socket.socket:
    import socket

    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setblocking(False)
    return sock


def attack_robot_udp(count: int, seed: int) -> Tally:
    """``count`` hostile datagrams at a real robot process's UDP port."""
    tally = Tally("robot UDP")
    asyncio.run(_udp_campaign(count, seed, tally))
    return tally


def attack_robot_serial(count: int, seed: int) -> Tally:
    """``count`` hostile frames on a serial line (a pty) between a robot process and an
    observer station, interleaved with the real traffic."""
    tally = Tally("robot serial (pty)")
    asyncio.run(_serial_campaign(count, seed, tally))
    return tally


async def _serial_campaign(count: int, seed: int, tally: Tally) -> None:
    from freelook.config import load_robot
    from freelook.link import TransportUrl

    config = load_robot("pioneer3dx")
    draw = random.Random(seed)
    robot_master, robot_slave = os.openpty()
    station_master, station_slave = os.openpty()
    for fd in (robot_master, station_master, robot_slave, station_slave):
        _raw(fd)
    robot_path, station_path = os.ttyname(robot_slave), os.ttyname(station_slave)
    captured: list[bytes] = []
    loop = asyncio.get_running_loop()

    def pass_on(source: int, sink: int, keep: bool) -> None:
        with contextlib.suppress(OSError):
            data = os.read(source, 65536)
            if keep:
                captured.append(data)
            _write(sink, data)

    loop.add_reader(station_master, pass_on, station_master, robot_master, True)
    loop.add_reader(robot_master, pass_on, robot_master, station_master, False)
    with _keys_file() as keys:
        robot = ProcessUnderAttack(
            *("robot", "--hardware", "sim", "--world", "square", "--map", "none"),
            *("--listen", f"serial://{robot_path}?baud=921600", "--keys", str(keys.path)),
            *("--seed", str(seed)),
        )
        tasks: list[asyncio.Task[None]] = []
        try:
            await asyncio.to_thread(robot.wait_line, "profile on serial://")
            url = TransportUrl("serial", device=station_path, baud=921600)
            observer = _observer(url, keys, config)
            tasks.append(asyncio.create_task(observer.run()))
            await _until("telemetry at the observer over serial", lambda: _still(observer), START)
            await asyncio.sleep(2.5)  # a full window of the rate's 2 s
            rate = observer.core.telemetry_rate
            quiet = rate.rate(observer.clock())
            watch = _Watch(observer)
            watching = asyncio.create_task(watch.watching(1e9))
            sent = 0
            started = time.monotonic()
            while sent < count:
                for kind, data in _forgeries(draw, captured[-64:] or [b"\x00"]):
                    _write(robot_master, data)  # between the real frames, toward the robot
                    tally.tried(kind)
                    sent += 1
                await asyncio.sleep(max(0.0, started + sent / 300 - time.monotonic()))
            attacked = rate.rate(observer.clock())
            await asyncio.sleep(1.0)
            watching.cancel()
            await asyncio.gather(watching, return_exceptions=True)
            watch.tell(tally)
            tally.telemetry_share = attacked / quiet if quiet > 0 else 0.0
            tally.notes.append(
                f"{watch.samples} telemetry samples watched; observer telemetry "
                f"{quiet:.1f} Hz quiet, {attacked:.1f} Hz under 300 hostile frames/s"
            )
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for problem in robot.problems():
                tally.crash(f"robot: {problem}")
            robot.stop()
            for fd in (robot_master, station_master):
                loop.remove_reader(fd)
            for fd in (robot_master, station_master, robot_slave, station_slave):
                os.close(fd)


def _raw(fd: int) -> None:
    import tty

    tty.setraw(fd)


def _write(fd: int, data: bytes) -> None:
    with contextlib.suppress(BlockingIOError, OSError):
        os.write(fd, data)

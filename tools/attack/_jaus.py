"""The campaign's JAUS probe: a real ``freelook jaus`` gateway in front of a robot process,
attacked with mutated JUDP datagrams (control requests at the highest authority, drive
commands, queries asking for acknowledgements) from many client addresses while the driver
holds the robot. An unauthorised effect is the gateway taking control or the robot moving;
a crash is either process ending or printing a traceback. The replies per datagram are
reported (the gateway must not amplify).
"""

from __future__ import annotations

import asyncio
import random
import time

from tools.attack._link import (
    DRIVER,
    GATEWAY,
    START,
    _drives_after,
    _Keys,
    _keys_file,
    _observer,
    _still,
    _until,
    _Watch,
)
from tools.attack._tally import ProcessUnderAttack, Tally

__all__ = ["attack_jaus"]


def attack_jaus(count: int, seed: int) -> Tally:
    """``count`` hostile JUDP datagrams at a real ``freelook jaus`` gateway (from many source
    ports) while the driver holds the robot: none may take control or move it."""
    tally = Tally("JAUS gateway (JUDP)")
    asyncio.run(_jaus_campaign(count, seed, tally))
    return tally


def _judp_valid() -> list[bytes]:
    """Datagrams a JAUS client sends: control requests, drive commands, queries."""
    from freelook.judp import AckNak, JausId, JudpMessage, pack_judp

    gateway, client = JausId(1, 1, 1), JausId(7, 1, 1)
    bodies = (
        (0x000D, bytes([255])),  # RequestControl at the highest authority
        (0x0405, bytes([0x01, 0x00]) + (32767).to_bytes(2, "little")),  # SetWrenchEffort
        (0x0415, bytes([0x21, 0x00]) + bytes(8)),  # SetVelocityCommand
        (0x2B00, bytes([2])),  # QueryIdentification
        (0x2403, (0x43).to_bytes(2, "little")),  # QueryLocalPose
    )
    return [
        pack_judp([JudpMessage(gateway, client, code.to_bytes(2, "little") + body, i, 1, 0, ack)])
        for i, (code, body) in enumerate(bodies)
        for ack in (AckNak.NONE, AckNak.REQUIRED)
    ]


class _Counter(asyncio.DatagramProtocol):
    def __init__(self) -> None:
        self.received = 0

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        self.received += 1


def _gateway(target: tuple[str, int], keys: _Keys) -> tuple[ProcessUnderAttack, int]:
    """``freelook jaus`` in front of the robot at ``target``, on a free port (returned)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    gateway = ProcessUnderAttack(
        *("jaus", "--robot", f"udp://{target[0]}:{target[1]}"),
        *("--key", keys.gateway.hex(), "--station", str(GATEWAY)),
        *("--port", str(port)),
    )
    return gateway, port


async def _send_judp(
    senders: list[asyncio.DatagramTransport],
    port: int,
    draw: random.Random,
    count: int,
    tally: Tally,
) -> None:
    """``count`` mutated JUDP datagrams to the gateway at about 2,000 a second, each from one
    of ``senders`` (its own client address)."""
    from freelook.link import Mutator

    mutator = Mutator(_judp_valid(), draw.randrange(2**32))
    started = time.monotonic()
    for i in range(count):
        how, data = mutator.one()
        tally.tried(f"JUDP {how}")
        draw.choice(senders).sendto(data, ("127.0.0.1", port))
        if i % 100 == 99:
            await asyncio.sleep(max(0.001, started + i / 2000 - time.monotonic()))


async def _jaus_campaign(count: int, seed: int, tally: Tally) -> None:
    from freelook.config import load_robot
    from freelook.link import FreeLookCommand
    from freelook.operator import OperatorStation

    config = load_robot("pioneer3dx")
    draw = random.Random(seed)
    loop = asyncio.get_running_loop()
    with _keys_file() as keys:
        robot = ProcessUnderAttack(
            *("robot", "--hardware", "sim", "--world", "square", "--map", "none"),
            *("--listen", "udp://127.0.0.1:0", "--keys", str(keys.path), "--seed", str(seed)),
        )
        gateway: ProcessUnderAttack | None = None
        tasks: list[asyncio.Task[None]] = []
        senders: list[asyncio.DatagramTransport] = []
        counter = _Counter()
        try:
            line = await asyncio.to_thread(robot.wait_line, "profile on udp://")
            target = ("127.0.0.1", int(line.rsplit(":", 1)[1]))
            gateway, jaus_port = _gateway(target, keys)
            await asyncio.to_thread(gateway.wait_line, "freelook jaus: component")
            observer = _observer(target, keys, config)
            tasks.append(asyncio.create_task(observer.run()))
            await _until("telemetry at the observer", lambda: _still(observer), START)
            driver = OperatorStation(config, None, target, key=keys.driver, station=DRIVER)
            driver.drive_command = FreeLookCommand(0.0, 0.0, 0.0)
            tasks.append(asyncio.create_task(driver.run()))
            await _until("the driver in control", lambda: driver.core.in_control, 30)
            await _until(
                "the driver's control in telemetry",
                lambda: observer.telemetry is not None and observer.telemetry.controller == DRIVER,
                10,
            )
            for _ in range(16):  # each its own JAUS client address (per-client state)
                sender, _ = await loop.create_datagram_endpoint(
                    lambda: counter, local_addr=("127.0.0.1", 0)
                )
                senders.append(sender)
            watch = _Watch(observer, controller=DRIVER)
            watching = asyncio.create_task(watch.watching(1e9))
            await _send_judp(senders, jaus_port, draw, count, tally)
            await asyncio.sleep(1.0)
            watching.cancel()
            await asyncio.gather(watching, return_exceptions=True)
            watch.tell(tally)
            tally.notes.append(
                f"{watch.samples} telemetry samples watched with the driver in control; "
                f"{counter.received} replies to {count} datagrams"
            )
            await _drives_after(driver, observer, tally)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for sender in senders:
                sender.close()
            for name, process in (("gateway", gateway), ("robot", robot)):
                if process is not None:
                    for problem in process.problems():
                        tally.crash(f"{name}: {problem}")
                    process.stop()

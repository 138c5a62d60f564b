"""A robot with a station keys file, over real UDP on loopback: each station does what its key
allows and no more."""

from __future__ import annotations

import asyncio
from pathlib import Path

from freelook.config import load_robot
from freelook.hardware.sim import simulated_server
from freelook.link import FreeLookCommand, KeyRing, TankCommand, derive_key
from freelook.maps import load_world
from freelook.operator import OperatorStation
from freelook.robot import ServerOptions
from keys_for_tests import write_keys_file
from loopback import OPENS, alive, running, serving
from waiting import wait_until_async

KEYS = """
[stations.1]
key = "driver passphrase"
authority = 10
modes = ["tank"]

[stations.2]
key = "watcher passphrase"
observer = true

[stations.3]
key = "supervisor passphrase"
authority = 20
"""


def test_each_station_does_what_its_key_allows(tmp_path: Path) -> None:
    write_keys_file(tmp_path / "keys.toml", KEYS)
    ring = KeyRing.load(tmp_path / "keys.toml", allow_weak=True)
    config, world = load_robot("pioneer3dx"), load_world("square")

    async def scenario() -> dict[str, object]:
        server, robot = simulated_server(
            config,
            world,
            ServerOptions(listen="udp://127.0.0.1:0", keys=ring, camera=False),
            robot_map=None,
        )

        def station(number: int, passphrase: str) -> OperatorStation:
            key = derive_key(passphrase)
            return OperatorStation(config, None, server.local_address, key=key, station=number)

        out: dict[str, object] = {}
        async with serving(server):
            driver = station(1, "driver passphrase")
            watcher = station(2, "watcher passphrase")
            impostor = station(3, "driver passphrase")  # station 3's id with station 1's key
            async with running(driver, watcher, impostor) as tasks:
                await wait_until_async(
                    lambda: alive(*tasks) and driver.in_control and watcher.telemetry is not None,
                    OPENS,
                    "the driver in control and the watcher hearing telemetry",
                )
                core = server.program.core

                async def refused(why: str, more: int) -> None:
                    """Until ``more`` further commands were refused ``why`` (the robot had
                    them, and that long to move, were they obeyed)."""

                    def count() -> int:
                        return sum(why in r for r in core.log.rejections)

                    before = count()
                    await wait_until_async(
                        lambda: count() >= before + more, 10, f"{more} commands refused: {why}"
                    )

                # the watcher tries to drive, the impostor tries to take over
                watcher.drive_command = TankCommand(0.3, 0.0)
                impostor.drive_command = TankCommand(0.3, 0.0)
                await refused("an observer may not send", 15)  # 47 ms apart: 0.7 s
                out["moved_by_others"] = robot.sim.ground_truth.v
                # the driver may not use Free Look, only Tank Control
                driver.drive_command = FreeLookCommand(0.3, 0.0, 0.0)
                await refused("mode free_look is not allowed", 10)
                out["moved_in_free_look"] = robot.sim.ground_truth.v
                driver.drive_command = TankCommand(0.3, 0.0)
                await wait_until_async(
                    lambda: robot.sim.ground_truth.v > 0.2,
                    10,
                    "the driver's Tank Control to move the robot",
                    show=lambda: robot.sim.ground_truth.v,
                )
                out["moved_in_tank"] = robot.sim.ground_truth.v
                out["holder"] = core.arbiter.holder(server.runtime.now())
                out["watcher_telemetry"] = watcher.telemetry is not None
                out["impostor_telemetry"] = impostor.telemetry is not None
                out["rejections"] = list(core.log.rejections)
                out["refused"] = dict(server.session.stats.refused)
        return out

    out = asyncio.run(scenario())
    assert out["moved_by_others"] == 0.0
    assert out["moved_in_free_look"] == 0.0
    assert float(out["moved_in_tank"]) > 0.2  # type: ignore[arg-type]
    assert out["holder"] == 1
    assert out["watcher_telemetry"]  # an observer watches
    assert not out["impostor_telemetry"]  # a wrong key hears nothing
    rejections = " ".join(out["rejections"])  # type: ignore[arg-type]
    assert "an observer may not send" in rejections
    assert "mode free_look is not allowed" in rejections
    assert out["refused"].get("auth", 0) > 0  # type: ignore[union-attr]

"""The station's core learns the robot's map: by name, from its own, or chunk by chunk."""

from __future__ import annotations

import dataclasses

import numpy as np

from freelook.config import load_robot
from freelook.link import LinkSession, MapAnnouncer, MapRequest, NativeCodec, encode_map
from freelook.maps import World, builtin_worlds, load_world
from freelook.operator import StationCore

CONFIG = load_robot("pioneer3dx")


def _core(world: World | None = None) -> StationCore:
    session = LinkSession(NativeCodec(bytes(range(32)), sender=1), spacing=0.047)
    return StationCore(
        CONFIG,
        world,
        session,
        known_maps=lambda name: load_world(name) if name in builtin_worlds() else None,
    )


def test_a_map_the_station_lacks_is_asked_for_at_its_spacing_until_it_is_whole() -> None:
    robot_map = dataclasses.replace(load_world("eod"), source="/srv/maps/eod.toml")
    announcer = MapAnnouncer(robot_map)
    core = _core()
    assert core.on_link_message(announcer.info, 0.0) is None
    now, got = 0.0, None
    for _ in range(400):
        now += 0.047
        asked = [m for m in core.periodic(now) if isinstance(m, MapRequest)]
        for request in asked:
            for chunk in announcer.answer(request, now):
                got = core.on_link_message(chunk, now) or got
        if got is not None:
            break
    assert got is not None
    assert core.robot_map is got
    assert np.array_equal(got.occupancy, robot_map.obstacles())
    assert encode_map(got) == announcer.blob
    # whole: nothing more is asked for, and the planner plans in the robot's map
    assert not [m for m in core.periodic(now + 1.0) if isinstance(m, MapRequest)]
    assert core.clearance.world is got


def test_a_built_in_world_is_taken_by_name_and_its_own_map_kept() -> None:
    core = _core()
    lab = load_world("lab")
    got = core.on_link_message(MapAnnouncer(lab, name="lab").info, 0.0)
    assert got is not None
    assert got.objects == lab.objects
    assert not [m for m in core.periodic(1.0) if isinstance(m, MapRequest)]
    own = load_world("square")
    core = _core(own)
    assert core.on_link_message(MapAnnouncer(own).info, 0.0) is own


def test_a_station_flooding_the_robot_with_map_requests_gets_only_the_budget() -> None:
    """Over loopback UDP, an authenticated station asks for the whole map 200 times in a few
    bursts, and for a map the robot does not have: the robot sends what its budget allows."""
    import asyncio

    from freelook.hardware.sim import simulated_server
    from freelook.link import derive_key
    from freelook.operator import OperatorStation
    from freelook.robot import ServerOptions
    from loopback import robot_and_station

    key = derive_key("map flood test")
    robot_map = dataclasses.replace(load_world("eod"), source="/srv/maps/eod.toml")

    async def flood() -> tuple[int, int, float, MapAnnouncer]:
        server, _ = simulated_server(
            CONFIG,
            load_world("lab"),
            ServerOptions(listen="udp://127.0.0.1:0", key=key, camera=False),
            robot_map=robot_map,
        )
        loop = asyncio.get_running_loop()
        async with robot_and_station(
            server,
            lambda address: OperatorStation(CONFIG, None, address, key=key),
            opened=lambda station: station.core.robot_map,
            what="the robot's map at the station",
            timeout=30,
        ) as station:
            announcer = server.map
            assert announcer is not None
            before = announcer.chunks_sent
            began = loop.time()
            digest = announcer.digest
            station.send([MapRequest(bytes(32), 0, 64)] * 20)  # not the robot's map
            for _ in range(10):  # in bursts the socket buffers take whole
                station.send([MapRequest(digest, 0, 64)] * 20)
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.5)  # the window the robot's budget is held to
            elapsed = loop.time() - began
        refused = announcer.chunks_refused + announcer.requests_refused
        return announcer.chunks_sent - before, refused, elapsed, announcer

    sent, refused, elapsed, announcer = asyncio.run(flood())
    assert sent <= announcer.burst + announcer.rate * elapsed
    assert refused > 0, (sent, refused, elapsed)

"""Every camera of a robot with the inter-frame codec, over real UDP on loopback: the TAROS's
driving camera, its arm's stereo pair (one side-by-side picture, both eyes) and its thermal
camera each reach a page's slot as VP9 (kind 4) at its own size, a keyframe first, and each
decodes to its camera's picture."""

from __future__ import annotations

import asyncio
import struct

import av
import numpy as np

from freelook.config import load_robot
from freelook.hardware.sim import simulated_server
from freelook.link import VideoCodec, derive_key
from freelook.maps import load_world
from freelook.operator import OperatorStation
from freelook.robot import ServerOptions
from freelook.web import BrowserSlot

TAROS = load_robot("taros")
VIDEO = struct.Struct("<BBBBBdIHH")  # kind 4, stream, layout, codec, flags, stamp, id, w, h


async def _streams(per_stream: int, seconds: float) -> tuple[dict[int, list[bytes]], object]:
    key = derive_key("every camera")
    options = ServerOptions(listen="udp://127.0.0.1:0", key=key, video=VideoCodec.VP9)
    server, robot = simulated_server(TAROS, load_world("eod"), options)
    robot_task = asyncio.create_task(server.run())
    await server.ready.wait()
    assert server.local_address is not None
    station = OperatorStation(TAROS, None, server.local_address, key=key)
    page = BrowserSlot()
    station.attach(page)
    station_task = asyncio.create_task(station.run())
    got: dict[int, list[bytes]] = {0: [], 1: [], 2: []}
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    try:
        while min(len(v) for v in got.values()) < per_stream:
            left = deadline - loop.time()
            if left <= 0:
                counts = {k: len(v) for k, v in got.items()}
                raise AssertionError(f"waited {seconds} s for {per_stream} frames each: {counts}")
            for payload in await asyncio.wait_for(page.next(), left):
                if payload[0] == 4:
                    got[VIDEO.unpack_from(payload)[1]].append(payload)
        return got, robot
    finally:
        for task in (station_task, robot_task):
            task.cancel()
        await asyncio.gather(station_task, robot_task, return_exceptions=True)


def test_every_camera_of_the_taros_goes_as_vp9_at_its_own_size() -> None:
    got, _ = asyncio.run(_streams(6, 60.0))
    sizes = {0: (TAROS.camera.width, TAROS.camera.height), 1: (640, 240), 2: (160, 120)}
    for stream, frames in got.items():
        heads = [VIDEO.unpack_from(p) for p in frames]
        assert {h[3] for h in heads} == {VideoCodec.VP9}, stream
        assert heads[0][4] == 1, f"stream {stream}: a keyframe first"
        assert {(h[7], h[8]) for h in heads} == {sizes[stream]}, stream
        ids = [h[6] for h in heads]
        assert ids == list(range(ids[0], ids[0] + len(ids))), stream
        decoder = av.CodecContext.create("vp9", "r")
        pictures = [
            f.to_ndarray(format="rgb24")
            for p in frames
            for f in decoder.decode(av.Packet(p[VIDEO.size :]))
        ]
        assert len(pictures) == len(frames), stream
        assert pictures[-1].shape == (sizes[stream][1], sizes[stream][0], 3)
        assert float(np.std(pictures[-1])) > 3.0, f"stream {stream}: a scene, not a blank"
    layouts = {VIDEO.unpack_from(p)[2] for p in got[1]}
    assert layouts == {1}  # side by side

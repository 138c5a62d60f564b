"""The cockpit in real Chromium driving the physics-engine Husky, every process as a user starts
it: ``freelook robot --robot husky --hardware ros2://a200_0001 --map room.yaml`` (native
profile, a key), ``freelook operator``, and the page's keys. W drives the chassis forward and
the pose the page shows follows the engine's truth; releasing W publishes zero; Shift+W (full
speed) held towards the wall ends short of it with no contact."""

from __future__ import annotations

import asyncio
import math
import shutil
import socket
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pybullet")

from husky_engine import HuskyEngine
from ros2_processes import CLI_TEST_TIMEOUT, TEST_KEY, start_operator

from cli_processes import free_udp_port, start_cli, stop
from freelook.config import load_robot
from steady_picture import STEADY_PICTURE
from waiting import wait_until_async

pytestmark = [pytest.mark.realtime, pytest.mark.timeout(CLI_TEST_TIMEOUT)]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
NAMESPACE = "a200_0001"
#: the pose the page has from the station's state, or null while it has none
PAGE_POSE = "() => (window.freelook.last && window.freelook.last.pose) || null"


#: the robot's stamp on the newest report at the page (its own clock)
ROBOT_STAMP = "window.freelook.last.t"


async def page_pose(page: Any) -> tuple[float, float] | None:
    pose = await page.evaluate(PAGE_POSE)
    return None if pose is None else (float(pose["x"]), float(pose["y"]))


def test_chromium_keys_drive_the_engine_husky_and_its_pose_follows_the_truth(
    ros_domain: int, tmp_path: Path
) -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed")
    from playwright.async_api import async_playwright

    husky = load_robot("husky")
    assert husky.laser is not None
    topics = husky.ros2.topics

    async def run() -> None:
        engine = HuskyEngine(
            ros_domain,
            namespace=NAMESPACE,
            topics=(topics.cmd_vel, topics.odom, topics.scan, topics.imu),
            stamped=husky.ros2.cmd_vel_stamped,
            separation=0.555 * 1.875,
            lidar_forward=husky.laser.mount_forward,
        ).start()
        await asyncio.sleep(0.5)  # the chassis settles on its wheels
        truth = engine.truth()
        udp_port, web_port = free_udp_port(), free_udp_port(socket.SOCK_STREAM)
        robot, _ = await start_cli(
            "robot",
            "--robot",
            "husky",
            "--hardware",
            f"ros2://{NAMESPACE}",
            "--map",
            str(engine.room.write_map(tmp_path)),
            "--start",
            f"{truth.x:.3f},{truth.y:.3f},{math.degrees(truth.yaw):.2f}",
            "--listen",
            f"udp://127.0.0.1:{udp_port}",
            "--wire",
            "native",
            "--key",
            TEST_KEY,
            ready=lambda line: "profile on" in line,
        )
        operator, url = await start_operator(udp_port, web_port, TEST_KEY)
        try:
            async with async_playwright() as p:
                browser = await p.chromium.launch(
                    executable_path=CHROMIUM,
                    headless=True,
                    args=["--no-sandbox", "--disable-gpu", "--no-first-run"],
                )
                page = await browser.new_page(bypass_csp=True)
                await page.add_init_script(STEADY_PICTURE)  # tests/steady_picture.py
                errors: list[str] = []
                page.on("pageerror", lambda err: errors.append(str(err)))
                await page.goto(url)
                await wait_until_async(
                    lambda: page_pose(page), 20.0, "a pose on the page", every=0.1
                )
                await page.click("[data-mode=tank]")

                # W: forward, and the page's pose is where the engine has the chassis
                x0 = engine.truth().x
                await page.keyboard.down("KeyW")
                await asyncio.sleep(1.5)  # the time it is held
                await page.keyboard.up("KeyW")
                released = time.monotonic()
                await wait_until_async(
                    lambda: any(v == 0.0 for _, v, _ in engine.commands_since(released)),
                    2.0,
                    "a zero cmd_vel after W's release",
                )
                await wait_until_async(
                    lambda: engine.truth().speed < 1e-3, 10.0, "the chassis at rest"
                )
                # the robot's estimate caught up: half a second of its reports on, at the page
                rest = await page.evaluate(ROBOT_STAMP)
                await wait_until_async(
                    lambda: page.evaluate(f"{ROBOT_STAMP} >= {rest} + 0.5"),
                    10.0,
                    "half a second of the robot's reports after the chassis came to rest",
                )
                now = engine.truth()
                assert now.x - x0 > 0.3, (x0, now.x)
                shown = await page_pose(page)
                assert shown is not None
                off = math.hypot(shown[0] - now.x, shown[1] - now.y)
                print(f"W for 1.5 s: {now.x - x0:.2f} m; the page's pose {off:.3f} m off")
                assert off < 0.10

                # Shift+W (full speed) towards the wall 4.2 m ahead of the start: short of it,
                # no contact
                await page.keyboard.down("Shift")
                await page.keyboard.down("KeyW")
                await asyncio.sleep(6.0)  # long enough to reach the wall unchecked
                await page.keyboard.up("KeyW")
                await page.keyboard.up("Shift")
                at_wall = engine.truth()
                gap = engine.room.x_max - at_wall.x - husky.footprint.length / 2
                print(f"W at the wall: stopped {gap:.2f} m short, {engine.contacts} contacts")
                assert engine.contacts == 0
                assert 0.0 < gap < 1.0  # it did drive up to the wall
                assert errors == []
                await browser.close()
        finally:
            await stop(operator)
            await stop(robot)
            engine.close()

    asyncio.run(run())

"""The cockpit in real Chromium on a ROS 2 base, every process as a user starts it: the tests'
own base node, ``freelook robot --hardware ros2`` (native profile, a key) and ``freelook
operator``. The base's camera image is painted on the page (its JPEG passed through as it came,
or sent as VP9 at its own 64 × 48), and Free Look's keys turn the base's pan joint (Q) and drive
it along where the camera looks (W)."""

from __future__ import annotations

import asyncio
import shutil
import socket
from pathlib import Path
from typing import Any

import pytest
from ros2_base import RoomBase
from ros2_processes import CLI_TEST_TIMEOUT, TEST_KEY, start_operator, start_robot_program

from cli_processes import free_udp_port, stop
from steady_picture import STEADY_PICTURE
from waiting import wait_until_async

pytestmark = [pytest.mark.realtime, pytest.mark.timeout(CLI_TEST_TIMEOUT)]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
#: the mean colour of the camera canvas's top-left quarter (away from the painted crosshair)
CAMERA_COLOUR = """() => {
  const c = document.getElementById('camera');
  const d = c.getContext('2d').getImageData(0, 0, c.width / 2, c.height / 2).data;
  let r = 0, b = 0;
  for (let i = 0; i < d.length; i += 4) { r += d[i]; b += d[i + 2]; }
  return [c.width, c.height, r / (d.length / 4), b / (d.length / 4)];
}"""


async def hold(page: Any, key: str, seconds: float) -> None:
    """``key`` held down for ``seconds``, then released."""
    await page.keyboard.down(key)
    await asyncio.sleep(seconds)  # the time it is held
    await page.keyboard.up(key)


@pytest.mark.parametrize("video", ["jpeg", "vp9"])
def test_chromium_shows_the_ros2_camera_and_free_look_keys_drive_the_base(
    ros_domain: int, video: str
) -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed")
    from playwright.async_api import async_playwright

    async def run() -> None:
        base = RoomBase(ros_domain).start()
        udp_port, web_port = free_udp_port(), free_udp_port(socket.SOCK_STREAM)
        robot, _ = await start_robot_program(
            udp_port, "--key", TEST_KEY, "--video", video, wire="native"
        )
        operator, url = await start_operator(udp_port, web_port, TEST_KEY)
        try:
            async with async_playwright() as p:
                browser = await p.chromium.launch(
                    executable_path=CHROMIUM,
                    headless=True,
                    args=["--no-sandbox", "--disable-gpu", "--no-first-run"],
                )
                # the waits below are evaluated strings, which the page's policy refuses
                page = await browser.new_page(bypass_csp=True)
                await page.add_init_script(STEADY_PICTURE)  # tests/steady_picture.py
                errors: list[str] = []
                page.on("pageerror", lambda err: errors.append(str(err)))
                await page.goto(url)

                async def painted() -> bool:
                    return bool((await page.evaluate(CAMERA_COLOUR))[0] == 64)

                # the base's own 64 × 48 picture, painted at its size
                await wait_until_async(painted, 20.0, "the ROS camera's frame on the page")
                width, height, red_before, blue_before = await page.evaluate(CAMERA_COLOUR)
                assert (width, height) == (64, 48)
                # the base's camera at pan 0: (127, 80, 128), within the codecs' error
                assert abs(red_before - 127) < 4
                assert abs(blue_before - 128) < 4
                decoded = await page.evaluate("window.freelook.video.decoded")
                assert (decoded > 0) == (video == "vp9")  # VP9 through WebCodecs, else JPEG
                await page.click("[data-mode=free_look]")
                # Q turns the camera: on this base its pan joint turns, the chassis stays
                await hold(page, "KeyQ", 1.0)
                await wait_until_async(lambda: base.pan > 0.3, 5.0, "the base's pan turned by Q")
                assert abs(base.x) < 0.01
                assert base.pan_commands

                async def turned() -> bool:
                    return bool((await page.evaluate(CAMERA_COLOUR))[2] > red_before + 20)

                await wait_until_async(turned, 3.0, "the turned camera's image on the page")
                # W: forward along where the camera looks
                x0, y0 = base.x, base.y
                await hold(page, "KeyW", 1.5)
                assert ((base.x - x0) ** 2 + (base.y - y0) ** 2) ** 0.5 > 0.2
                await wait_until_async(  # released: the base is told to stop
                    lambda: base.received[-1].v == 0.0, 5.0, "a zero cmd_vel after W's release"
                )
                assert errors == []
                await browser.close()
        finally:
            await stop(operator)
            await stop(robot)
            base.close()

    asyncio.run(run())

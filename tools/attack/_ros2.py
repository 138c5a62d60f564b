"""The campaign's ROS 2 probe: ``freelook sim --ros2`` as the base and ``freelook robot
--hardware ros2`` on it (docs/ros2.md's recipe), in a DDS domain of the probe's own with
discovery kept on this machine, a driver turning the robot on the spot, and a hostile rclpy
node on the same graph.

The hostile node publishes, in turn: forged camera images (JPEG cut short, a JPEG header
claiming 20000 × 20000, bytes that are no image) on the camera topic; then, with the robot
program started afresh each time (a second publisher is a fault held for the rest of the run),
all-inf scans on the scan topic, and a second ``cmd_vel`` publisher driving forward. It
listens to ``cmd_vel`` throughout. Figures: the longest gap in the robot program's ``cmd_vel``
under the images (an effect beyond the robot's watchdog timeout: the program stalled as long as
a lost link would stop it; scheduling on a busy machine stays well within it), how soon it
commanded zero after a second publisher appeared and whether it commanded motion again (an
effect), and whether its log named the fault (unnamed is an effect). A crash is either
process ending or printing a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import random
import re
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tools.attack._tally import ProcessUnderAttack, Tally

__all__ = ["CmdVel", "attack_ros2", "forged_jpegs"]

START = 180.0  # s: a bound for the processes to start (rclpy, numba on a first run)
ROBOT = "ros2-tracked-pan-tilt"
TURN = 0.4  # rad/s the driver commands, on the spot
HOSTILE = "hostile"  # the frame the hostile node's own cmd_vel carries (not heard as the robot's)
_NAMED = re.compile(r"publishers", re.IGNORECASE)


def forged_jpegs(draw: random.Random) -> list[tuple[str, bytes]]:
    """JPEGs a hostile node sends: one cut short, one whose header claims 20000 × 20000
    (SOF0 with three components, no scan data), and random bytes."""
    sof = struct.pack(">HHBHHB", 0xFFC0, 17, 8, 20000, 20000, 3) + bytes(
        [1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]
    )
    huge = b"\xff\xd8" + sof + b"\xff\xd9"
    real = _small_jpeg()
    return [
        ("JPEG cut short", real[: len(real) // 2]),
        ("JPEG header claiming 20000 × 20000", huge),
        ("bytes that are no image", draw.randbytes(4096)),
    ]


def _small_jpeg() -> bytes:
    import numpy as np

    from freelook.link import encode_jpeg

    return bytes(encode_jpeg(np.full((48, 64, 3), 120, np.uint8), 80))


@dataclass
class CmdVel:
    """The robot program's ``cmd_vel`` as the hostile node heard it: (t, v, ω)."""

    heard: list[tuple[float, float, float]] = field(default_factory=list)

    def longest_gap(self, since: float, until: float) -> float:
        times = [t for t, _, _ in self.heard if since <= t <= until]
        if len(times) < 2:
            return until - since
        return max(b - a for a, b in itertools.pairwise(times))

    def moving_after(self, since: float) -> list[float]:
        """Times after ``since`` it commanded motion."""
        return [t for t, v, w in self.heard if t >= since and (abs(v) > 1e-3 or abs(w) > 1e-3)]


class _Hostile:
    """The hostile rclpy node, in its own context and domain, spun on a thread."""

    def __init__(self, domain: int, topics: dict[str, str], heard: CmdVel) -> None:
        import threading

        from freelook.hardware.ros2 import ros

        r = self.r = ros()  # rclpy and the message classes, imported as the backend does
        self.context = r.rclpy.Context()
        r.rclpy.init(context=self.context, domain_id=domain)
        self.node = r.rclpy.create_node("hostile", context=self.context)
        self.topics = topics
        started = time.monotonic()

        def heard_cmd(msg: Any) -> None:
            if msg.header.frame_id == HOSTILE:  # its own, as the second publisher
                return
            heard.heard.append(
                (time.monotonic() - started, msg.twist.linear.x, msg.twist.angular.z)
            )

        self.started = started
        self.node.create_subscription(r.TwistStamped, topics["cmd_vel"], heard_cmd, 10)
        self.executor = r.executors.SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self._spin, name="hostile node", daemon=True)
        self.thread.start()

    def _spin(self) -> None:
        with contextlib.suppress(Exception):  # the context shut down
            self.executor.spin()

    def now(self) -> float:
        return time.monotonic() - self.started

    def publisher(self, kind: str) -> Any:
        r = self.r
        types = {"camera": r.CompressedImage, "scan": r.LaserScan, "cmd_vel": r.TwistStamped}
        return self.node.create_publisher(types[kind], self.topics[kind], 10)

    def stamp(self, msg: Any) -> Any:
        now = self.node.get_clock().now().to_msg()
        msg.header.stamp = now
        return msg

    def close(self) -> None:
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        with contextlib.suppress(Exception):
            self.r.rclpy.shutdown(context=self.context)
        self.thread.join(5)


async def _robot_program(env: dict[str, str], key: bytes) -> tuple[ProcessUnderAttack, int]:
    program = ProcessUnderAttack(
        *("robot", "--robot", ROBOT, "--hardware", "ros2", "--map", "none"),
        *("--listen", "udp://127.0.0.1:0", "--wire", "native", "--key", key.hex()),
        env=env,
    )
    line = await asyncio.to_thread(program.wait_line, "profile on udp://")
    return program, int(line.rsplit(":", 1)[1])


async def _driving(port: int, key: bytes, until: Callable[[], bool]) -> None:
    """A driver turning the robot on the spot until ``until()``."""
    from freelook.config import load_robot
    from freelook.link import VelocityCommand
    from freelook.operator import OperatorStation

    driver = OperatorStation(load_robot(ROBOT), None, ("127.0.0.1", port), key=key, station=1)
    driver.drive_command = VelocityCommand(0.0, TURN)
    task = asyncio.create_task(driver.run())
    try:
        while not until():
            await asyncio.sleep(0.05)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def _until_moving(heard: CmdVel, since: float, hostile: _Hostile, what: str) -> None:
    deadline = time.monotonic() + START
    while not heard.moving_after(since):
        if time.monotonic() > deadline:
            raise RuntimeError(f"campaign: no cmd_vel commanding motion ({what})")
        await asyncio.sleep(0.05)
    del hostile


async def _ros2_campaign(seconds: float, seed: int, tally: Tally) -> None:
    from freelook.config import load_robot

    config = load_robot(ROBOT)
    assert config.ros2 is not None
    topics = dict(config.ros2.topics)
    period = config.link.control_period
    draw = random.Random(seed)
    key = draw.randbytes(32)
    domain = 101 + (os.getpid() + seed) % 99  # the tests take 1 … 100
    env = {**os.environ, "ROS_DOMAIN_ID": str(domain), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    processes: list[tuple[str, ProcessUnderAttack]] = []
    heard = CmdVel()
    hostile: _Hostile | None = None
    try:
        base = ProcessUnderAttack(
            *("sim", "--ros2", "--robot", ROBOT, "--world", "lab", "--seed", str(seed)),
            env=env,
        )
        processes.append(("sim --ros2", base))
        await asyncio.to_thread(base.wait_line, "obeys")
        hostile = _Hostile(domain, topics, heard)
        for phase in ("images", "scans", "cmd_vel"):
            program, port = await _robot_program(env, key)
            processes.append((f"robot ({phase})", program))
            done = asyncio.Event()
            driving = asyncio.create_task(_driving(port, key, done.is_set))
            try:
                since = hostile.now()
                await _until_moving(heard, since, hostile, phase)
                await asyncio.sleep(1.0)
                if phase == "images":
                    await _images(
                        hostile, heard, draw, seconds, period, config.safety.watchdog_timeout, tally
                    )
                else:
                    await _second_publisher(phase, hostile, heard, program, seconds, period, tally)
            finally:
                done.set()
                await driving
                for problem in program.problems():
                    tally.crash(f"robot ({phase}): {problem}")
                program.stop()
                processes.remove((f"robot ({phase})", program))
    finally:
        if hostile is not None:
            hostile.close()
        for name, process in processes:
            for problem in process.problems():
                tally.crash(f"{name}: {problem}")
            process.stop()


async def _images(
    hostile: _Hostile,
    heard: CmdVel,
    draw: random.Random,
    seconds: float,
    period: float,
    stall: float,
    tally: Tally,
) -> None:
    publisher = hostile.publisher("camera")
    forged = forged_jpegs(draw)
    start = hostile.now()
    i = 0
    while hostile.now() - start < seconds:
        kind, data = forged[i % len(forged)]
        msg = hostile.stamp(hostile.r.CompressedImage())
        msg.format = "jpeg"
        msg.data = data
        publisher.publish(msg)
        tally.tried(kind)
        i += 1
        await asyncio.sleep(0.02)  # 50 a second
    end = hostile.now()
    gap = heard.longest_gap(start, end)
    if gap > stall:
        tally.effect(
            f"forged images: cmd_vel stopped for {gap:.2f} s (past the watchdog's {stall:g} s)"
        )
    tally.notes.append(
        f"forged images ({i} at 50/s): the longest cmd_vel gap {gap:.3f} s "
        f"(period {period:g} s); {len(heard.moving_after(start))} moving commands meanwhile"
    )


async def _second_publisher(
    phase: str,
    hostile: _Hostile,
    heard: CmdVel,
    program: ProcessUnderAttack,
    seconds: float,
    period: float,
    tally: Tally,
) -> None:
    kind = "all-inf scans" if phase == "scans" else "a second cmd_vel publisher"
    publisher = hostile.publisher("scan" if phase == "scans" else "cmd_vel")
    start = hostile.now()
    sent = 0
    while hostile.now() - start < seconds:
        if phase == "scans":
            msg = hostile.stamp(hostile.r.LaserScan())
            msg.header.frame_id = "laser"
            msg.angle_min, msg.angle_max = -2.356, 2.356
            msg.angle_increment = 4.712 / 540
            msg.range_min, msg.range_max = 0.05, 30.0
            msg.ranges = [float("inf")] * 541
        else:
            msg = hostile.stamp(hostile.r.TwistStamped())
            msg.header.frame_id = HOSTILE
            msg.twist.linear.x = 1.0
        publisher.publish(msg)
        sent += 1
        tally.tried(kind)
        await asyncio.sleep(0.05)
    hostile.node.destroy_publisher(publisher)
    stopped = [t for t, v, w in heard.heard if t >= start and abs(v) < 1e-3 and abs(w) < 1e-3]
    first_stop = (stopped[0] - start) if stopped else None
    after = [t for t in heard.moving_after(start) if first_stop is not None and t > stopped[0]]
    named = bool(_NAMED.search(program.errors() + "".join(program.lines)))
    if first_stop is None:
        tally.effect(f"{kind}: the robot program never commanded zero in {seconds:g} s")
    elif after:
        tally.effect(f"{kind}: cmd_vel commanded motion {after[-1] - stopped[0]:.2f} s after zero")
    if not named:
        tally.effect(f"{kind}: the robot program's log did not name the second publisher")
    when = "never" if first_stop is None else f"after {first_stop:.2f} s"
    tally.notes.append(
        f"{kind} ({sent} sent): cmd_vel zero {when}, "
        f"{len(after)} moving commands after it; the fault {'named' if named else 'unnamed'}"
    )


def attack_ros2(seconds: float, seed: int) -> Tally:
    """Each hostile ROS 2 attack for ``seconds`` at a real ROS 2 robot program on a real
    ``freelook sim --ros2`` base."""
    tally = Tally("ROS 2 backend (hostile node)")
    asyncio.run(_ros2_campaign(seconds, seed, tally))
    return tally

"""The engine Husky driven as a user drives it: ``freelook robot --hardware ros2`` started
on it (``start``), a thesis-profile operator on loopback UDP closing its moves on the
reported pose (:class:`Drive`), and the run on a map the acceptance asks for
(:func:`map_run`: the scan, the square, the quiet link, the wall), each measure printed and
every miss returned rather than raised, so one run says them all."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from husky_engine import HuskyEngine, Truth

from cli_processes import ThesisOperator, free_udp_port, start_cli, stop
from freelook.link import PositionReport, SetTransmission, VelocityCommand
from waiting import wait_until_async

#: the description a user writes for the engine robot (its numbers from the URDF)
DESCRIPTION = Path(__file__).with_name("husky.toml")
SPACING = 0.047  # s between the operator's commands: the thesis's operator interval
FRONT = 0.4937  # m from base_link to the chassis's front face (the URDF's base box)


def wrap(angle: float) -> float:
    """``angle`` in (−π, π]."""
    return math.remainder(angle, 2 * math.pi)


class Drive:
    """The program on the engine robot and the thesis operator driving it."""

    def __init__(self, engine: HuskyEngine, operator: ThesisOperator) -> None:
        self.engine = engine
        self.operator = operator
        self.truth_turned = 0.0  # the chassis's yaw turned, unwrapped, since the start
        self._last_yaw = engine.truth().yaw

    def pose(self) -> PositionReport:
        return self.operator.positions[-1]

    def _follow_truth(self) -> Truth:
        truth = self.engine.truth()
        self.truth_turned += wrap(truth.yaw - self._last_yaw)
        self._last_yaw = truth.yaw
        return truth

    async def send(self, v: float, omega: float) -> None:
        self.operator.send(VelocityCommand(v, omega))
        await asyncio.sleep(SPACING)
        self._follow_truth()

    async def hold(self, v: float, omega: float, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            await self.send(v, omega)

    async def until(
        self,
        command: Callable[[PositionReport], tuple[float, float] | None],
        limit: float,
        what: str,
    ) -> None:
        """Send ``command(pose)`` until it says None; fail naming ``what`` after ``limit`` s."""
        end = time.monotonic() + limit
        while (sent := command(self.pose())) is not None:
            assert time.monotonic() < end, f"{what}: not done in {limit:g} s, at {self.pose()}"
            await self.send(*sent)

    async def edge(self, corner: tuple[float, float], heading: float) -> None:
        """Drive along ``heading`` up to ``corner`` (by the reported pose)."""

        def command(p: PositionReport) -> tuple[float, float] | None:
            c, s = math.cos(heading), math.sin(heading)
            ahead = (corner[0] - p.x) * c + (corner[1] - p.y) * s
            if ahead <= 0.005:
                return None
            aside = -(p.x - corner[0]) * s + (p.y - corner[1]) * c  # left of the line
            omega = 1.5 * wrap(heading - p.theta) - 1.0 * aside
            return min(0.8, 0.8 * ahead + 0.05), max(-0.4, min(0.4, omega))

        await self.until(command, 30.0, f"the edge to {corner}")

    async def turn_to(self, heading: float) -> None:
        """Turn in place to ``heading`` (the reported one, which comes in whole degrees)."""

        def command(p: PositionReport) -> tuple[float, float] | None:
            error = wrap(heading - p.theta)
            if abs(error) < math.radians(0.75):
                return None
            return 0.0, math.copysign(max(0.15, min(1.4, 2.0 * abs(error))), error)

        await self.until(command, 30.0, f"the turn to {math.degrees(heading):.0f}°")

    async def rest(self, seconds: float = 0.8) -> None:
        await self.hold(0.0, 0.0, seconds)


async def start(
    engine: HuskyEngine,
    tmp_path: Path,
    *,
    with_map: bool,
    robot: str = str(DESCRIPTION),
    hardware: str = "ros2",
) -> tuple[asyncio.subprocess.Process, list[str], ThesisOperator, Drive]:
    """``freelook robot --hardware HARDWARE --robot ROBOT`` on ``engine`` as a user starts it
    (``--map room.yaml --start`` where the engine has the robot, else ``--map none``), and its
    operator hearing its positions."""
    udp_port = free_udp_port()
    await asyncio.sleep(0.5)  # the chassis settles on its wheels
    truth = engine.truth()
    where: tuple[str, ...] = ("--map", "none")
    if with_map:
        start_pose = f"{truth.x:.3f},{truth.y:.3f},{math.degrees(truth.yaw):.2f}"
        where = ("--map", str(engine.room.write_map(tmp_path)), "--start", start_pose)
    process, lines = await start_cli(
        "robot",
        "--robot",
        robot,
        "--hardware",
        hardware,
        *where,
        "--listen",
        f"udp://127.0.0.1:{udp_port}",
        "--wire",
        "thesis",
        ready=lambda line: "profile on" in line,
    )
    operator = await ThesisOperator.open(udp_port)
    operator.send(SetTransmission(True))
    await wait_until_async(lambda: len(operator.positions) > 5, 10.0, "position packets")
    return process, lines, operator, Drive(engine, operator)


async def map_run(
    engine: HuskyEngine, process: asyncio.subprocess.Process, drive: Drive
) -> list[str]:
    """On the room's map: the scan the program reports is the engine's (asserted), a 2 m
    square with point turns ends within 0.10 m of the truth, the program publishes zero
    within 1 s of the link going quiet at full speed, and full speed at the wall ends short
    of it with no contact. Returns what missed its bound."""
    problems: list[str] = []
    # its own scan, read where each beam points
    await drive.rest(0.5)
    cast = engine.last_scan()
    reported = drive.pose().laser
    assert len(reported) == 35
    for i, reading in enumerate(reported):
        beam = round(i * 359 / 34)
        assert reading == pytest.approx(cast[beam], abs=0.02), (i, beam)

    # a 2 m square with point turns, closed on the reported pose
    for k, corner in enumerate([(2.0, 0.0), (2.0, 2.0), (0.0, 2.0), (0.0, 0.0)]):
        await drive.edge(corner, k * math.pi / 2)
        await drive.rest(0.3)
        await drive.turn_to((k + 1) * math.pi / 2)
        await drive.rest(0.3)
    await drive.rest(1.0)
    truth, pose = engine.truth(), drive.pose()
    off = math.hypot(pose.x - truth.x, pose.y - truth.y)
    print(
        f"square: reported ({pose.x:.3f}, {pose.y:.3f}, {math.degrees(pose.theta):.0f}°), "
        f"truth ({truth.x:.3f}, {truth.y:.3f}, {math.degrees(truth.yaw):.1f}°): "
        f"{off:.3f} m off; the chassis turned {math.degrees(drive.truth_turned):.0f}°"
    )
    assert abs(drive.truth_turned) > math.radians(300)  # it did turn round
    if off > 0.10:
        problems.append(f"the square ended {off:.3f} m from the truth (bound 0.10)")

    # full speed at the wall 4.2 m ahead, and the link goes quiet
    await drive.hold(1.0, 0.0, 1.5)
    last = time.monotonic()
    fastest = engine.truth().speed

    def zero() -> float | None:
        return next((t for t, v, _ in engine.commands_since(last) if v == 0.0), None)

    stopped = await wait_until_async(zero, 3.0, "a published zero", every=0.005)
    await asyncio.sleep(max(0.0, last + 1.0 - time.monotonic()))
    still = engine.truth().speed
    print(
        f"quiet link: zero published {stopped - last:.3f} s after the last command; "
        f"the chassis at {fastest:.2f} m/s then, {still:.3f} m/s 1 s after"
    )
    if stopped - last > 1.0:
        problems.append(f"zero published {stopped - last:.3f} s after the link went quiet")
    await asyncio.sleep(1.0)

    # again, up to the wall
    await drive.hold(1.0, 0.0, 8.0)
    truth = engine.truth()
    gap = engine.room.x_max - (truth.x + FRONT * math.cos(truth.yaw))
    print(
        f"wall: stopped {gap:.3f} m short of it, {engine.contacts} steps touching; the engine "
        f"fell behind by {engine.skipped:.2f} s in all"
    )
    assert process.returncode is None
    assert truth.x > 2.0  # it drove up to the wall
    assert truth.speed < 0.02
    if engine.contacts or not 0.0 < gap < 1.0:
        problems.append(f"{engine.contacts} steps touching, {gap:.3f} m from the wall")
    return problems


async def finish(process: asyncio.subprocess.Process) -> None:
    """Stop the program and print what it said after it began to serve (a failing run's
    faults and refusals are there)."""
    await stop(process)
    if process.stdout is not None:
        said = (await process.stdout.read()).decode(errors="replace").splitlines()
        for line in said[-30:]:
            print(f"  robot: {line}")

"""``freelook robot --hardware ros2 --robot husky.toml --map room.yaml``, started as a user
starts it, on Clearpath's Husky from its published URDF in PyBullet (husky_engine.py), driven
by an operator on the thesis's wire over loopback UDP, the engine's truth beside what the
program reports:

- it takes the Husky's own 360° scan from −π (360 beams, 1°) and reports what the engine cast;
- a 2 m square with point turns, closed on the reported pose, ends within 0.10 m of the truth
  with the map;
- at the link going quiet the program publishes zero velocity within 1 s;
- full speed at a wall: the engine sees no contact;
- without a map, four 90° point turns lose at most 3 % of each turn with odometry at 24, 48
  and 120 Hz (the gyro at 80 Hz).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("pybullet")

from husky_engine import HuskyEngine, Truth
from ros2_processes import CLI_TEST_TIMEOUT, start_robot_program

from cli_processes import ThesisOperator, free_udp_port, stop
from freelook.link import PositionReport, SetTransmission, VelocityCommand
from waiting import wait_until_async

pytestmark = [pytest.mark.realtime, pytest.mark.timeout(CLI_TEST_TIMEOUT)]

DESCRIPTION = Path(__file__).with_name("husky.toml")
SPACING = 0.047  # s between the operator's commands: the thesis's operator interval
FRONT = 0.4937  # m from base_link to the chassis's front face (the URDF's base box)


def _wrap(angle: float) -> float:
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
        self.truth_turned += _wrap(truth.yaw - self._last_yaw)
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
            omega = 1.5 * _wrap(heading - p.theta) - 1.0 * aside
            return min(0.8, 0.8 * ahead + 0.05), max(-0.4, min(0.4, omega))

        await self.until(command, 30.0, f"the edge to {corner}")

    async def turn_to(self, heading: float) -> None:
        """Turn in place to ``heading`` (the reported one, which comes in whole degrees)."""

        def command(p: PositionReport) -> tuple[float, float] | None:
            error = _wrap(heading - p.theta)
            if abs(error) < math.radians(0.75):
                return None
            return 0.0, math.copysign(max(0.15, min(1.4, 2.0 * abs(error))), error)

        await self.until(command, 30.0, f"the turn to {math.degrees(heading):.0f}°")

    async def rest(self, seconds: float = 0.8) -> None:
        await self.hold(0.0, 0.0, seconds)


async def _start(
    engine: HuskyEngine, tmp_path: Path, with_map: bool
) -> tuple[asyncio.subprocess.Process, list[str], ThesisOperator, Drive]:
    """The program on ``engine`` as a user starts it (``--map room.yaml --start`` where the
    engine has the robot, else ``--map none``), and its operator hearing its positions."""
    udp_port = free_udp_port()
    await asyncio.sleep(0.5)  # the chassis settles on its wheels
    truth = engine.truth()
    extra: tuple[str, ...] = ()
    robot_map = "none"
    if with_map:
        robot_map = str(engine.room.write_map(tmp_path))
        extra = ("--start", f"{truth.x:.3f},{truth.y:.3f},{math.degrees(truth.yaw):.2f}")
    process, lines = await start_robot_program(
        udp_port, *extra, robot=str(DESCRIPTION), robot_map=robot_map
    )
    operator = await ThesisOperator.open(udp_port)
    operator.send(SetTransmission(True))
    await wait_until_async(lambda: len(operator.positions) > 5, 10.0, "position packets")
    return process, lines, operator, Drive(engine, operator)


def test_the_husky_on_its_map_takes_its_scan_ends_a_square_on_the_truth_and_stops_in_time(
    ros_domain: int, tmp_path: Path
) -> None:
    """One program run for four points (each start costs the program's start-up): every
    measure is taken and printed before any is held to its bound."""

    async def run() -> None:
        engine = HuskyEngine(ros_domain).start()
        process, lines, operator, drive = await _start(engine, tmp_path, with_map=True)
        problems: list[str] = []
        try:
            # its own scan, laid out as it published it: no refusal, and read where it points
            assert any("a ROS 2 robot" in line and "scan" in line for line in lines), lines
            assert not any("refused" in line or "taken as" in line for line in lines), lines
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

            stopped = await wait_until_async(zero, 2.0, "a published zero", every=0.005)
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
            print(f"wall: stopped {gap:.3f} m short of it, {engine.contacts} steps touching")
            assert process.returncode is None
            assert truth.x > 2.0  # it drove up to the wall
            assert truth.speed < 0.02
            if engine.contacts or not 0.0 < gap < 1.0:
                problems.append(f"{engine.contacts} steps touching, {gap:.3f} m from the wall")
            assert not problems, problems
        finally:
            operator.close()
            await stop(process)
            engine.close()

    asyncio.run(run())


@pytest.mark.parametrize("odom_hz", [24.0, 48.0, 120.0])
def test_point_turns_keep_the_heading_without_a_map(
    ros_domain: int, tmp_path: Path, odom_hz: float
) -> None:
    async def run() -> None:
        engine = HuskyEngine(ros_domain, odom_hz=odom_hz).start()
        process, _lines, operator, drive = await _start(engine, tmp_path, with_map=False)
        try:
            await drive.rest(0.5)
            losses = []
            start_reported, start_truth = drive.pose().theta, drive.truth_turned
            for k in range(4):
                reported0, truth0 = drive.pose().theta, drive.truth_turned
                await drive.turn_to(start_reported + (k + 1) * math.pi / 2)
                await drive.rest(0.6)
                reported = _wrap(drive.pose().theta - reported0)
                true = drive.truth_turned - truth0
                losses.append((true - reported) / true)
            total_reported = math.radians(360) + _wrap(drive.pose().theta - start_reported)
            total_true = drive.truth_turned - start_truth
            total = (total_true - total_reported) / total_true
            print(
                f"odometry {odom_hz:g} Hz: loss per turn "
                + ", ".join(f"{100 * x:+.1f} %" for x in losses)
                + f"; {math.degrees(total_reported):.0f}° reported for a true "
                f"{math.degrees(total_true):.1f}° ({100 * total:+.1f} %)"
            )
            assert process.returncode is None
            assert all(abs(x) <= 0.03 for x in losses)
            assert abs(total) <= 0.03
        finally:
            operator.close()
            await stop(process)
            engine.close()

    asyncio.run(run())

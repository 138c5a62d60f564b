"""``freelook robot --hardware judp://…``: the robot program, as a user starts it, drives a JAUS
robot (the tests' emulator) for a thesis-profile operator over real UDP on loopback."""

from __future__ import annotations

import asyncio
import math
import signal
import struct
import time
from collections.abc import Awaitable, Callable

import pytest
from jaus_emulator import (
    REPORT_CONTROL,
    REQUEST,
    VELOCITY_COMMAND,
    JausEmulator,
    judp,
    scale,
    velocity_x,
)

from cli_processes import ThesisOperator, free_udp_port, read_until, start_cli
from freelook.link import SetTransmission, VelocityCommand
from freelook.robot import RobotCore
from loopback import serving
from waiting import wait_until_async

pytestmark = pytest.mark.realtime

FREELOOK_ID = (150, 1, 1)  # the m2p2 description's [jaus] id
LACKS = "no wheel encoders through JAUS"  # what the program says at start of the M2P2


async def _start(judp_port: int, udp_port: int) -> tuple[asyncio.subprocess.Process, list[str]]:
    # a first start compiles the robot program's loops ahead, in a child, before it listens
    process, lines = await start_cli(
        "robot",
        "--robot",
        "m2p2",
        "--hardware",
        f"judp://127.0.0.1:{judp_port}",
        "--listen",
        f"udp://127.0.0.1:{udp_port}",
        "--wire",
        "thesis",
        ready=lambda line: "thesis profile on" in line,
        timeout=120,
    )
    # what it says at start about what the robot lacks comes right after
    if not any(LACKS in line for line in lines):
        await read_until(process, lines, lambda line: LACKS in line, 5, "what the robot lacks")
    return process, lines


def test_thesis_commands_drive_a_jaus_robot_and_a_quiet_link_stops_it() -> None:
    async def run() -> None:
        emulator = JausEmulator()
        await emulator.start()
        udp_port = free_udp_port()
        process, lines = await _start(emulator.port, udp_port)
        operator = await ThesisOperator.open(udp_port)
        positions = operator.positions
        try:
            # control taken at start, with the description's authority, out of Standby
            assert emulator.controller == FREELOOK_ID
            assert emulator.controller_authority == 5
            assert emulator.state == 1  # Ready
            said = "".join(lines)
            assert "the odometry is the robot's own local pose" in said
            operator.send(SetTransmission(True))
            # the commanded speed moves it within 0.5 s on a quiet machine (0.2 s of it the
            # ramp to 0.3 m/s); within 1 s on a busy one
            sent = time.monotonic()
            moving_after = math.inf
            for _ in range(40):  # the thesis's 47 ms spacing, 1.9 s
                operator.send(VelocityCommand(0.3, math.radians(10)))
                step = time.monotonic()
                while time.monotonic() - step < 0.047:
                    if emulator.v >= 0.27 and moving_after == math.inf:
                        moving_after = time.monotonic() - sent
                    await asyncio.sleep(0.002)
            assert math.isfinite(moving_after)  # it got going (how soon is the machine's)
            assert emulator.v == pytest.approx(0.3, abs=0.01)
            assert emulator.yaw_rate == pytest.approx(-math.radians(10), abs=0.01)  # clockwise −
            # position packets follow its local pose (JAUS's y right, yaw clockwise)
            heard = len(positions)
            await wait_until_async(lambda: len(positions) >= heard + 2, 2, "two more positions")
            last = positions[-1]
            assert emulator.x > 0.1  # it went forwards
            assert last.x == pytest.approx(emulator.x, abs=0.05)  # a packet of travel behind
            assert last.y == pytest.approx(-emulator.y, abs=0.05)
            assert last.y > 0.0  # it turned left
            assert math.remainder(last.theta + emulator.yaw, math.tau) == pytest.approx(
                0.0, abs=0.03
            )
            # the link goes quiet after the last command: the program stops the robot within its
            # watchdog (0.5 s), a cycle and braking (0.2 s), with room for a busy machine
            quiet = step
            await wait_until_async(
                lambda: emulator.v == 0.0, 2.0, "the stop after the link went quiet"
            )
            assert time.monotonic() - quiet < 1.2
            # stopped by the program's own stop command, not by the robot's watchdog: control
            # is still held and renewed, and the last velocity command is a stop
            # a while on, longer than the 0.5 s in which a command must be renewed, the program
            # still renewing what it holds (every 0.1 s): its last stop is younger than that
            await asyncio.sleep(0.6)
            assert emulator.controller == FREELOOK_ID
            last_command = emulator.codes_from(FREELOOK_ID, VELOCITY_COMMAND)[-1]
            assert asyncio.get_running_loop().time() - last_command.stamp < 0.5  # renewed
            assert struct.unpack_from("<I", last_command.body, 2)[0] == scale(
                0.0, -327.68, 327.67, 32
            )
            assert len(emulator.codes_from(FREELOOK_ID, REQUEST)) >= 2  # the keep-alive
            assert emulator.malformed == 0
        finally:
            operator.close()
            process.send_signal(signal.SIGINT)  # Ctrl-C
            async with asyncio.timeout(10):
                await process.wait()
        # released on exit
        await wait_until_async(lambda: emulator.controller is None, 2, "control released")
        await emulator.stop()

    asyncio.run(run())


Pushing = Callable[[Callable[[], object]], Callable[[], object]]


def _run_program(
    body: Callable[[RobotCore, Callable[[], float], JausEmulator, Pushing], Awaitable[None]],
    emulator: JausEmulator,
) -> None:
    """The m2p2's robot program on ``emulator`` over JUDP, driven by ``body(core, now,
    emulator, pushing)``; ``pushing(until)`` gives the operator's 0.3 m/s on every poll."""
    from freelook.config import load_robot
    from freelook.hardware import compile_ahead
    from freelook.hardware.judp import open_judp_server
    from freelook.robot import ServerOptions

    async def run() -> None:
        config = load_robot("m2p2")
        # as freelook robot does: the program's loops compiled ahead, so its first cycles do
        # not wait on the compiler (seconds on a loaded machine)
        compile_ahead(config, camera=False, notify=lambda line: None)
        await emulator.start()
        options = ServerOptions(listen="udp://127.0.0.1:0", allow_unauthenticated=True)
        server, _ = await open_judp_server(config, f"judp://127.0.0.1:{emulator.port}", options)
        core = server.program.core

        def pushing(until: Callable[[], object]) -> Callable[[], object]:
            """The operator's command given on every poll, as a station repeats it."""

            def step() -> object:
                core.handle(VelocityCommand(0.3, 0.0), server.runtime.now())
                return until()

            return step

        try:
            async with serving(server, timeout=30):
                await wait_until_async(
                    pushing(lambda: emulator.v >= 0.25), 3, "the program driving it", every=0.02
                )
                await body(core, server.runtime.now, emulator, pushing)
        finally:
            await emulator.stop()

    asyncio.run(run())


def test_control_revoked_mid_drive_is_flagged_in_telemetry_and_only_stops_are_commanded() -> None:
    from freelook.types import SafetyFlags

    async def body(
        core: RobotCore, now: Callable[[], float], emulator: JausEmulator, pushing: Pushing
    ) -> None:
        assert not core.control.last_output.flags & SafetyFlags.HARDWARE
        emulator.revoke((7, 1, 1), authority=200)  # an OCU takes the robot mid-drive
        await wait_until_async(
            pushing(lambda: core.control.last_output.flags & SafetyFlags.HARDWARE),
            1,
            "the hardware fault flagged",
            every=0.02,
        )
        assert (core.control.last_output.v, core.control.last_output.omega) == (0.0, 0.0)
        assert core.telemetry(now()).safety_flags & SafetyFlags.HARDWARE
        heard = len(emulator.codes_from(FREELOOK_ID, VELOCITY_COMMAND))
        for _ in range(10):  # the operator keeps pushing: only stops reach the robot
            core.handle(VelocityCommand(0.3, 0.0), now())
            await asyncio.sleep(0.02)
        after = emulator.codes_from(FREELOOK_ID, VELOCITY_COMMAND)[heard:]
        assert after
        assert all(abs(velocity_x(r.body)) < 1e-3 for r in after)
        assert emulator.controller == (7, 1, 1)

    _run_program(body, JausEmulator())


def test_a_forged_report_holds_the_robot_stopped_until_the_operator_releases_the_estop() -> None:
    # a robot without a command timeout of its own; a ReportControl naming another
    # controller, with the robot's own address and id, as an attacker would forge it
    from freelook.link import EStop
    from freelook.types import SafetyFlags

    async def body(
        core: RobotCore, now: Callable[[], float], emulator: JausEmulator, pushing: Pushing
    ) -> None:
        forged = judp(FREELOOK_ID, emulator.me, REPORT_CONTROL, struct.pack("<HBBB", 7, 1, 1, 200))
        emulator.send_raw(forged, FREELOOK_ID)
        await wait_until_async(
            pushing(lambda: emulator.v == 0.0), 1, "the robot stopped", every=0.02
        )
        assert emulator.controller == FREELOOK_ID  # it never changed hands
        for _ in range(10):  # held: the operator's commands do not move it
            core.handle(VelocityCommand(0.3, 0.0), now())
            await asyncio.sleep(0.02)
        assert emulator.v == 0.0
        assert core.control.last_output.flags & SafetyFlags.HARDWARE
        core.handle(EStop(True), now())  # the deliberate act: engage the e-stop, release it
        await wait_until_async(
            lambda: core.control.last_output.flags & SafetyFlags.ESTOP,
            1,
            "a cycle under the e-stop",
        )
        core.handle(EStop(False), now())
        await wait_until_async(
            pushing(lambda: emulator.v >= 0.25), 3, "driving again after the release", every=0.02
        )
        assert not core.control.last_output.flags & SafetyFlags.HARDWARE

    _run_program(body, JausEmulator(watchdog=math.inf))

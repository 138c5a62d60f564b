"""``freelook robot --hardware arcos://…``: the robot program, as a user starts it, drives an
ARCOS robot (the emulator) for a thesis-profile operator over real UDP and TCP on loopback."""

from __future__ import annotations

import asyncio
import contextlib
import math
import statistics
import time
from collections.abc import AsyncIterator, Callable

import pytest
from arcos_emulator import CLOSE, RVEL, STOP, VEL, ArcosEmulator, TcpRobot

from cli_processes import ThesisOperator, free_udp_port, start_cli, stop
from freelook.config import load_robot
from freelook.hardware.arcos import open_arcos_server
from freelook.link import SetTransmission, VelocityCommand
from freelook.robot import ServerOptions
from freelook.types import SafetyFlags
from loopback import serving
from waiting import wait_until_async

pytestmark = pytest.mark.realtime


async def _start_robot_program(arcos_port: int, udp_port: int) -> asyncio.subprocess.Process:
    # a first start compiles the robot program's loops ahead, in a child, before it listens
    process, _ = await start_cli(
        "robot",
        "--robot",
        "pioneer3dx",
        "--hardware",
        f"arcos://127.0.0.1:{arcos_port}",
        "--listen",
        f"udp://127.0.0.1:{udp_port}",
        "--wire",
        "thesis",
        ready=lambda line: "thesis profile on" in line,
        timeout=120,
    )
    return process


@contextlib.asynccontextmanager
async def _program_on_emulated_pioneer() -> AsyncIterator[
    tuple[ArcosEmulator, asyncio.subprocess.Process, ThesisOperator]
]:
    """The robot program on an emulated Pioneer with a thesis operator, each stopped after."""
    emulator = ArcosEmulator()
    tcp = TcpRobot(emulator)
    await tcp.start()
    try:
        udp_port = free_udp_port()
        process = await _start_robot_program(tcp.port, udp_port)
        operator = await ThesisOperator.open(udp_port)
        try:
            yield emulator, process, operator
        finally:
            operator.close()
            await stop(process)
    finally:
        await tcp.stop()


def test_thesis_commands_drive_an_arcos_robot_and_a_link_cut_stops_it_before_its_watchdog() -> None:
    async def run() -> None:
        async with _program_on_emulated_pioneer() as (emulator, _, operator):
            positions = operator.positions
            operator.send(SetTransmission(True))
            delays = []
            for k in range(60):  # the thesis's 47 ms spacing, a new speed every packet
                v = 0.2 + 0.002 * k
                before = len(emulator.commands_named(VEL))
                sent = time.monotonic()
                operator.send(VelocityCommand(v, math.radians(5)))
                wanted = round(v * 1000)

                def arrived(wanted: int = wanted, before: int = before) -> bool:
                    vel = [c.argument for c in emulator.commands_named(VEL)[before:]]
                    return any(isinstance(a, int) and abs(a - wanted) <= 1 for a in vel)

                # every command arrives as an ARCOS VEL
                await wait_until_async(arrived, 0.5, f"VEL {wanted} on the wire", every=0.001)
                delays.append(time.monotonic() - sent)
                await asyncio.sleep(max(0.0, 0.047 - (time.monotonic() - sent)))  # the spacing
            # specifications, not the latency (about a 20 ms cycle and loopback on a quiet
            # machine): commands keep up with the operator's spacing, and none is held so long
            # that the program's watchdog would have stopped the robot meanwhile
            pioneer = load_robot("pioneer3dx")
            assert statistics.median(delays) <= 0.047
            assert max(delays) <= pioneer.safety.watchdog_timeout
            assert emulator.commands_named(RVEL)[-1].argument == 5
            # position packets carry the robot's own odometry, from its SIPs
            heard = len(positions)
            await wait_until_async(lambda: len(positions) >= heard + 2, 2, "two more positions")
            x, y, theta = emulator.pose_m()
            last = positions[-1]
            assert x > 0.3
            assert last.x == pytest.approx(x, abs=0.06)  # a SIP and a packet of travel behind
            assert last.y == pytest.approx(y, abs=0.06)
            assert math.remainder(last.theta - theta, math.tau) == pytest.approx(0.0, abs=0.03)
            # the link is cut at the last command: the program stops the robot long before
            # ARCOS's 2 s watchdog, after its own watchdog and braking at its deceleration
            cut = sent
            await wait_until_async(lambda: emulator.v == 0.0, 1.5, "the stop after the link cut")
            stopped_after = time.monotonic() - cut
            braking = v / pioneer.drive.max_deceleration
            # a cycle, and room for a busy machine: still far short of ARCOS's 2 s
            assert stopped_after < pioneer.safety.watchdog_timeout + braking + 0.25
            assert emulator.bad_packets == 0  # every packet the program sent checked out

    asyncio.run(run())


def test_a_service_managers_stop_stops_the_robot_and_closes_its_connection() -> None:
    """SIGTERM (systemd's stop, ``kill``) ends the program as Ctrl-C does: the moving robot is
    told to stop and its connection closed, never left to ARCOS's watchdog."""

    async def run() -> None:
        async with _program_on_emulated_pioneer() as (emulator, process, operator):
            operator.send(SetTransmission(True))
            operator.send(VelocityCommand(0.3, 0.0))
            await wait_until_async(lambda: emulator.v > 0.0, 1.0, "the robot to drive")
            heard = len(emulator.commands)
            process.terminate()
            async with asyncio.timeout(10):
                await process.wait()
            assert process.returncode == 0
            after = {c.command for c in emulator.commands[heard:]}
            assert {STOP, CLOSE} <= after
            assert emulator.v == 0.0
            assert emulator.phase == "sync0"
            assert process.stdout is not None
            assert b"freelook: stopped" in await process.stdout.read()

    asyncio.run(run())


def test_a_lost_connection_is_flagged_in_telemetry_commands_nothing_and_comes_back() -> None:
    async def run() -> None:
        emulator = ArcosEmulator()
        tcp = TcpRobot(emulator)
        await tcp.start()
        options = ServerOptions(listen="udp://127.0.0.1:0", allow_unauthenticated=True)
        server, _ = await open_arcos_server(
            load_robot("pioneer3dx"), f"arcos://127.0.0.1:{tcp.port}", options
        )
        core = server.program.core

        def pushing(until: Callable[[], object]) -> Callable[[], object]:
            """The operator's command given on every poll, as a station repeats it."""

            def step() -> object:
                core.handle(VelocityCommand(0.3, 0.0), server.runtime.now())
                return until()

            return step

        try:
            async with serving(server):
                await wait_until_async(pushing(lambda: emulator.v > 0), 3, "the robot driven")
                assert not core.control.last_output.flags & SafetyFlags.HARDWARE
                await tcp.stop()  # the robot goes away (a pulled cable, a reboot)
                await wait_until_async(
                    pushing(lambda: core.control.last_output.flags & SafetyFlags.HARDWARE),
                    3,
                    "the lost connection flagged",
                    every=0.02,
                )
                out = core.control.last_output
                assert (out.v_left, out.v_right) == (0.0, 0.0)
                assert core.telemetry(server.runtime.now()).safety_flags & SafetyFlags.HARDWARE
                await tcp.start()  # back, on the same port
                await wait_until_async(  # the adapter reconnects by itself
                    pushing(lambda: not core.control.last_output.flags & SafetyFlags.HARDWARE),
                    3,
                    "the flag cleared on reconnection",
                    every=0.02,
                )
        finally:
            await tcp.stop()

    asyncio.run(run())

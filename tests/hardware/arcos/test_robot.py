"""ArcosRobot over real loopback TCP and a real pty pair, against the emulated robot."""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections.abc import Callable, Coroutine
from typing import Any

import numpy as np
import pytest
from arcos_emulator import (
    CLOSE,
    ENABLE,
    ESTOP,
    OPEN,
    RVEL,
    SETRV,
    SETV,
    STOP,
    VEL,
    ArcosEmulator,
    PtyRobot,
    TcpRobot,
)

from freelook.config import load_robot
from freelook.errors import ConfigError, HardwareError
from freelook.hal import Bumpers, DriveBase, DriveCommand, HardwareConnection, Odometer, RangeSensor
from freelook.hardware.arcos import (
    ANGLE_UNIT,
    PIONEER_3DX_SONAR,
    ArcosClient,
    ArcosError,
    ArcosRobot,
    SonarLayout,
    arcos_hardware,
    open_arcos_server,
    parse_arcos_url,
)
from freelook.robot import ServerOptions
from waiting import wait_until_async

pytestmark = pytest.mark.realtime

LIMIT = 5.0  # no scenario may take longer than this


def scenario(coro: Callable[[], Coroutine[Any, Any, None]]) -> None:
    async def bounded() -> None:
        async with asyncio.timeout(LIMIT):
            await coro()

    asyncio.run(bounded())


#: s within which a command the drive is given is on the wire: within ARCOS's pulse refresh
#: (0.5 s), the longest the protocol lets a robot go unrefreshed (that it goes at once, on the
#: next poll, is tested on the client's injected clock: test_client.py)
AT_ONCE = 0.5
#: s a busy machine may add to a timeout here: a connect that hangs, or that spends its whole
#: 0.9 s at one serial speed, still fails
LATE = 0.5
#: s a wait with no timing to it may take (the first SIP, a command through): a bound for a
#: run gone wrong, never a timing
GONE_WRONG = 2.0


async def wait_until(condition: Callable[[], object], timeout: float, what: str) -> None:
    """Until ``condition()`` holds, polled every 2 ms (some bounds here are 0.25 s); fails
    naming ``what`` and the last value seen after ``timeout``."""
    await wait_until_async(condition, timeout, what, every=0.002)


def make_robot(url: str, **options: Any) -> ArcosRobot:
    settings: dict[str, Any] = {
        "max_speed": 1.2,
        "max_turn_rate": math.radians(100),
        "connect_timeout": 1.0,
        "link_timeout": 0.3,
        "reconnect_delay": 0.05,
    }
    settings.update(options)
    return ArcosRobot(url, **settings)


async def drive_and_check(robot: ArcosRobot, emulator: ArcosEmulator) -> None:
    """Command through the HAL, time it onto the wire, and compare odometry with the robot."""
    hw = robot.hardware
    await wait_until(lambda: robot.client.odometry is not None, GONE_WRONG, "first SIP")
    before = len(emulator.commands)
    given = time.monotonic()
    hw.drive.command(
        DriveCommand.of_wheels(0.3, 0.5, 0.381)
    )  # v = 0.4 m/s, ω = 0.2 / 0.381 rad/s = 30°/s
    await wait_until(lambda: len(emulator.commands_named(RVEL)) > 0, GONE_WRONG, "VEL and RVEL")
    vel, rvel = emulator.commands[before], emulator.commands[before + 1]
    assert (vel.command, vel.argument, rvel.command, rvel.argument) == (VEL, 400, RVEL, 30)
    assert vel.stamp - given < AT_ONCE
    await asyncio.sleep(0.25)  # driven a quarter of a second
    hw.drive.command(DriveCommand.of_wheels(0.0, 0.0, 0.381))
    await wait_until(lambda: emulator.v == 0.0, AT_ONCE, "the stop")
    sips = robot.client.stats().sips
    await wait_until(lambda: robot.client.stats().sips >= sips + 2, 1.0, "two SIPs at rest")
    odo = hw.odometer.latest() if hw.odometer else None
    assert odo is not None
    x, y, th = emulator.pose_m()
    assert x > 0.05
    assert odo.x == pytest.approx(x, abs=0.0015)  # SIP positions are whole millimetres
    assert odo.y == pytest.approx(y, abs=0.0015)
    assert odo.theta == pytest.approx(th, abs=ANGLE_UNIT)
    assert (odo.v_left, odo.v_right) == (0.0, 0.0)
    scan = hw.sonar.latest() if hw.sonar else None
    assert scan is not None
    expected = [emulator.sonar_ranges[i] / 1000.0 for i in range(16)]
    np.testing.assert_allclose(scan.ranges, expected)
    np.testing.assert_allclose(scan.bearings, PIONEER_3DX_SONAR.bearings)


def test_drives_over_tcp_and_closes_with_stop_and_close() -> None:
    async def run() -> None:
        emulator = ArcosEmulator(name="Tester")
        server = TcpRobot(emulator)
        await server.start()
        robot = make_robot(f"arcos://127.0.0.1:{server.port}")
        hw = robot.hardware
        assert isinstance(hw.drive, DriveBase)
        assert hw.drive.kind == "differential"
        assert isinstance(hw.odometer, Odometer)
        assert isinstance(hw.sonar, RangeSensor)
        assert hw.sonar.name == "sonar"
        assert isinstance(hw.bumpers, Bumpers)
        assert isinstance(hw.connection, HardwareConnection)
        assert hw.connection.connected is False
        assert hw.connection.status == f"not connected to 127.0.0.1:{server.port}"
        await robot.connect()
        assert robot.connected
        assert robot.status == f"connected to Tester Pioneer p3dx-sh at 127.0.0.1:{server.port}"
        keeper = asyncio.create_task(robot.run())
        await drive_and_check(robot, emulator)
        emulator.stall = 0b1 << 9
        await wait_until(
            lambda: bool(hw.bumpers and (b := hw.bumpers.latest()) and b.front), GONE_WRONG, "bump"
        )
        given = time.monotonic()
        robot.e_stop()
        await wait_until(lambda: emulator.commands[-1].command == ESTOP, GONE_WRONG, "E_STOP")
        assert emulator.commands[-1].stamp - given < AT_ONCE
        await robot.close()
        await asyncio.wait_for(keeper, 0.5)
        assert [c.command for c in emulator.commands[-2:]] == [STOP, CLOSE]
        assert not robot.connected
        assert robot.status.startswith("closed")
        assert emulator.bad_packets == emulator.stray_bytes == 0
        await server.stop()

    scenario(run)


def test_bad_checksums_from_the_robot_are_dropped_and_counted_over_tcp() -> None:
    async def run() -> None:
        emulator = ArcosEmulator(corrupt_every=2)
        server = TcpRobot(emulator)
        await server.start()
        # every other SIP corrupt: the good ones 0.2 s apart, within the 1 s link timeout
        async with make_robot(f"arcos://127.0.0.1:{server.port}", link_timeout=1.0) as robot:
            keeper = asyncio.create_task(robot.run())
            await asyncio.sleep(1.2)  # longer than the link timeout: the link holds
            stats = robot.client.stats()
            assert stats.bad_checksums >= 1
            in_flight = emulator.sips_sent - (stats.sips + stats.bad_checksums)
            assert in_flight in (0, 1)  # every SIP sent is either decoded or counted
            assert robot.connected
        await keeper
        await server.stop()

    scenario(run)


def test_a_robot_that_never_answers_fails_the_connect_within_its_timeout() -> None:
    async def run() -> None:
        server = TcpRobot(ArcosEmulator(answer_handshake=False))
        await server.start()
        robot = make_robot(f"arcos://127.0.0.1:{server.port}", connect_timeout=0.3)
        start = time.monotonic()
        with pytest.raises(
            ArcosError,
            match=rf"the ARCOS robot at 127\.0\.0\.1:{server.port} accepted the TCP connection "
            r"but did not complete the SYNC handshake: no answer to the SYNC handshake within "
            r"0\.3 s \(expected the robot to echo SYNC0",
        ):
            await robot.connect()
        assert 0.3 <= time.monotonic() - start < 0.3 + LATE  # its timeout
        assert not robot.connected
        await server.stop()
        with pytest.raises(
            HardwareError, match=rf"cannot reach the ARCOS robot at 127\.0\.0\.1:{server.port}"
        ):
            await robot.connect()  # nobody listening now

    scenario(run)


def test_a_lost_tcp_connection_is_reported_and_reconnected_with_a_stop_first() -> None:
    async def run() -> None:
        emulator = ArcosEmulator()
        server = TcpRobot(emulator)
        await server.start()
        robot = make_robot(f"arcos://127.0.0.1:{server.port}")
        keeper = asyncio.create_task(robot.run())  # run() connects by itself
        await wait_until(lambda: robot.connected, 1.0, "first connection")
        robot.hardware.drive.command(DriveCommand.of_twist(0.25, 0.0, 0.381))
        await wait_until(lambda: emulator.v == 250, GONE_WRONG, "driving")
        await server.stop()
        await wait_until(lambda: not robot.connected, 1.0, "loss noticed")
        assert robot.status.startswith(f"disconnected from 127.0.0.1:{server.port}")
        assert not robot.hardware.connection or not robot.hardware.connection.connected
        for v in (0.1, 0.2):  # given while the robot is away: only the newest may go out
            robot.hardware.drive.command(DriveCommand.of_twist(v, 0.0, 0.381))
            await asyncio.sleep(0.1)  # a while apart
        assert "retrying" in robot.status
        mark = len(emulator.commands)
        await server.start()
        await wait_until(lambda: robot.connected, 2.0, "reconnection")
        await wait_until(lambda: emulator.v == 200, GONE_WRONG, "the newest command")
        after = [(c.command, c.argument) for c in emulator.commands[mark + 3 :]]
        assert after[:7] == [
            (OPEN, None),
            (SETV, 1200),
            (SETRV, 100),
            (ENABLE, 1),
            (STOP, None),
            (VEL, 200),
            (RVEL, 0),
        ]
        assert {c.argument for c in emulator.commands[mark:] if c.command == VEL} == {200}
        assert robot.status.startswith("connected")
        await robot.close()
        await keeper
        assert emulator.bad_packets == emulator.stray_bytes == 0
        await server.stop()

    scenario(run)


def test_drives_over_a_serial_pty() -> None:
    async def run() -> None:
        emulator = ArcosEmulator()
        pty = PtyRobot(emulator, baud=115200)
        await pty.start()
        robot = make_robot(f"arcos://{pty.device}?baud=115200")
        await robot.connect()
        assert robot.status.endswith(f"at {pty.device}")
        keeper = asyncio.create_task(robot.run())
        await drive_and_check(robot, emulator)
        await robot.close()
        await keeper
        await wait_until(lambda: emulator.phase == "sync0", GONE_WRONG, "CLOSE through the pty")
        assert [c.command for c in emulator.commands[-2:]] == [STOP, CLOSE]
        assert emulator.bad_packets == emulator.stray_bytes == 0
        await pty.stop()

    scenario(run)


def test_without_a_baud_the_serial_port_tries_9600_then_38400() -> None:
    async def run() -> None:
        emulator = ArcosEmulator()
        pty = PtyRobot(emulator, baud=38400)
        await pty.start()
        robot = make_robot(f"arcos://{pty.device}", connect_timeout=0.9)
        start = time.monotonic()
        await robot.connect()
        # 0.3 s at 9600, then 38400 at once (not the whole 0.9 s at 9600)
        assert 0.3 <= time.monotonic() - start < 0.3 + LATE
        assert pty.speed() == 38400
        await robot.close()
        await pty.stop()

    scenario(run)


def test_a_silent_serial_robot_fails_naming_the_device_and_speeds() -> None:
    async def run() -> None:
        pty = PtyRobot(ArcosEmulator(answer_handshake=False))
        await pty.start()
        robot = make_robot(f"arcos://{pty.device}", connect_timeout=0.3)
        with pytest.raises(
            ArcosError,
            match=rf"the ARCOS robot on {pty.device} did not answer the SYNC handshake within "
            r"0\.1 s at 9600, 38400, 115200 baud \(expected it to echo SYNC0, SYNC1 and SYNC2\)",
        ):
            await robot.connect()
        with pytest.raises(ArcosError, match=r"cannot open serial port /dev/nonexistent-arcos"):
            await make_robot("arcos:///dev/nonexistent-arcos?baud=9600").connect()
        await pty.stop()

    scenario(run)


def test_a_cut_serial_cable_is_a_lost_link_and_the_robot_is_found_again() -> None:
    async def run() -> None:
        emulator = ArcosEmulator()
        pty = PtyRobot(emulator, baud=9600)
        await pty.start()
        robot = make_robot(f"arcos://{pty.device}?baud=9600", connect_timeout=0.4)
        await robot.connect()
        keeper = asyncio.create_task(robot.run())
        await wait_until(lambda: robot.client.odometry is not None, GONE_WRONG, "first SIP")
        pty.muted = True
        await wait_until(lambda: not robot.connected, 1.0, "loss noticed")
        assert re.search(r"no SIP from the robot for \d+\.\d\d s \(limit 0\.30 s\)", robot.status)
        await asyncio.sleep(0.2)  # the cable cut a while longer
        pty.muted = False  # still open from before: it streams SIPs until the client closes it
        await wait_until(lambda: robot.connected, 3.0, "reconnection")
        # the client is connected at SYNC2's echo and sends OPEN on its next turn: the
        # emulator, on the same event loop, reads it a turn or two later
        await wait_until(lambda: emulator.sessions_opened > 1, GONE_WRONG, "the second OPEN")
        assert emulator.sessions_opened == 2
        assert CLOSE in [c.command for c in emulator.commands]
        await robot.close()
        await keeper
        assert emulator.bad_packets == 0
        await pty.stop()

    scenario(run)


def test_the_drive_sends_the_commands_twist_as_it_is() -> None:
    """ARCOS takes (v, ω): the drive reads the command's twist and never its track speeds
    (here those of no base at all), so nothing is turned back with a track width."""
    client = ArcosClient(max_speed=1.0, max_turn_rate=2.0, command_timeout=None)
    woken: list[int] = []

    class Always:
        connected = True
        status = "test"

    hw = arcos_hardware(client, Always(), notify=lambda: woken.append(1))
    client.start(0.0)
    hw.drive.command(DriveCommand(0.3, 0.5, 9.0, -9.0))  # ω = 0.5 rad/s = 28.6°/s
    assert client._motion == (300, 29)
    # vy has no meaning on a differential base
    hw.drive.command(DriveCommand.of_twist(-0.1, -0.2, 0.381, vy=0.5))
    assert client._motion == (-100, -11)
    assert len(woken) == 2


def test_urls_and_sonar_layouts() -> None:
    tcp = parse_arcos_url("arcos://sim.local")
    assert (tcp.host, tcp.port, tcp.is_serial, str(tcp)) == (
        "sim.local",
        8101,
        False,
        "sim.local:8101",
    )
    ser = parse_arcos_url("arcos:///dev/ttyUSB0")
    assert (ser.device, ser.bauds, str(ser)) == (
        "/dev/ttyUSB0",
        (9600, 38400, 115200),
        "/dev/ttyUSB0",
    )
    assert parse_arcos_url("arcos:///dev/ttyS1?baud=57600").bauds == (57600,)
    with pytest.raises(ConfigError, match=r"udp://h:1: expected arcos://HOST:PORT"):
        parse_arcos_url("udp://h:1")
    with pytest.raises(ConfigError, match=r"baud must be an integer, got 'fast'"):
        parse_arcos_url("arcos:///dev/ttyS1?baud=fast")
    with pytest.raises(ConfigError, match=r"the port must be a number from 0 to 65535"):
        parse_arcos_url("arcos://h:99999")
    ring = SonarLayout.from_config(load_robot("pioneer3dx").sonar)  # type: ignore[arg-type]
    np.testing.assert_allclose(ring.bearings, PIONEER_3DX_SONAR.bearings)
    with pytest.raises(ValueError, match="16 bearings but 15 x and 16 y positions"):
        SonarLayout(PIONEER_3DX_SONAR.bearings, PIONEER_3DX_SONAR.x[1:], PIONEER_3DX_SONAR.y)


def test_the_robot_program_drives_the_emulated_robot_through_open_arcos_server() -> None:
    async def run() -> None:
        emulator = ArcosEmulator()
        tcp = TcpRobot(emulator)
        await tcp.start()
        options = ServerOptions(listen="udp://127.0.0.1:0", allow_unauthenticated=True)
        url = f"arcos://127.0.0.1:{tcp.port}"
        server, description = await open_arcos_server(load_robot("pioneer3dx"), url, options)
        assert description == f"connected to Emulated Pioneer p3dx-sh at 127.0.0.1:{tcp.port}"
        serving = asyncio.create_task(server.run())
        # the control cycle commands the drive every 20 ms
        await wait_until(
            lambda: emulator.commands_named(VEL), GONE_WRONG, "VEL from the control cycle"
        )
        connection = server.program.hardware.connection
        assert connection is not None
        assert connection.connected
        serving.cancel()
        with pytest.raises(asyncio.CancelledError):
            await serving
        await wait_until(lambda: emulator.phase == "sync0", GONE_WRONG, "CLOSE")
        assert [c.command for c in emulator.commands[-2:]] == [STOP, CLOSE]
        assert emulator.bad_packets == emulator.stray_bytes == 0
        await tcp.stop()

    scenario(run)

"""A JAUS robot (the tests' own emulator) driven through :class:`JausRobot` over loopback UDP:
discovery, control taken and kept, both drive services, the pose followed, control lost to
another client, released on close; and the refusals (no answer, control refused)."""

from __future__ import annotations

import asyncio
import math
import struct
import time
from collections.abc import Awaitable, Callable

import pytest
from jaus_emulator import (
    ACCESS,
    CONFIRM,
    JOINT_SENSOR,
    MANAGEMENT,
    MANIPULATOR,
    POSE_SENSOR,
    PRIMITIVE_DRIVER,
    REJECT,
    RELEASE,
    REPORT_CONTROL,
    REPORT_STATUS,
    REQUEST,
    RESUME,
    VELOCITY_COMMAND,
    VELOCITY_DRIVER,
    VELOCITY_SENSOR,
    WRENCH,
    JausEmulator,
    judp,
    scale,
    velocity_x,
)

from freelook.hal import DriveCommand
from freelook.hardware.judp import ClientOptions, JausRobot, JausRobotError, Phase
from freelook.judp import JausId
from waiting import wait_until_async

pytestmark = pytest.mark.realtime

ME = JausId(150, 1, 1)
ME_T = (150, 1, 1)
#: s a wait with no timing to it may take (the robot moving, control released, the fault):
#: a bound for a run gone wrong, never a timing
GONE_WRONG = 2.0


def _robot(emulator: JausEmulator, **options: float) -> JausRobot:
    return JausRobot(
        f"judp://127.0.0.1:{emulator.port}",
        ClientOptions(own_id=ME, authority=5, max_speed=1.0, max_turn_rate=math.pi / 2, **options),
        kind="holonomic",
    )


def _run(body: Callable[[JausEmulator], Awaitable[None]], emulator: JausEmulator) -> None:
    async def main() -> None:
        await emulator.start()
        try:
            await body(emulator)
        finally:
            await emulator.stop()

    asyncio.run(main())


@pytest.mark.parametrize(
    ("drive", "code"), [(VELOCITY_DRIVER, VELOCITY_COMMAND), (PRIMITIVE_DRIVER, WRENCH)]
)
def test_control_is_taken_the_robot_driven_and_its_pose_followed(drive: str, code: int) -> None:
    emulator = JausEmulator(services=(ACCESS, MANAGEMENT, drive, POSE_SENSOR), control_timeout=1)

    async def body(emulator: JausEmulator) -> None:
        robot = _robot(emulator)
        await robot.connect()
        try:
            assert robot.client.phase == Phase.READY
            assert robot.client.drive_service == drive
            # control taken with the configured authority, Resume sent out of Standby
            assert emulator.controller == ME_T
            assert emulator.controller_authority == 5
            assert emulator.codes_from(ME_T, RESUME)
            hw = robot.hardware
            assert hw is not None
            assert hw.odometer is not None
            assert robot.connected
            # forward 0.4 m/s turning left (counter-clockwise) 0.3 rad/s: in JAUS's frame a
            # negative (anticlockwise) yaw rate
            hw.drive.command(DriveCommand.of_twist(0.4, 0.3, 0.6))
            await wait_until_async(lambda: emulator.v > 0.35, GONE_WRONG, "the robot moving")
            assert emulator.v == pytest.approx(0.4, abs=0.01)
            assert emulator.yaw_rate == pytest.approx(-0.3, abs=0.01)
            assert emulator.codes_from(ME_T, code)
            # held over several control timeouts by the keep-alive
            for _ in range(50):
                hw.drive.command(DriveCommand.of_twist(0.4, 0.3, 0.6))
                await asyncio.sleep(0.05)
            assert emulator.controller == ME_T
            assert len(emulator.codes_from(ME_T, REQUEST)) >= 4  # well inside the 1 s timeout
            # the odometer follows the robot's local pose, turned into freelook's frame
            held = hw.odometer.latest()
            await wait_until_async(
                lambda: hw.odometer.latest() is not held, 2.0, "a pose report after the last one"
            )
            sample = hw.odometer.latest()
            assert sample is not None
            assert emulator.x > 0.6
            assert sample.x == pytest.approx(emulator.x, abs=0.05)
            assert sample.y == pytest.approx(-emulator.y, abs=0.05)
            assert sample.y > 0.05  # it turned left
            assert math.remainder(sample.theta + emulator.yaw, math.tau) == pytest.approx(
                0.0, abs=0.03
            )
            assert (sample.v_left + sample.v_right) / 2 == pytest.approx(0.4, abs=0.1)
        finally:
            await robot.close()
        # released on close: a stop, then ReleaseControl
        await wait_until_async(lambda: emulator.controller is None, GONE_WRONG, "released")
        assert emulator.codes_from(ME_T, RELEASE)
        assert emulator.v == 0.0

    _run(body, emulator)


def test_a_command_not_renewed_becomes_a_stop() -> None:
    async def body(emulator: JausEmulator) -> None:
        robot = _robot(emulator)
        await robot.connect()
        try:
            assert robot.hardware is not None
            robot.hardware.drive.command(DriveCommand.of_twist(0.5, 0.0, 0.6))
            await wait_until_async(lambda: emulator.v > 0.45, GONE_WRONG, "the robot moving")
            given = time.monotonic()
            await wait_until_async(lambda: emulator.v == 0.0, 1.5, "the stop")
            taken = time.monotonic() - given
            # the client's 0.5 s command timeout, not the robot's own watchdog: the client kept
            # talking (keep-alive, queries) and the last drive command it sent was a stop (the
            # bound leaves a busy machine 0.5 s)
            assert taken < 0.5 + 0.5
            last = emulator.codes_from(ME_T, VELOCITY_COMMAND)[-1]
            assert struct.unpack_from("<I", last.body, 2)[0] == scale(0.0, -327.68, 327.67, 32)
        finally:
            await robot.close()

    _run(body, JausEmulator())


def test_control_taken_by_another_client_is_a_fault_and_only_stops_are_sent() -> None:
    async def body(emulator: JausEmulator) -> None:
        robot = _robot(emulator)
        await robot.connect()
        try:
            assert robot.hardware is not None
            robot.hardware.drive.command(DriveCommand.of_twist(0.5, 0.0, 0.6))
            await wait_until_async(lambda: emulator.v > 0.45, GONE_WRONG, "the robot moving")
            emulator.revoke((7, 1, 1), authority=200)  # an operator unit takes it over
            await wait_until_async(
                lambda: robot.client.phase == Phase.FAULT, GONE_WRONG, "the fault"
            )
            assert not robot.connected
            assert "RejectControl CONTROL_RELEASED" in robot.status
            assert "held stopped" in robot.status
            sent = len(emulator.received)
            for _ in range(10):  # the program keeps commanding: only stops go out
                robot.hardware.drive.command(DriveCommand.of_twist(0.5, 0.0, 0.6))
                await asyncio.sleep(0.03)
            mine = [r for r in emulator.received[sent:] if r.source == ME_T]
            drives = [r for r in mine if r.code == VELOCITY_COMMAND]
            assert drives
            assert all(abs(velocity_x(r.body)) < 1e-3 for r in drives)
            # asked again, refused: the higher authority keeps the robot
            await wait_until_async(
                lambda: (
                    emulator.codes_from(ME_T, REQUEST)[-1].stamp > emulator.received[sent].stamp
                ),
                2.0,
                "control asked for again",
            )
            assert emulator.controller == (7, 1, 1)
            assert emulator.v == 0.0
            assert robot.client.phase == Phase.FAULT
        finally:
            await robot.close()
        # no ReleaseControl of what it no longer holds
        assert not emulator.codes_from(ME_T, RELEASE)

    _run(body, JausEmulator())


@pytest.mark.parametrize(
    ("code", "body"),
    [
        (REJECT, bytes([0])),  # RejectControl CONTROL_RELEASED
        (REPORT_CONTROL, struct.pack("<HBBB", 7, 1, 1, 200)),  # someone else controls it
        (REPORT_STATUS, struct.pack("<BI", 5, 0)),  # EMERGENCY
    ],
    ids=["RejectControl", "ReportControl", "EMERGENCY"],
)
def test_one_forged_datagram_leaves_the_robot_stopped_until_the_operator_recovers_it(
    code: int, body: bytes
) -> None:
    # the robot has no command timeout of its own; the forgery comes from the robot's own
    # address and JAUS id (an attacker who spoofs both)
    async def body_(emulator: JausEmulator) -> None:
        robot = _robot(emulator)
        await robot.connect()
        try:
            assert robot.hardware is not None
            drive = robot.hardware.drive

            def pushing(until: Callable[[], bool]) -> Callable[[], bool]:
                def step() -> bool:
                    drive.command(
                        DriveCommand.of_twist(0.5, 0.0, 0.6)
                    )  # the program keeps commanding
                    return until()

                return step

            await wait_until_async(pushing(lambda: emulator.v > 0.45), 1.0, "the robot moving")
            emulator.send_raw(judp(ME_T, emulator.me, code, body), ME_T)
            await wait_until_async(
                pushing(lambda: emulator.v == 0.0),
                0.5,  # the robot program's watchdog: it stops well inside it
                "the robot stopped by the client's zero commands",
                every=0.01,
            )
            assert emulator.controller == ME_T  # the robot never changed hands
            assert "held stopped" in robot.status
            for _ in range(20):  # held: the operator's commands are not sent
                drive.command(DriveCommand.of_twist(0.5, 0.0, 0.6))
                await asyncio.sleep(0.02)
            assert emulator.v == 0.0
            assert robot.client.phase == Phase.FAULT
            robot.recover()  # the operator's deliberate act
            await wait_until_async(
                pushing(lambda: emulator.v > 0.45), 2.0, "driving again after the recovery"
            )
            assert robot.connected
        finally:
            await robot.close()

    _run(body_, JausEmulator(watchdog=math.inf))


def test_a_robot_naming_another_controller_is_a_fault() -> None:
    async def body(emulator: JausEmulator) -> None:
        robot = _robot(emulator, keep_alive=0.2)
        await robot.connect()
        try:
            # control moves on without a word to this client (a robot that sends no
            # RejectControl and leaves renewals unanswered): ReportControl names the other
            emulator.answer_renewals = False
            emulator.controller, emulator.controller_authority = (7, 1, 1), 9
            await wait_until_async(lambda: robot.client.phase == Phase.FAULT, 1.0, "the fault")
            assert "controlled by 7.1.1 (authority 9)" in robot.client.problem
        finally:
            await robot.close()

    _run(body, JausEmulator())


def test_a_silent_robot_is_named_with_what_was_asked() -> None:
    async def body(emulator: JausEmulator) -> None:
        robot = _robot(emulator, discovery_timeout=0.5)
        with pytest.raises(JausRobotError) as err:
            await robot.connect()
        message = str(err.value)
        assert f"127.0.0.1:{emulator.port}" in message
        assert "no answer to QueryIdentification within 0.5 s" in message
        assert emulator.received  # it was asked, more than once
        assert all(r.code == 0x2B00 for r in emulator.received)

    _run(body, JausEmulator(silent=True))


@pytest.mark.parametrize(("code", "name"), [(1, "NOT_AVAILABLE"), (2, "INSUFFICIENT_AUTHORITY")])
def test_refused_control_names_the_authority_and_the_answer(code: int, name: str) -> None:
    async def body(emulator: JausEmulator) -> None:
        robot = _robot(emulator)
        with pytest.raises(JausRobotError) as err:
            await robot.connect()
        message = str(err.value)
        assert f"127.0.0.1:{emulator.port}" in message
        assert f"refused control to authority 5: ConfirmControl {name}" in message
        assert not emulator.codes_from(ME_T, WRENCH)
        assert not emulator.codes_from(ME_T, 0x0415)

    _run(body, JausEmulator(refuse_with=code))


def test_a_robot_without_a_drive_service_is_refused() -> None:
    async def body(emulator: JausEmulator) -> None:
        with pytest.raises(JausRobotError, match="neither a Velocity State Driver nor"):
            await _robot(emulator).connect()

    _run(body, JausEmulator(services=(ACCESS, POSE_SENSOR)))


def test_hostile_datagrams_are_dropped_and_counted_and_out_of_range_reports_refused() -> None:
    async def body(emulator: JausEmulator) -> None:
        robot = _robot(emulator)
        await robot.connect()
        try:
            client = robot.client
            await wait_until_async(lambda: client.odometry is not None, 2.0, "a pose")
            before = client.dropped.copy()
            good = judp(ME_T, emulator.me, CONFIRM, bytes([0]))
            emulator.send_raw(good[:9], ME_T)  # truncated header
            emulator.send_raw(b"\x03" + good[1:], ME_T)  # another transport version
            emulator.send_raw(good[:-3], ME_T)  # the size runs past the datagram
            emulator.send_raw(judp(ME_T, emulator.me, CONFIRM, bytes([9])), ME_T)  # no such code
            # a local pose at the saturated end of its scale, and one 50 m away
            for x in (1e5, 50.0):
                k = scale(x, -1e5, 1e5, 32), scale(0.0, -1e5, 1e5, 32)
                body_ = struct.pack("<HIIH", 0b1000011, *k, 32767)
                emulator.send_raw(judp(ME_T, emulator.me, 0x4403, body_), ME_T)
            # a good pose from a component of the robot that has no pose sensor
            body_ = struct.pack("<HIIH", 0b1000011, *k, 32767)
            emulator.send_raw(judp(ME_T, (42, 1, 9), 0x4403, body_), ME_T)
            await wait_until_async(
                lambda: sum(client.dropped.values()) - sum(before.values()) >= 7,
                2.0,
                "every datagram counted",
            )
            dropped = client.dropped - before
            assert dropped["malformed datagram"] == 3
            assert dropped["malformed or unsupported message"] == 1
            assert dropped["ReportLocalPose out of range (saturated position)"] == 1
            assert dropped["ReportLocalPose out of range (a jump faster than the robot)"] == 1
            assert dropped["ReportLocalPose from a component without that sensor"] == 1
            odometry = client.odometry
            assert odometry is not None
            assert abs(odometry.x) < 1.0
            assert client.phase == Phase.READY
            assert robot.connected
        finally:
            await robot.close()

    _run(body, JausEmulator())


def test_out_of_range_velocity_reports_are_refused() -> None:
    async def body(emulator: JausEmulator) -> None:
        robot = _robot(emulator)
        await robot.connect()
        try:
            client = robot.client
            await wait_until_async(lambda: client.velocity is not None, 2.0, "a velocity")
            emulator.reported_v = 300.0  # the robot's sensor reports nonsense
            await wait_until_async(
                lambda: (
                    client.dropped["ReportVelocityState out of range (faster than the robot)"] > 0
                ),
                2.0,
                "the refusal",
            )
            assert client.velocity is not None
            assert client.velocity[0] < 1.0
        finally:
            await robot.close()

    _run(
        body,
        JausEmulator(services=(ACCESS, VELOCITY_DRIVER, POSE_SENSOR, VELOCITY_SENSOR)),
    )


def test_a_silent_link_flags_the_hardware_and_comes_back() -> None:
    async def body(emulator: JausEmulator) -> None:
        robot = _robot(emulator)
        await robot.connect()
        try:
            assert robot.connected
            emulator.silent = True  # the radio drops out
            await wait_until_async(lambda: not robot.connected, 3.0, "disconnected")
            emulator.silent = False
            await wait_until_async(lambda: robot.connected, 1.0, "connected again")
            assert robot.client.phase == Phase.READY
        finally:
            await robot.close()

    _run(body, JausEmulator(control_timeout=5))


def test_an_arm_without_position_sensing_moves_in_timed_chunks() -> None:
    """Seed 002's M2P2 arm: a Primitive Manipulator and no joint position sensor."""
    from freelook.config import load_robot

    config = load_robot("m2p2")

    async def body(emulator: JausEmulator) -> None:
        robot = JausRobot.from_config(f"judp://127.0.0.1:{emulator.port}", config)
        await robot.connect()
        try:
            hw = robot.hardware
            assert hw is not None
            assert hw.arm is not None
            assert any("moves in timed chunks of 0.2 s" in note for note in hw.notes)
            assert hw.arm.joint_names == ("shoulder", "elbow", "gripper_roll")
            assert config.jaus is not None
            speed = math.radians(config.jaus.arm_joint_speed_deg)
            step = speed * config.jaus.arm_chunk  # one chunk's travel
            start = hw.arm.state().positions[0]
            seen: set[float] = set()
            began = time.monotonic()
            while time.monotonic() - began < 1.0:  # the shoulder jogged at 0.1 rad/s for 1 s
                hw.arm.command_velocities([0.1, 0.0, 0.0])
                hw.arm.command_gripper(0.0)
                seen.update(round(e) for e in emulator.efforts[:1])
                await asyncio.sleep(0.02)
            # only whole chunks at full effort reach the robot (their timing, to a call, is
            # test_jaus_arm_chunks.py's, on an injected clock)
            assert seen <= {0, 100}
            assert 100 in seen
            # the reckoned position follows the true one: no chunk lost or doubled on the wire
            assert hw.arm.state().positions[0] == pytest.approx(emulator.joints[0], abs=step / 2)
            # a stop ends a chunk at once: it reaches the robot before an unrenewed command
            # would have become a stop
            hw.arm.command_velocities([0.0, 0.0, 0.0])
            timeout = ClientOptions().command_timeout
            await wait_until_async(
                lambda: abs(emulator.efforts[0]) < 0.01, timeout, "the arm stopped"
            )
            stopped = asyncio.get_running_loop().time()
            await wait_until_async(
                lambda: emulator.integrated_to >= stopped, GONE_WRONG, "the emulator's steps"
            )
            moved = hw.arm.state().positions[0] - start
            assert moved > step / 2  # 0.1 rad owed: about two chunks' travel
            assert hw.arm.state().positions[0] == pytest.approx(emulator.joints[0], abs=step / 2)
        finally:
            await robot.close()

    _run(
        body,
        JausEmulator(
            services=(ACCESS, MANAGEMENT, VELOCITY_DRIVER, POSE_SENSOR, MANIPULATOR),
            joints=[0.6, -1.4, 0.0, 0.0],
        ),
    )


def test_an_arm_with_a_joint_position_sensor_is_jogged_and_read_back() -> None:
    from freelook.config import load_robot

    base = load_robot("m2p2")
    config = base.model_copy(
        update={"jaus": base.jaus.model_copy(update={"arm_position_sensing": True})}
    )

    async def body(emulator: JausEmulator) -> None:
        robot = JausRobot.from_config(f"judp://127.0.0.1:{emulator.port}", config)
        await robot.connect()
        try:
            hw = robot.hardware
            assert hw is not None
            assert hw.arm is not None
            assert "arm joint positions from the Manipulator Joint Position Sensor" in hw.notes
            start = time.monotonic()
            while time.monotonic() - start < 0.6:  # the elbow at −0.1 rad/s
                hw.arm.command_velocities([0.0, -0.1, 0.0])
                hw.arm.command_gripper(0.0)
                await asyncio.sleep(0.02)
            # a steady share of the presumed 15°/s, not chunks at full effort
            assert emulator.efforts[1] == pytest.approx(-100 * 0.1 / math.radians(15), abs=0.1)
            assert emulator.joints[1] < -1.4 - 0.04
            # the positions are the sensor's (the emulator's truth), a query period behind
            await wait_until_async(
                lambda: abs(hw.arm.state().positions[1] - emulator.joints[1]) < 0.01,
                0.5,
                "the sensor read back",
            )
        finally:
            await robot.close()

    _run(
        body,
        JausEmulator(
            services=(ACCESS, VELOCITY_DRIVER, POSE_SENSOR, MANIPULATOR, JOINT_SENSOR),
            joints=[0.6, -1.4, 0.0, 0.0],
        ),
    )

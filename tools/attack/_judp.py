"""The campaign's JUDP-backend probe: ``freelook robot --hardware judp://…`` driving a real
``freelook jaus`` gateway in front of a simulated ``freelook robot``, every part its own
process, with a relay on the JAUS side so that forged datagrams come from the robot's own
address and carry the robot's own JAUS id (what an attacker on the robot's network forges).

While the driver turns the robot on the spot, one forged datagram of each kind (RejectControl,
a ReportControl naming another controller, ReportStatus EMERGENCY) is sent to the client; an
observer of the simulated robot measures how long and how far it still turns (an unauthorised
effect beyond the watchdog's timeout + one control period, or any turning again before the
operator releases the e-stop), and the control is the operator's release: the robot turns
again. Then forged pose reports (the robot 50 m away) at 200 a second: an effect is the
odometry the driver sees jumping faster than the robot can move.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import random
import time
from dataclasses import dataclass, field

from tools.attack._link import DRIVER, START, _keys_file, _until
from tools.attack._tally import ProcessUnderAttack, Tally

__all__ = ["Turning", "attack_judp", "judge_jump", "judge_stop"]

CLIENT = (150, 1, 1)  # the JUDP client's own JAUS id (JausOptions.own_id)
TURN = 0.5  # rad/s the driver commands, on the spot
STILL = 0.05  # rad/s: slower than this is stopped


@dataclass
class Turning:
    """The simulated robot's turn rate and heading as its observer saw them, from a moment."""

    samples: list[tuple[float, float, float]] = field(default_factory=list)  # t, ω, θ

    def moving_until(self) -> float:
        """Seconds after the moment the robot last turned (0 when it never did)."""
        return max((t for t, omega, _ in self.samples if abs(omega) > STILL), default=0.0)

    def turned(self, after: float = 0.0) -> float:
        """Radians it turned after ``after`` s."""
        heading = [theta for t, _, theta in self.samples if t >= after]
        total = 0.0
        for a, b in itertools.pairwise(heading):
            total += abs(math.remainder(b - a, math.tau))
        return total


def judge_stop(kind: str, turning: Turning, bound: float, hold_from: float, tally: Tally) -> None:
    """One forgery's figures into ``tally``: turning beyond ``bound`` s, or again after
    ``hold_from`` s (before the operator's release), is an effect."""
    last = turning.moving_until()
    after = turning.turned(hold_from)
    if last > bound:
        tally.effect(f"{kind}: the robot turned {last:.2f} s after it (bound {bound:.2f} s)")
    elif after > 0.02:
        tally.effect(f"{kind}: the robot turned {math.degrees(after):.1f}° before the release")
    tally.notes.append(
        f"{kind}: turning stopped {last:.2f} s after it (bound {bound:.2f} s), "
        f"{math.degrees(turning.turned()):.1f}° turned since"
    )


def judge_jump(poses: list[tuple[float, float, float]], top_speed: float, tally: Tally) -> None:
    """Forged pose reports into ``tally``: (t, x, y) of the odometry the driver saw; an
    effect is a displacement faster than ``top_speed`` (+ 5 cm) over the time it took."""
    worst = 0.0
    for (t0, x0, y0), (t1, x1, y1) in itertools.pairwise(poses):
        jump = math.hypot(x1 - x0, y1 - y0) - top_speed * (t1 - t0)
        worst = max(worst, jump)
    if worst > 0.05:
        tally.effect(f"forged pose reports: the odometry jumped {worst:.2f} m beyond the speed")
    far = max((math.hypot(x - poses[0][1], y - poses[0][2]) for _, x, y in poses), default=0.0)
    tally.notes.append(
        f"forged pose reports: the odometry moved {far:.2f} m in {len(poses)} samples, "
        f"at most {worst:+.2f} m beyond what the top speed allows"
    )


class _JausRobot(asyncio.DatagramProtocol):
    """A minimal JAUS robot on loopback (Access Control, Management, Primitive Driver, Local
    Pose Sensor), without a command timeout of its own: it turns as long as it is told to, so
    what is measured is what the client sends. It is also the forger: a forged datagram goes
    out of its own socket with its own id, as one spoofed on its network would arrive."""

    def __init__(self, me: tuple[int, int, int] = (42, 1, 1)) -> None:
        self.me = me
        self.controller: object = None
        self.ready = False
        self.yaw_rate = 0.0
        self.yaw = 0.0
        self.clients: dict[object, tuple[str, int]] = {}
        self.transport: asyncio.DatagramTransport | None = None
        self.sequence = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def send(self, to: object, message: object) -> None:
        from freelook.judp import JausId, JudpMessage, encode_message, pack_judp

        assert isinstance(to, JausId)
        if self.transport is None or to not in self.clients:
            return
        self.sequence = (self.sequence + 1) & 0xFFFF
        payload = encode_message(message)  # type: ignore[arg-type]
        data = pack_judp([JudpMessage(to, JausId(*self.me), payload, self.sequence)])
        self.transport.sendto(data, self.clients[to])

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        from freelook import judp as j

        try:
            messages = j.parse_judp(data)
        except j.JudpError:
            return
        for m in messages:
            if not m.destination.matches(j.JausId(*self.me)) or len(m.payload) < 2:
                continue
            self.clients[m.source] = addr
            try:
                message = j.decode_message(m.code, m.body)
            except j.JudpError:
                continue
            self._handle(m.source, message)

    def _handle(self, source: object, message: object) -> None:
        from freelook import judp as j

        services = tuple(
            j.ServiceRecord(f"urn:jaus:jss:{uri}", 1, 0)
            for uri in (
                "core:AccessControl",
                "core:Management",
                "mobility:PrimitiveDriver",
                "mobility:LocalPoseSensor",
            )
        )
        if isinstance(message, j.QueryIdentification):
            self.send(source, j.ReportIdentification(message.query_type, 10001, "target"))
        elif isinstance(message, j.QueryServices):
            self.send(source, j.ReportServices((j.ComponentServices(1, 1, 0, services),)))
        elif isinstance(message, j.RequestControl):
            self.controller = source
            self.send(source, j.ConfirmControl(j.ConfirmResponse.CONTROL_ACCEPTED))
        elif isinstance(message, j.ReleaseControl) and source == self.controller:
            self.controller, self.ready, self.yaw_rate = None, False, 0.0
        elif isinstance(message, j.QueryControl):
            who = self.controller if isinstance(self.controller, j.JausId) else j.JausId(0, 0, 0)
            self.send(source, j.ReportControl(who, 5 if self.controller else 0))
        elif isinstance(message, j.QueryTimeout):
            self.send(source, j.ReportTimeout(2))
        elif isinstance(message, j.QueryStatus):
            status = j.ManagementStatus.READY if self.ready else j.ManagementStatus.STANDBY
            self.send(source, j.ReportStatus(status))
        elif isinstance(message, j.Resume) and source == self.controller:
            self.ready = True
        elif isinstance(message, j.SetWrenchEffort):
            if source == self.controller and self.ready:
                effort = message.propulsive_rotational[2] or 0.0
                self.yaw_rate = effort / 100 * math.pi / 2
        elif isinstance(message, j.SetVelocityCommand):
            if source == self.controller and self.ready:
                self.yaw_rate = message.rates[2] or 0.0
        elif isinstance(message, j.QueryLocalPose):
            self.send(source, j.ReportLocalPose(j.LocalPose(x=0.0, y=0.0, yaw=self.yaw)))

    async def turning(self, seconds: float) -> Turning:
        """Its turn rate and heading every 10 ms for ``seconds``."""
        seen = Turning()
        started = last = time.monotonic()
        while (now := time.monotonic()) - started < seconds:
            self.yaw = math.remainder(self.yaw + self.yaw_rate * (now - last), math.tau)
            last = now
            seen.samples.append((now - started, self.yaw_rate, self.yaw))
            await asyncio.sleep(0.01)
        return seen

    async def integrating(self) -> None:
        while True:
            await self.turning(1.0)


async def _judp_campaign(seed: int, pose_reports: int, tally: Tally) -> None:
    from freelook.config import load_robot
    from freelook.judp import (
        JausId,
        LocalPose,
        ManagementStatus,
        RejectControl,
        RejectResponse,
        ReportControl,
        ReportLocalPose,
        ReportStatus,
    )
    from freelook.link import EStop, VelocityCommand
    from freelook.operator import OperatorStation

    config = load_robot("pioneer3dx")
    bound = config.safety.watchdog_timeout + config.link.control_period
    draw = random.Random(seed)
    loop = asyncio.get_running_loop()
    target = _JausRobot()
    transport, _ = await loop.create_datagram_endpoint(lambda: target, local_addr=("127.0.0.1", 0))
    port = transport.get_extra_info("sockname")[1]
    client: ProcessUnderAttack | None = None
    tasks: list[asyncio.Task[None]] = []
    with _keys_file() as keys:
        try:
            client = ProcessUnderAttack(
                *("robot", "--hardware", f"judp://127.0.0.1:{port}"),
                *("--listen", "udp://127.0.0.1:0", "--keys", str(keys.path)),
            )
            line = await asyncio.to_thread(client.wait_line, "profile on udp://")
            upper = ("127.0.0.1", int(line.rsplit(":", 1)[1]))
            driver = OperatorStation(config, None, upper, key=keys.driver, station=DRIVER)
            driver.drive_command = VelocityCommand(0.0, 0.0)
            tasks.append(asyncio.create_task(driver.run()))
            await _until("the driver in control", lambda: driver.core.in_control, START)
            own = JausId(*CLIENT)
            forgeries = (
                ("RejectControl", RejectControl(RejectResponse.CONTROL_RELEASED)),
                ("ReportControl naming another", ReportControl(JausId(7, 1, 1), 200)),
                ("ReportStatus EMERGENCY", ReportStatus(ManagementStatus.EMERGENCY)),
            )
            for kind, message in forgeries:
                driver.drive_command = VelocityCommand(0.0, TURN)
                await _until(
                    f"the robot turning before {kind}", lambda: abs(target.yaw_rate) > TURN / 4, 30
                )
                tally.tried(f"forged {kind}")
                target.send(own, message)
                turning = await target.turning(bound + 2.5)
                judge_stop(f"forged {kind}", turning, bound, bound + 0.5, tally)
                # the operator's deliberate act: engage the e-stop, release it
                driver.send([EStop(True)])
                await asyncio.sleep(0.2)
                driver.send([EStop(False)])
                try:
                    await _until(
                        f"the robot turning after the release ({kind})",
                        lambda: abs(target.yaw_rate) > TURN / 4,
                        10,
                    )
                except RuntimeError as err:
                    tally.effect(f"{kind}: {err}")
                    break
                tally.notes.append(f"forged {kind}: the robot turned again after the release")
            driver.drive_command = VelocityCommand(0.0, 0.0)
            tasks.append(asyncio.create_task(target.integrating()))
            await _until("the robot still", lambda: abs(target.yaw_rate) < STILL, 10)
            # forged pose reports: the robot 50 m away, 200 a second
            poses: list[tuple[float, float, float]] = []
            started = time.monotonic()
            stamp = -1.0
            for i in range(pose_reports):
                far = LocalPose(x=50.0 + draw.uniform(-5, 5), y=draw.uniform(-50, 50), yaw=0.0)
                tally.tried("forged ReportLocalPose")
                target.send(own, ReportLocalPose(far))
                telemetry = driver.telemetry
                if telemetry is not None and telemetry.stamp != stamp:
                    stamp = telemetry.stamp
                    x, y, _ = telemetry.odom
                    poses.append((time.monotonic() - started, x, y))
                await asyncio.sleep(max(0.0, started + (i + 1) / 200 - time.monotonic()))
            judge_jump(poses, config.limits.max_speed, tally)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            transport.close()
            if client is not None:
                for problem in client.problems():
                    tally.crash(f"JUDP robot: {problem}")
                client.stop()


def attack_judp(seed: int, pose_reports: int = 400) -> Tally:
    """One forged control or status datagram of each kind at a JUDP robot's client while it
    drives, then ``pose_reports`` forged pose reports, all from the robot's own address."""
    tally = Tally("JUDP backend (forged robot)")
    asyncio.run(_judp_campaign(seed, pose_reports, tally))
    return tally

"""A JAUS robot behind a HAL: the client driven over one UDP socket on an I/O thread of its own.

The thread runs its own event loop: one task sleeps until the client's next deadline or until
a command is given, then sends what the client's poll returns; datagrams are fed to the client
as they come. Its own thread keeps control renewed and the sensors queried whatever the robot
program's loop is doing (building the program after discovery, a long cycle), so a robot's
control timeout is never missed for want of a turn. Only datagrams from the robot's address
are taken (others are dropped and counted). A command given through the HAL wakes the task,
so it is on the wire at once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import ipaddress
import logging
import math
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlparse

from freelook.arm import load_arm
from freelook.config import ArmConfig, JausConfig, RobotConfig
from freelook.errors import ConfigError
from freelook.hal import DriveKind, RobotHardware
from freelook.hardware.judp._arm import JausArm
from freelook.hardware.judp._client import JausClient
from freelook.hardware.judp._errors import JausRobotError
from freelook.hardware.judp._hal import jaus_hardware
from freelook.hardware.judp._options import MANIPULATOR_JOINT_POSITION_SENSOR, ClientOptions, Phase
from freelook.judp import JausId
from freelook.runtime import run_event_loop

__all__ = ["DEFAULT_PORT", "JausRobot", "JudpAddress", "parse_judp_url"]

log = logging.getLogger(__name__)

DEFAULT_PORT = 3794  # JUDP's registered port
_MAX_SLEEP = 0.05  # the task wakes at least this often, so nothing waits on a lost wake-up


@dataclass(frozen=True, slots=True)
class JudpAddress:
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def parse_judp_url(url: str) -> JudpAddress:
    """``judp://HOST[:PORT]`` (port 3794 by default); anything else is a one-line
    :class:`ConfigError` naming the URL."""
    shown = url if url.isprintable() else repr(url)
    expected = f"--hardware {shown}: expected judp://HOST:PORT"
    if not url.isprintable() or len(url) > 300:
        raise ConfigError(expected)
    try:
        parsed = urlparse(url)
        host = parsed.hostname
        port = parsed.port
    except ValueError as err:  # an open bracket, a bad IPv6 literal, a port out of range
        raise ConfigError(f"{expected} ({err})") from None
    if parsed.scheme != "judp" or not host or parsed.path not in ("", "/") or parsed.query:
        raise ConfigError(expected)
    return JudpAddress(host, port or DEFAULT_PORT)


class _Protocol(asyncio.DatagramProtocol):
    def __init__(self, robot: JausRobot) -> None:
        self._robot = robot

    def datagram_received(self, data: bytes, addr: tuple[str | int, ...]) -> None:
        self._robot._received(data, addr)


class JausRobot:
    """A robot that speaks JAUS over JUDP, as :class:`~freelook.hal` devices in
    :attr:`hardware` once :meth:`connect` has discovered it and taken control."""

    def __init__(
        self,
        url: str,
        options: ClientOptions,
        *,
        kind: DriveKind = "differential",
        arm: tuple[ArmConfig, JausConfig] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.address = parse_judp_url(url)
        self.arm_config = arm
        self.client = JausClient(options)
        self.kind = kind
        self.hardware: RobotHardware | None = None
        self.foreign_datagrams = 0  # from an address that is not the robot's
        self._clock = clock
        self._status = f"not connected to the JAUS robot at {self.address}"
        self._transport: asyncio.DatagramTransport | None = None
        self._peer: tuple[str, int] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # the I/O thread's
        self._wake: asyncio.Event | None = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._settled: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._ended: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._reported = Phase.DISCOVERING

    @classmethod
    def from_config(
        cls, url: str, config: RobotConfig, *, clock: Callable[[], float] = time.monotonic
    ) -> JausRobot:
        """A robot with the limits, id and authority of a robot description."""
        j = config.jaus
        options = ClientOptions(
            own_id=JausId(j.subsystem, j.node, j.component),
            authority=j.authority,
            max_speed=config.drive.max_wheel_speed,
            max_turn_rate=config.drive.max_turn_rate,
            track_width=config.drive.track_width,
        )
        return cls(
            url,
            options,
            kind=config.drive.kind,
            arm=None if config.arm is None else (config.arm, config.jaus),
            clock=clock,
        )

    # -- HardwareConnection -------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self.client.connected(self._clock())

    @property
    def status(self) -> str:
        return self._status

    def recover(self) -> None:
        """The operator's deliberate act (the e-stop released): after a fault, control is
        asked for anew and driving resumes once the robot grants it, from a stop."""
        loop = self._loop
        if loop is None:
            return

        def on_io_thread() -> None:
            if self.client.recover(self._clock()):
                log.warning("asking the JAUS robot at %s for control again", self.address)
                self._notify()

        with contextlib.suppress(RuntimeError):  # the I/O loop has closed
            loop.call_soon_threadsafe(on_io_thread)

    # -- lifecycle ----------------------------------------------------------------------------

    async def connect(self) -> None:
        """Discover the robot, take control and wait until it is Ready; builds
        :attr:`hardware`. Raises :class:`JausRobotError` naming the address, what was asked
        and what was answered."""
        if self._thread is not None:
            raise RuntimeError("a JausRobot connects once")
        self._thread = threading.Thread(
            target=self._thread_main, name=f"jaus {self.address}", daemon=True
        )
        self._thread.start()
        try:
            await asyncio.wrap_future(self._settled)
        except JausRobotError:
            await self.close()
            raise
        if self.client.phase != Phase.READY:
            await self.close()
            raise JausRobotError(f"the JAUS robot at {self.address}: {self.client.problem}")
        self._status = self._driving()
        arm, arm_note = await asyncio.to_thread(self._arm)  # the URDF loads off the loop
        self.hardware = jaus_hardware(
            self.client,
            self,
            kind=self.kind,
            notify=self._notify,
            clock=self._clock,
            arm=arm,
            arm_note=arm_note,
        )

    def _arm(self) -> tuple[JausArm | None, str | None]:
        """The arm over the Primitive Manipulator, and what the program should know of it."""
        if not self.client.has_arm:
            return None, None
        if self.arm_config is None:
            return None, "a Primitive Manipulator but no [arm] in the description: not driven"
        arm, jaus = self.arm_config
        sensing = jaus.arm_position_sensing and (
            MANIPULATOR_JOINT_POSITION_SENSOR in self.client.services
        )
        speed = math.radians(jaus.arm_joint_speed_deg)
        model = load_arm(arm.urdf, arm.srdf)
        device = JausArm(
            self.client,
            model,
            speed=speed,
            chunk=jaus.arm_chunk,
            sensing=sensing,
            notify=self._notify,
            clock=self._clock,
        )
        if sensing:
            return device, "arm joint positions from the Manipulator Joint Position Sensor"
        return device, (
            f"the arm has no position sensing: it moves in timed chunks of {jaus.arm_chunk:g} s "
            f"at a presumed {jaus.arm_joint_speed_deg:g}°/s, its joint positions reckoned from "
            "the ready pose it must start in"
        )

    async def run(self) -> None:
        """Wait while the I/O thread serves the robot (until :meth:`close`)."""
        if self._thread is not None:
            await asyncio.wrap_future(self._ended)

    async def close(self) -> None:
        """A stop and ReleaseControl (unless control was lost), then the thread ends."""
        loop, stop, thread = self._loop, self._stop, self._thread
        if loop is not None and stop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop just closed
                loop.call_soon_threadsafe(stop.set)
        if thread is not None:
            await asyncio.wrap_future(self._ended)
        if self.client.phase == Phase.CLOSED:
            self._status = f"released the JAUS robot at {self.address}"

    # -- the I/O thread -----------------------------------------------------------------------

    def _thread_main(self) -> None:
        try:
            run_event_loop(self._io_main())
        except JausRobotError as err:
            self._settle(err)
        except BaseException as err:  # never lost silently: connect() or the log says it
            log.error("JAUS I/O for %s failed", self.address, exc_info=err)
            self._settle(
                JausRobotError(f"the JAUS robot at {self.address}: the client stopped ({err!r})")
            )
        finally:
            self._settle(None)
            if not self._ended.done():
                self._ended.set_result(None)

    def _settle(self, error: JausRobotError | None) -> None:
        if self._settled.done():
            return
        if error is None:
            self._settled.set_result(None)
        else:
            self._settled.set_exception(error)

    async def _io_main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._wake, self._stop = asyncio.Event(), asyncio.Event()
        await self._open()
        serve = asyncio.create_task(self._serve())
        stopping = asyncio.create_task(self._stop.wait())
        try:
            await asyncio.wait({serve, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if serve.done():
                serve.result()  # raises what ended it
        finally:
            for datagram in self.client.close(self._clock()):
                self._send(datagram)
            for task in (serve, stopping):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if self._transport is not None:
                self._transport.close()

    async def _open(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(
                self.address.host, self.address.port, type=socket.SOCK_DGRAM
            )
        except OSError as err:
            raise JausRobotError(
                f"cannot resolve the JAUS robot's host {self.address}: {err}"
            ) from None
        family, _, _, _, sockaddr = infos[0]
        self._peer = (str(sockaddr[0]), int(sockaddr[1]))
        try:
            loopback = ipaddress.ip_address(self._peer[0]).is_loopback
        except ValueError:
            loopback = False
        anywhere = "::" if family == socket.AF_INET6 else "0.0.0.0"
        local = (self._peer[0] if loopback else anywhere, 0)
        # connected (remote_addr): the kernel takes datagrams from the robot's address alone
        # (the check in _received stays, for a peer that changes under a name)
        try:
            transport, _ = await loop.create_datagram_endpoint(
                lambda: _Protocol(self), local_addr=local, remote_addr=self._peer, family=family
            )
        except OSError as err:
            raise JausRobotError(f"cannot reach the JAUS robot at {self.address}: {err}") from None
        self._transport = transport

    def _notify(self) -> None:
        loop, wake = self._loop, self._wake
        if loop is None or wake is None:
            return
        with contextlib.suppress(RuntimeError):  # the I/O loop has closed
            loop.call_soon_threadsafe(wake.set)

    def _send(self, datagram: bytes) -> None:
        if self._transport is not None:
            self._transport.sendto(datagram)  # to the connected robot

    def _received(self, data: bytes, addr: tuple[str | int, ...]) -> None:
        if self._peer is None or (str(addr[0]), int(addr[1])) != self._peer:
            self.foreign_datagrams += 1
            return
        for ack in self.client.receive(data, self._clock()):
            self._send(ack)
        if self._wake is not None:
            self._wake.set()

    async def _serve(self) -> None:
        client = self.client
        assert self._wake is not None
        while True:
            self._wake.clear()
            for datagram in client.poll(self._clock()):
                self._send(datagram)
            self._on_phase()
            deadline = client.next_deadline()
            wait = _MAX_SLEEP if deadline is None else deadline - self._clock()
            if wait > 0.0:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(min(wait, _MAX_SLEEP)):
                        await self._wake.wait()

    def _on_phase(self) -> None:
        phase = self.client.phase
        if phase == self._reported:
            return
        self._reported = phase
        if phase != Phase.REQUESTING and phase != Phase.RESUMING:
            self._settle(None)
        if phase == Phase.FAULT:
            self._status = (
                f"lost control of the JAUS robot at {self.address}: {self.client.problem}; "
                "held stopped (zero commands, control asked again) until the operator "
                "releases the e-stop"
            )
            log.error("%s", self._status)
        elif phase == Phase.REQUESTING:
            self._status = f"asking the JAUS robot at {self.address} for control again"
        elif phase == Phase.READY and self.hardware is not None:  # recovered
            self._status = self._driving()

    def _driving(self) -> str:
        return (
            f"the JAUS robot {self.client.robot_name!r} ({self.client.robot}) at "
            f"{self.address}, driven by {self.client.drive_service}"
        )

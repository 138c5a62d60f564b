"""Benchmarks of the robot program on a ROS 2 robot (``freelook bench ros2.``), beside the
backends since one compares the ROS 2 path with the simulator's.

A light ROS 2 base of the benchmark's own (odometry at 24 Hz, as many bases publish it, slower
than the control cycle; joint states and an IMU at 50 Hz, a scan at 20 Hz, a 320×240 JPEG
camera at 10 Hz; it records each ``cmd_vel`` as it arrives)
runs in a DDS domain of its own on loopback. The robot program runs on the real-time runtime,
as ``freelook robot --hardware ros2`` runs it.

- ``ros2.scan_to_cmd_vel``: a scan that changes the safety zone (an obstacle appears at the
  robot's side) until the first ``cmd_vel`` that obeys it. Target p95 ≤ one control cycle
  + 5 ms.
- ``ros2.command_to_cmd_vel``: an operator's velocity command over UDP (thesis profile) until
  the base hears it on ``cmd_vel``, against the same command over UDP to the simulator's HAL
  in the same run. Target: p95 ≤ the UDP path's p95 + 5 ms.
- ``ros2.cpu``: the CPU share of ``freelook robot --hardware ros2`` (its own process, 50 Hz
  control cycle, a thesis operator driving it and receiving its position packets).
"""

from __future__ import annotations

import asyncio
import math
import os
import statistics
import subprocess
import sys
import threading
import time
from typing import Any

import numpy as np

from freelook.bench import Case, benchmark
from freelook.config import RobotConfig, load_robot
from freelook.hal import DriveCommand
from freelook.hardware.ros2 import NodeThread, open_ros2_server, ros
from freelook.link import SetTransmission, ThesisCodec, UdpEndpoint, VelocityCommand

__all__: list[str] = []

_COMMANDS = 60  # operator commands per session
_SWITCHES = 40  # zone changes per session
_CPU_SECONDS = 10.0
_ODOM_HZ = 24.0  # slower than the 50 Hz cycle: the estimator's cycles without odometry count


def _domain() -> int:
    """A DDS domain for this run (``ROS_DOMAIN_ID`` if set), discovery kept on this machine."""
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    given = os.environ.get("ROS_DOMAIN_ID")
    return int(given) if given else 1 + os.getpid() % 100


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))] if ordered else math.inf


class _Base:
    """The benchmark's base: a robot that stands still in open space, or with an obstacle
    0.3 m to its left (``near``); every ``cmd_vel`` kept as (arrival, v)."""

    def __init__(self, domain: int, config: RobotConfig) -> None:
        r = ros()
        self._r = r
        self.config = config
        self.near = False
        self.scans: list[tuple[float, bool]] = []  # (published, near)
        self.received: list[tuple[float, float]] = []
        self.lock = threading.Lock()
        self._ros = NodeThread("bench_base", domain_id=domain)
        node = self.node = self._ros.node
        sensor = r.qos.qos_profile_sensor_data
        reliable = r.qos.QoSProfile(depth=10, reliability=r.qos.ReliabilityPolicy.RELIABLE)
        topics = config.ros2.topics
        self.odom = node.create_publisher(r.Odometry, topics.odom, reliable)
        self.scan = node.create_publisher(r.LaserScan, topics.scan, sensor)
        self.imu = node.create_publisher(r.Imu, topics.imu, sensor)
        self.joints = node.create_publisher(r.JointState, topics.joint_states, reliable)
        self.camera = node.create_publisher(r.CompressedImage, topics.camera, sensor)
        node.create_subscription(r.Twist, topics.cmd_vel, self._on_cmd_vel, reliable)
        node.create_timer(0.02, self._fast)
        node.create_timer(1.0 / _ODOM_HZ, self._odometry)
        node.create_timer(0.05, self.publish_scan)
        node.create_timer(0.1, self._frame)
        import simplejpeg

        rng = np.random.default_rng(0)
        image = rng.integers(0, 255, (240, 320, 3), dtype=np.uint8)
        self.jpeg = simplejpeg.encode_jpeg(image, quality=75, colorspace="RGB")
        self._ros.start()

    def close(self) -> None:
        self._ros.close()

    def _on_cmd_vel(self, msg: Any) -> None:
        with self.lock:
            self.received.append((time.perf_counter(), msg.linear.x))

    def _odometry(self) -> None:
        odom = self._r.Odometry()
        odom.header.stamp = self.node.get_clock().now().to_msg()
        odom.pose.pose.orientation.w = 1.0
        self.odom.publish(odom)

    def _fast(self) -> None:
        r = self._r
        stamp = self.node.get_clock().now().to_msg()
        imu = r.Imu()
        imu.header.stamp = stamp
        self.imu.publish(imu)
        joints = r.JointState()
        joints.header.stamp = stamp
        joints.name = [self.config.ros2.pan_joint, self.config.ros2.tilt_joint]
        joints.position = [0.0, 0.0]
        self.joints.publish(joints)

    def publish_scan(self) -> None:
        laser = self.config.laser
        assert laser is not None
        half = math.radians(laser.fov_deg) / 2
        ranges = np.full(laser.beams, 5.0, dtype=np.float32)
        near = self.near
        if near:
            ranges[-6:] = 0.3  # at the left end of the sweep, beside the robot
        msg = self._r.LaserScan()
        msg.header.stamp = self.node.get_clock().now().to_msg()
        msg.angle_min, msg.angle_max = -half, half
        msg.angle_increment = 2 * half / (laser.beams - 1)
        msg.range_min, msg.range_max = laser.range_min, laser.range_max
        msg.ranges = ranges.tolist()
        with self.lock:
            self.scans.append((time.perf_counter(), near))
        self.scan.publish(msg)

    def _frame(self) -> None:
        msg = self._r.CompressedImage()
        msg.format = "jpeg"
        msg.data = self.jpeg
        self.camera.publish(msg)


async def _serve_on_ros2(config: RobotConfig, domain: int) -> tuple[Any, asyncio.Task[None]]:
    from freelook.robot import ServerOptions

    options = ServerOptions(listen="udp://127.0.0.1:0", wire="thesis", camera=False)
    server, _ = await open_ros2_server(config, "ros2", options, domain_id=domain)
    task = asyncio.create_task(server.run())
    await server.ready.wait()
    return server, task


async def _operator(server: Any) -> UdpEndpoint:
    port = server.local_address[1]
    operator = await UdpEndpoint.open(("127.0.0.1", 0), remote=("127.0.0.1", port))
    operator.send(ThesisCodec().encode(SetTransmission(True), 0.0))
    return operator


def _bench_config() -> RobotConfig:
    """The Pioneer's description without obstacle memory: each scan alone sets the zone."""
    config = load_robot("pioneer3dx")
    safety = config.safety.model_copy(update={"obstacle_memory": 0.0})
    return config.model_copy(update={"safety": safety, "sonar": None})


async def _scan_session() -> list[float]:
    config = _bench_config()
    domain = _domain()
    base = _Base(domain, config)
    server, task = await _serve_on_ros2(config, domain)
    operator = await _operator(server)
    codec = ThesisCodec()
    latencies: list[float] = []
    try:
        for k in range(_SWITCHES):
            base.near = k % 2 == 0
            # a new scan of the other kind, published at the base's own scan rate
            with base.lock:
                seen = len(base.scans)
            deadline = time.perf_counter() + 0.3
            while time.perf_counter() < deadline:
                operator.send(codec.encode(VelocityCommand(0.3, 0.0), 0.0))
                await asyncio.sleep(0.01)
            with base.lock:
                published = [t for t, near in base.scans[seen:] if near == base.near]
                received = list(base.received)
            if not published:
                continue
            t0 = published[0]
            slow = [t for t, v in received if t > t0 and (v < 0.25 if base.near else v > 0.25)]
            latencies.append(slow[0] - t0 if slow else math.inf)
    finally:
        operator.close()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        base.close()
    return latencies


@benchmark("ros2.scan_to_cmd_vel")
def scan_to_cmd_vel() -> Case:
    """A scan that changes the safety zone until the first cmd_vel that obeys it (real DDS on
    loopback, 20 ms control cycle). Target: p95 ≤ one control cycle + 5 ms."""
    latencies: list[float] = []

    def run() -> None:
        latencies.extend(asyncio.run(_scan_session()))

    return Case(
        run=run,
        unit="session",
        calls=1,
        target_s=0.020 + 0.005,
        measured=lambda: _p95(latencies),
        extra=lambda: {
            "p50_ms": statistics.median(latencies) * 1e3,
            "p95_ms": _p95(latencies) * 1e3,
            "max_ms": max(latencies) * 1e3,
            "zone_changes": float(len(latencies)),
        },
    )


async def _command_latencies(send: Any, arrived: Any) -> list[float]:
    """Each of ``_COMMANDS`` speeds sent at the operator's spacing, until ``arrived(v)``
    returns the perf_counter time it arrived."""
    latencies = []
    for k in range(_COMMANDS):
        v = 0.05 + 0.001 * k
        t0 = time.perf_counter()
        send(v)
        while (t := arrived(v, t0)) is None and time.perf_counter() - t0 < 0.5:
            await asyncio.sleep(0.0005)
        latencies.append(t - t0 if t is not None else math.inf)
        await asyncio.sleep(max(0.0, 0.047 - (time.perf_counter() - t0)))
    return latencies


async def _ros2_commands() -> list[float]:
    config = _bench_config()
    domain = _domain()
    base = _Base(domain, config)
    server, task = await _serve_on_ros2(config, domain)
    operator = await _operator(server)
    codec = ThesisCodec()

    def arrived(v: float, t0: float) -> float | None:
        with base.lock:
            return next((t for t, got in base.received if t > t0 and abs(got - v) < 1e-6), None)

    try:
        return await _command_latencies(
            lambda v: operator.send(codec.encode(VelocityCommand(v, 0.0), 0.0)), arrived
        )
    finally:
        operator.close()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        base.close()


async def _udp_commands() -> list[float]:
    """The same commands over UDP to the simulator's HAL (the path without ROS)."""
    from freelook.hardware.sim import simulated_server
    from freelook.maps import load_world
    from freelook.robot import ServerOptions

    config = _bench_config()
    options = ServerOptions(listen="udp://127.0.0.1:0", wire="thesis", camera=False)
    server, _ = simulated_server(config, load_world("square"), options, robot_map=None)
    drive = server.program.hardware.drive
    calls: list[tuple[float, float]] = []
    original = drive.command

    def spy(command: DriveCommand) -> None:
        left, right = command.v_left, command.v_right
        calls.append((time.perf_counter(), (left + right) / 2))
        original(command)

    drive.command = spy  # type: ignore[method-assign]
    task = asyncio.create_task(server.run())
    await server.ready.wait()
    operator = await _operator(server)
    codec = ThesisCodec()

    def arrived(v: float, t0: float) -> float | None:
        return next((t for t, got in calls if t > t0 and abs(got - v) < 1e-6), None)

    try:
        return await _command_latencies(
            lambda v: operator.send(codec.encode(VelocityCommand(v, 0.0), 0.0)), arrived
        )
    finally:
        operator.close()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@benchmark("ros2.command_to_cmd_vel")
def command_to_cmd_vel() -> Case:
    """An operator's velocity command over UDP until the ROS 2 base hears it on cmd_vel,
    against the same command until the simulator's HAL takes it, in the same run. Target:
    p95 ≤ the UDP path's p95 + 5 ms (the measured figure is the difference)."""
    ros2: list[float] = []
    udp: list[float] = []

    def run() -> None:
        udp.extend(asyncio.run(_udp_commands()))
        ros2.extend(asyncio.run(_ros2_commands()))

    return Case(
        run=run,
        unit="session",
        calls=1,
        target_s=0.005,
        target_label="p95 ≤ UDP path p95 + 5 ms",
        measured=lambda: _p95(ros2) - _p95(udp),
        extra=lambda: {
            "ros2_p50_ms": statistics.median(ros2) * 1e3,
            "ros2_p95_ms": _p95(ros2) * 1e3,
            "udp_p50_ms": statistics.median(udp) * 1e3,
            "udp_p95_ms": _p95(udp) * 1e3,
        },
    )


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _cpu_session() -> dict[str, float]:
    config = load_robot("pioneer3dx")
    domain = _domain()
    base = _Base(domain, config)
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    env = {**os.environ, "ROS_DOMAIN_ID": str(domain), "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "freelook.cli", "robot", "--hardware", "ros2"),
            *("--robot", "pioneer3dx"),
            *("--map", "none", "--wire", "thesis", "--listen", f"udp://127.0.0.1:{port}"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        while "profile on" not in (line := await asyncio.to_thread(process.stdout.readline)):
            if not line:
                raise RuntimeError("freelook robot --hardware ros2 ended before serving")
        operator = await UdpEndpoint.open(("127.0.0.1", 0), remote=("127.0.0.1", port))
        codec = ThesisCodec()
        operator.send(codec.encode(SetTransmission(True), 0.0))
        await asyncio.sleep(1.0)
        cpu0, t0 = _cpu_seconds(process.pid), time.perf_counter()
        k = 0
        while time.perf_counter() - t0 < _CPU_SECONDS:
            operator.send(codec.encode(VelocityCommand(0.1 * math.sin(k / 20), 0.0), 0.0))
            k += 1
            await asyncio.sleep(0.047)
        cpu = _cpu_seconds(process.pid) - cpu0
        wall = time.perf_counter() - t0
        operator.close()
        with base.lock:
            commands = len(base.received)
        return {"cpu_share": cpu / wall, "cmd_vel_hz": commands / (wall + 1.0)}
    finally:
        process.terminate()
        process.wait(timeout=10)
        base.close()


@benchmark("ros2.cpu")
def cpu() -> Case:
    """The CPU share of ``freelook robot --hardware ros2`` in its own process: 50 Hz control
    cycle, a thesis operator driving it and receiving its position packets, the base's
    odometry, scan, IMU, joint states and camera coming in."""
    figures: dict[str, float] = {}

    def run() -> None:
        figures.update(asyncio.run(_cpu_session()))

    return Case(run=run, unit="session", calls=1, extra=lambda: dict(figures))

"""Benchmark: a fleet over Zenoh against the same fleet over UDP, in the same run.

10 robots on the batched simulator, 3 operator stations, each with a link session to every
robot (30 sessions, each station with its own key); station k drives robots k, k+3, … and
watches the rest. Every 100 ms each driving station sends a drive command and a control
request; the robot's control grant is the acknowledgement, and the command latency is the
request's round trip, station to robot program and back. Every station counts each robot's
telemetry. The robots run in this process and the stations in a process of their own, on
loopback: over Zenoh (robots on one peer, each station on a peer of its own connected to it)
and over UDP (a socket per robot and per session), one after the other.
"""

from __future__ import annotations

import asyncio
import socket
import statistics
import time
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from freelook.bench import Case, benchmark
from freelook.link import Accepted, ControlGrant, LinkEvent, Telemetry
from freelook.runtime import run_event_loop

if TYPE_CHECKING:
    from freelook.hardware.sim import SimulatedFleet

ROBOTS = 10
STATIONS = 3
COMMAND_PERIOD = 0.1  # s between a driving station's commands to each of its robots
SETTLE = 2.0  # s for every session to open and every station to hold its robots
MEASURE = 5.0  # s measured


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


@dataclass
class FleetTrial:
    """What one trial measured."""

    latencies: list[float] = field(default_factory=list)  # s, request → grant
    requests: int = 0
    grants: int = 0
    commands_sent: int = 0
    commands_received: int = 0
    telemetry: dict[tuple[int, int], int] = field(default_factory=dict)  # (station, robot)
    seconds: float = 0.0
    spacing: float = 0.0

    @property
    def rates(self) -> list[float]:
        return [n / self.seconds for n in self.telemetry.values()] if self.seconds else []


async def _trial(transport: str) -> FleetTrial:
    """The robots here, the stations in a process of their own (as they would be)."""
    import multiprocessing

    from freelook.config import load_robot
    from freelook.hardware.sim import SimulatedFleet
    from freelook.link import KeyRing, ZenohBus
    from freelook.maps import load_world
    from freelook.robot import ServerOptions

    config, world = load_robot("pioneer3dx"), load_world("lab")
    ring = KeyRing.from_mapping(
        {"stations": {str(k): {"key": f"bench {k}"} for k in (1, 2, 3)}}, allow_weak=True
    )
    port = _free_port()
    names = [f"robot-{i + 1}" for i in range(ROBOTS)]
    robots_bus = ZenohBus.peer(listen=[f"tcp/127.0.0.1:{port}"]) if transport == "zenoh" else None

    def listen(i: int) -> str:
        if transport == "zenoh":
            return f"zenoh://127.0.0.1:{port}/{names[i]}"
        return "udp://127.0.0.1:0"

    fleet = SimulatedFleet(
        config,
        world,
        ROBOTS,
        lambda i: ServerOptions(listen=listen(i), keys=ring, camera=False),
        bus=robots_bus,
    )
    received: set[float] = set()  # the speeds of the commands the robot programs had
    _note_commands(fleet, received)
    fleet_task = asyncio.create_task(fleet.run())
    context = multiprocessing.get_context("spawn")
    mine, theirs = context.Pipe()
    child = None
    try:
        await fleet.ready()
        if transport == "zenoh":
            robots: list[tuple[str, int, str]] = [("127.0.0.1", port, name) for name in names]
        else:
            robots = []
            for server in fleet:
                assert server.local_address is not None
                robots.append((*server.local_address, ""))
        child = context.Process(target=_stations_process, args=(transport, robots, theirs))
        child.start()
        deadline = time.monotonic() + SETTLE + MEASURE + 60
        while not mine.poll() and child.is_alive() and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        if not mine.poll():
            raise RuntimeError(f"the stations' process ended without results ({transport})")
        trial, sent = mine.recv()
        trial.commands_sent = len(sent)
        trial.commands_received = sum(1 for v in sent if v in received)
        trial.spacing = config.link.robot_tx_spacing
        return trial  # type: ignore[no-any-return]
    finally:
        if child is not None:
            child.join(timeout=10)
            if child.is_alive():
                child.terminate()
                child.join(timeout=5)
        mine.close()
        theirs.close()
        fleet_task.cancel()
        await asyncio.gather(fleet_task, return_exceptions=True)
        if robots_bus is not None:
            robots_bus.close()


def _note_commands(fleet: SimulatedFleet, received: set[float]) -> None:
    """Each of ``fleet``'s robot programs adds the speed of each velocity command it is
    given to ``received``."""
    from freelook.link import VelocityCommand

    for server in fleet:
        original = server.program.send

        def spy(
            message: Any,
            station: int = 0,
            permissions: Any = None,
            expires: float | None = None,
            _o: Any = original,
        ) -> Any:
            if isinstance(message, VelocityCommand):
                received.add(message.v)
            return _o(message, station, permissions, expires)

        server.program.send = spy  # type: ignore[method-assign]


def _stations_process(transport: str, robots: list[tuple[str, int, str]], conn: Any) -> None:
    """The child process: three stations with a session to every robot; sends back the trial
    and the speeds of the commands sent."""
    result = run_event_loop(_stations(transport, robots))
    conn.send(result)
    conn.close()


async def _stations(
    transport: str, robots: list[tuple[str, int, str]]
) -> tuple[FleetTrial, list[float]]:
    from freelook.config import load_robot
    from freelook.link import ControlRequest, TransportUrl, VelocityCommand, ZenohBus, derive_key
    from freelook.operator import OperatorStation

    config = load_robot("pioneer3dx")
    trial = FleetTrial()
    measuring = [False]
    buses: list[ZenohBus] = []
    stations: dict[tuple[int, int], OperatorStation] = {}
    pending: dict[tuple[int, int], deque[float]] = {}
    tasks = []
    sent: list[float] = []
    try:
        for k in range(1, STATIONS + 1):
            bus = None
            if transport == "zenoh":
                bus = ZenohBus.peer(connect=[f"tcp/{robots[0][0]}:{robots[0][1]}"])
                buses.append(bus)
            for i, (host, port, name) in enumerate(robots):
                if transport == "zenoh":
                    url = TransportUrl("zenoh", host, port, robot=name)
                else:
                    url = TransportUrl("udp", host, port)
                station = OperatorStation(
                    config,
                    None,
                    url,
                    key=derive_key(f"bench {k}"),
                    station=k,
                    bus=bus,
                    driving=False,  # the benchmark sends the requests itself, one at a time
                )
                key = (k, i)
                stations[key] = station
                pending[key] = deque()
                station._on_event = _counter(  # type: ignore[method-assign]
                    station, key, trial, pending[key], measuring
                )
                tasks.append(asyncio.create_task(station.run()))
        drivers = [(k, i) for (k, i) in stations if i % STATIONS == k - 1]
        for key in drivers:
            stations[key].send([ControlRequest(key[0], 10)])
        await asyncio.sleep(SETTLE)
        for key in drivers:
            pending[key].clear()
        measuring[0] = True
        start = time.perf_counter()
        n = 0
        while time.perf_counter() - start < MEASURE:
            for k, i in drivers:
                n += 1
                v = n * 2.0**-12  # each command its own speed, exact in float32
                pending[(k, i)].append(time.perf_counter())
                sent.append(v)
                stations[(k, i)].send([VelocityCommand(v, 0.0), ControlRequest(k, 10)])
                trial.requests += 1
            await asyncio.sleep(COMMAND_PERIOD)
        trial.seconds = time.perf_counter() - start
        measuring[0] = False  # telemetry is counted in the window only
        await asyncio.sleep(0.5)  # the last answers
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for bus in buses:
            bus.close()
    return trial, sent


def _counter(
    station: Any,
    key: tuple[int, int],
    trial: FleetTrial,
    pending: deque[float],
    measuring: list[bool],
) -> Any:
    """The station's own event handler, counting telemetry and timing grants first."""
    handle = station._on_event

    def on_event(event: LinkEvent) -> None:
        if isinstance(event, Accepted):
            message = event.message
            if isinstance(message, Telemetry):
                if measuring[0]:
                    trial.telemetry[key] = trial.telemetry.get(key, 0) + 1
            elif isinstance(message, ControlGrant) and message.station == key[0] and pending:
                trial.latencies.append(time.perf_counter() - pending.popleft())
                trial.grants += 1
        handle(event)

    return on_event


@benchmark("link.fleet_zenoh")
def fleet_zenoh() -> Case:
    """10 robots × 3 stations over Zenoh on loopback vs the same over UDP in the same run.
    Judged: p95 command latency (control request → grant) at most 2 × UDP's; the ratio
    counts as failed (infinite) when a command went unacknowledged over Zenoh or a robot's
    telemetry reached a station at under 90 % of its configured rate."""
    trials: dict[str, FleetTrial] = {}

    def run() -> None:
        trials["zenoh"] = run_event_loop(_trial("zenoh"))

    def baseline() -> None:
        trials["udp"] = run_event_loop(_trial("udp"))

    def acknowledged(trial: FleetTrial) -> bool:
        return trial.grants == trial.requests and trial.commands_received == trial.commands_sent

    def at_rate(trial: FleetTrial) -> bool:
        rates = trial.rates
        return len(rates) == ROBOTS * STATIONS and min(rates) >= 0.9 / trial.spacing

    def p95_ratio() -> float:
        zenoh, udp = trials["zenoh"], trials["udp"]
        if not zenoh.latencies or not udp.latencies:
            return float("inf")
        return _p95(zenoh.latencies) / _p95(udp.latencies)

    def ratio() -> float:
        zenoh = trials["zenoh"]
        return p95_ratio() if acknowledged(zenoh) and at_rate(zenoh) else float("inf")

    def extra() -> dict[str, float]:
        out: dict[str, float] = {}
        for name, trial in trials.items():
            rates = trial.rates or [0.0]
            out |= {
                f"{name}_p50_ms": statistics.median(trial.latencies or [0.0]) * 1e3,
                f"{name}_p95_ms": _p95(trial.latencies or [0.0]) * 1e3,
                f"{name}_requests": float(trial.requests),
                f"{name}_acknowledged": float(trial.grants),
                f"{name}_commands_sent": float(trial.commands_sent),
                f"{name}_commands_received": float(trial.commands_received),
                f"{name}_telemetry_min_hz": min(rates),
                f"{name}_telemetry_mean_hz": statistics.fmean(rates),
                f"{name}_telemetry_streams": float(len(trial.telemetry)),
            }
        if trials:
            out["configured_telemetry_hz"] = 1.0 / next(iter(trials.values())).spacing
            out["p95_ratio"] = p95_ratio()
            for name, trial in trials.items():
                out[f"{name}_all_acknowledged"] = float(acknowledged(trial))
                out[f"{name}_telemetry_at_rate"] = float(at_rate(trial))
        return out

    return Case(
        run=run,
        baseline=baseline,
        calls=1,
        unit="trial",
        extra=extra,
        ratio=ratio,
        max_baseline_ratio=2.0,
        target_label="p95 command latency ≤ 2 × UDP's, every command acknowledged",
    )

"""A transport and a hardware backend installed by another package, found through its entry
points (``freelook.transports``, ``freelook.backends``) as python-can finds its interfaces.

The package is written here: a module and a ``.dist-info`` with ``entry_points.txt``, on
``sys.path``, so ``importlib.metadata`` finds it as it would an installed wheel. Its transport
(``pipe://NAME``) carries packets between the ends of one process through queues, with no
socket at all; its backend (``rig://NAME``) is a drive that keeps the wheel speeds it was
given. A robot program on the rig, served on a pipe, is driven by a station on that pipe.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from freelook.config import load_robot
from freelook.errors import ConfigError
from freelook.hardware import BACKENDS, backend_for, known_backends, open_robot_server
from freelook.link import (
    TRANSPORTS,
    VelocityCommand,
    derive_key,
    known_transports,
    parse_transport_url,
)
from freelook.operator import OperatorStation
from freelook.robot import ServerOptions
from loopback import robot_and_station
from waiting import wait_until_async

pytestmark = pytest.mark.timeout(120)

PLUGIN = '''
"""A transport and a backend for freelook, from outside it."""

import asyncio
import itertools

from freelook.errors import ConfigError
from freelook.hal import RobotHardware
from freelook.hardware import Backend
from freelook.link import Transport, TransportUrl
from freelook.robot import RobotProgram, RobotServer
from freelook.runtime import RealtimeRuntime

PIPES = {}  # name -> the robot's end
RIGS = {}  # name -> the rig's drive


class _End:
    local_address = None  # no socket
    link_rate = None  # nothing limits it

    def __init__(self):
        self.inbox = asyncio.Queue()

    async def recv_from(self, timeout=None):
        try:
            async with asyncio.timeout(timeout):
                return await self.inbox.get()
        except TimeoutError:
            return None


class RobotEnd(_End):
    def __init__(self, name):
        super().__init__()
        self.name = name
        self.stations = {}
        self.peer = None
        self.carried = 0  # packets both ways

    def send(self, data):
        if self.peer is not None:
            self.send_to(data, self.peer)

    def send_to(self, data, source):
        station = self.stations.get(source)
        if station is not None:
            self.carried += 1
            station.inbox.put_nowait((data, self.name))

    def learn_peer(self, source):
        if source in self.stations:
            self.peer = source

    def close(self):
        PIPES.pop(self.name, None)


class StationEnd(_End):
    tags = itertools.count(1)

    def __init__(self, robot):
        super().__init__()
        self.robot = robot
        self.tag = f"station-{next(self.tags)}"
        robot.stations[self.tag] = self

    def send(self, data):
        self.robot.carried += 1
        self.robot.inbox.put_nowait((data, self.tag))

    def send_to(self, data, source):
        self.send(data)

    def learn_peer(self, source):
        pass

    def close(self):
        self.robot.stations.pop(self.tag, None)


def parse(url):
    name = url.removeprefix("pipe://")
    if not name.isalnum():
        raise ConfigError(f"{url}: expected pipe://NAME")
    return TransportUrl("pipe", host=name)


async def open_pipe(url, side):
    if side.role == "robot":
        PIPES[url.host] = RobotEnd(url.host)
        return PIPES[url.host]
    if url.host not in PIPES:
        raise ConfigError(f"pipe://{url.host}: no robot there")
    return StationEnd(PIPES[url.host])


PIPE = Transport("pipe://NAME", parse, open_pipe)


class RecordingDrive:
    kind = "differential"

    def __init__(self):
        self.wheels = []

    def command(self, command):
        self.wheels.append((command.v_left, command.v_right))


def load():
    async def open_server(request):
        name = request.url.removeprefix("rig://")
        runtime = RealtimeRuntime()
        drive = RIGS[name] = RecordingDrive()
        program = RobotProgram(request.config, RobotHardware(drive=drive), runtime)
        return RobotServer(program, runtime, request.options), f"the rig {name}"

    return open_server


RIG = Backend("rig://NAME", load)
'''


def install(site: Path, name: str, entry_points: str, code: str) -> None:
    """A package ``name`` in ``site`` as an installer leaves it: its module and its metadata."""
    (site / f"{name}.py").write_text(code)
    info = site / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))


@pytest.fixture
def tables() -> Iterator[None]:
    """The registries as they were after the test (what it installed forgotten)."""
    transports, backends = dict(TRANSPORTS), dict(BACKENDS)
    yield
    TRANSPORTS.clear()
    TRANSPORTS.update(transports)
    BACKENDS.clear()
    BACKENDS.update(backends)


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tables: None) -> Iterator[ModuleType]:
    install(
        tmp_path,
        "freelook_pipe",
        """
        [freelook.transports]
        pipe = freelook_pipe:PIPE

        [freelook.backends]
        rig = freelook_pipe:RIG
        """,
        PLUGIN,
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "pipe" not in TRANSPORTS  # nothing loaded before it is asked for
    assert "rig" not in BACKENDS
    yield importlib.import_module("freelook_pipe")
    sys.modules.pop("freelook_pipe", None)


def test_an_installed_transport_and_backend_are_known_by_their_schemes(
    plugin: ModuleType,
) -> None:
    assert parse_transport_url("pipe://bench").host == "bench"
    assert TRANSPORTS["pipe"] is plugin.PIPE
    with pytest.raises(ConfigError, match="expected pipe://NAME"):
        parse_transport_url("pipe://a-b")
    assert known_transports().endswith("or pipe://NAME")
    assert backend_for("rig://one") is plugin.RIG
    assert known_backends().endswith(", rig://NAME")


def test_a_station_drives_a_robot_on_an_installed_backend_over_an_installed_transport(
    plugin: ModuleType,
) -> None:
    config = load_robot("pioneer3dx")
    key = derive_key("plugin test")

    async def scenario() -> tuple[OperatorStation, int]:
        options = ServerOptions(listen="pipe://bench", key=key, camera=False)
        server, line = await open_robot_server(config, "rig://bench", options)
        assert line == "the rig bench"
        url = parse_transport_url("pipe://bench")
        drive = plugin.RIGS["bench"]
        async with robot_and_station(
            server,
            lambda _: OperatorStation(config, None, url, key=key),
            opened=lambda station: station.in_control,
            what="the station in control over the pipe",
        ) as station:
            pipe = plugin.PIPES["bench"]
            assert pipe.stations  # the station's end is on the robot's pipe
            station.drive_command = VelocityCommand(0.3, 0.0)
            await wait_until_async(
                lambda: any(left > 0 and right > 0 for left, right in drive.wheels),
                20.0,
                "the rig's wheels commanded forward",
            )
        assert "bench" not in plugin.PIPES  # the robot's end closed with the server
        return station, pipe.carried

    station, carried = asyncio.run(scenario())
    assert station.in_control
    assert station.telemetry is not None  # the robot's reports came back on the pipe
    # every packet the station heard came through the pipe, and so did what it sent
    assert carried > station.stats.received > 0


def test_an_entry_point_that_names_something_else_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tables: None
) -> None:
    install(
        tmp_path,
        "freelook_odd",
        """
        [freelook.backends]
        odd = freelook_odd:NOT_A_BACKEND
        """,
        "NOT_A_BACKEND = 42\n",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(ConfigError, match=r"odd = freelook_odd:NOT_A_BACKEND .* not a Backend"):
            backend_for("odd://x")
        assert "odd" not in BACKENDS
    finally:
        sys.modules.pop("freelook_odd", None)

"""``--hardware`` picks its backend from the ``BACKENDS`` table by URL scheme: an unknown one is
refused naming every known one, a new one plugs in with ``register_backend``, and a backend's
code loads only when it is asked for."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator

import pytest

from freelook.config import load_robot
from freelook.errors import ConfigError
from freelook.hardware import (
    BACKENDS,
    Backend,
    BackendRequest,
    backend_for,
    known_backends,
    open_robot_server,
    register_backend,
)
from freelook.maps import load_world
from freelook.robot import RobotServer, ServerOptions

OPTIONS = ServerOptions(listen="udp://127.0.0.1:0", allow_unauthenticated=True)


@pytest.mark.parametrize("hardware", ["mobilesim", "sim://lab", "arcos", "judp", "", "tcp://h:1"])
def test_an_unknown_backend_is_refused_naming_every_known_one(hardware: str) -> None:
    with pytest.raises(ConfigError) as refused:
        asyncio.run(open_robot_server(load_robot("pioneer3dx"), hardware, OPTIONS))
    message = str(refused.value)
    assert message.startswith(f"--hardware {hardware!r}: expected ")
    for usage in ("sim", "arcos://HOST:PORT", "arcos:///dev/DEVICE", "judp://HOST:PORT"):
        assert usage in message
    assert "ros2 or ros2://NAMESPACE" in message
    assert known_backends() in message


@pytest.fixture
def table() -> Iterator[dict[str, Backend]]:
    saved = dict(BACKENDS)
    yield BACKENDS
    BACKENDS.clear()
    BACKENDS.update(saved)


def test_a_registered_backend_is_opened_by_its_scheme(table: dict[str, Backend]) -> None:
    asked: list[BackendRequest] = []

    def load() -> object:
        async def open_server(request: BackendRequest) -> tuple[RobotServer, str]:
            asked.append(request)
            from freelook.hardware.sim import simulated_server

            server, _ = simulated_server(request.config, load_world("square"), request.options)
            return server, "a test rig"

        return open_server

    register_backend("rig", Backend("rig://NAME", load))  # type: ignore[arg-type]
    config = load_robot("pioneer3dx")
    server, line = asyncio.run(open_robot_server(config, "rig://bench-3", OPTIONS, seed=4))
    assert line == "a test rig"
    assert isinstance(server, RobotServer)
    assert [(r.url, r.seed, r.config.name) for r in asked] == [("rig://bench-3", 4, config.name)]
    with pytest.raises(ConfigError, match="rig://NAME"):  # it is listed among the known ones
        asyncio.run(open_robot_server(config, "nothing", OPTIONS))
    with pytest.raises(ValueError, match="already serves 'rig'"):
        register_backend("rig", Backend("rig://OTHER", load))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="already serves 'sim'"):
        register_backend("sim", Backend("sim", load))  # type: ignore[arg-type]


def test_only_the_backend_asked_for_is_imported() -> None:
    probe = (
        "import asyncio, sys\n"
        "from freelook.config import load_robot\n"
        "from freelook.hardware import open_robot_server\n"
        "from freelook.robot import ServerOptions\n"
        "before = sorted(m for m in sys.modules if m.startswith('freelook.hardware.'))\n"
        "options = ServerOptions(listen='udp://127.0.0.1:0', allow_unauthenticated=True)\n"
        "asyncio.run(open_robot_server(load_robot('pioneer3dx'), 'sim', options, world='square'))\n"
        "after = sorted(m for m in sys.modules if m.startswith('freelook.hardware.'))\n"
        "print(' '.join(before)); print(' '.join(after))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=600, check=True
    )
    before, after = (line.split() for line in done.stdout.splitlines()[-2:])
    real = ("freelook.hardware.arcos", "freelook.hardware.judp", "freelook.hardware.ros2")
    assert not [m for m in before if m.startswith(("freelook.hardware.sim", *real))]
    assert "freelook.hardware.sim" in after
    assert not [m for m in after if m.startswith(real)]


@pytest.mark.parametrize("exact", [False, True])
def test_the_simulated_robot_differs_from_its_description_unless_told_exact(exact: bool) -> None:
    # the program believes the nominal description; the simulator runs the error model's robot
    config = load_robot("pioneer3dx")
    server, _ = asyncio.run(
        open_robot_server(config, "sim", OPTIONS, robot_map="none", seed=3, exact=exact)
    )
    try:
        drive = server.program.hardware.drive
        sim = drive._sim  # type: ignore[attr-defined]
        assert server.program.config == config  # the program's belief: the description
        if exact:
            assert sim.truth is None
        else:
            assert sim.truth is not None
            assert sim.truth.left_wheel != 1.0  # the wheels are not as described
    finally:
        server.program.close()


def test_what_the_command_line_asks_of_a_backend_is_a_field_of_its_entry() -> None:
    # without --robot, a ROS 2 robot is described from its topics; only the simulator's
    # camera frames are rendered in this process (its renderer compiled ahead)
    assert [name for name, b in BACKENDS.items() if b.describe is not None] == ["ros2"]
    assert [name for name, b in BACKENDS.items() if b.renders_camera] == ["sim"]
    assert backend_for("ros2://robot_1") is BACKENDS["ros2"]
    assert backend_for("sim") is BACKENDS["sim"]
    for hardware in ("sim://lab", "arcos", "mobilesim", ""):  # written as none of them is
        assert backend_for(hardware) is None

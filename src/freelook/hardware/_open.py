"""Choosing a backend by the scheme of ``--hardware`` (``sim``, ``arcos://…``, ``judp://…``,
``ros2[://…]``), and the map the robot is given.

:data:`BACKENDS` maps a scheme to a :class:`Backend`: how its URLs are written and a loader
that imports the backend only when it is asked for (a simulated robot loads no JAUS or ROS 2
code). A new backend adds one entry, here, with :func:`register_backend`, or from an installed
package's ``freelook.backends`` entry point (``link/_plugins.py``). What differs between
backends beyond opening them (a robot that describes itself, a camera rendered here) is a field
of its entry: nothing else in freelook tests a backend's name.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from freelook.config import RobotConfig
from freelook.errors import ConfigError
from freelook.link import BACKENDS_GROUP, install_plugins, installed_plugin
from freelook.maps import World, load_world
from freelook.robot import RobotServer, ServerOptions

if TYPE_CHECKING:  # recording (mcap and its schemas) loads only when a recorder is given
    from freelook.record import BackgroundRecorder

__all__ = [
    "BACKENDS",
    "Backend",
    "BackendRequest",
    "backend_for",
    "check_backend",
    "known_backends",
    "open_robot_server",
    "register_backend",
]


@dataclass(frozen=True, slots=True)
class BackendRequest:
    """What ``freelook robot`` asks of a backend (see :func:`open_robot_server`)."""

    config: RobotConfig
    url: str
    options: ServerOptions
    world: str = "lab"
    robot_map: str | None = None
    seed: int = 0
    recorder: BackgroundRecorder | None = None
    start: tuple[float, float, float] | None = None
    #: the simulated robot exactly as described (a demo); else it differs by its error model
    exact: bool = False


Opener = Callable[[BackendRequest], Awaitable[tuple[RobotServer, str]]]
#: a robot described from what it shows: (its description, the ``--hardware`` it was found
#: at), what was found and what assumed said a line at a time through the second argument
Describer = Callable[[str, Callable[[str], None]], Awaitable[tuple[RobotConfig, str]]]


class RobotOpener(Protocol):
    """A real robot's ``open_…_server``: connect to ``url``, then build the server over it."""

    def __call__(
        self,
        config: RobotConfig,
        url: str,
        options: ServerOptions,
        *,
        robot_map: World | None = None,
        recorder: BackgroundRecorder | None = None,
        start: tuple[float, float, float] | None = None,
    ) -> Awaitable[tuple[RobotServer, str]]: ...


def _core() -> None:
    """A backend that needs nothing beyond the core install."""


@dataclass(frozen=True, slots=True)
class Backend:
    """One entry of :data:`BACKENDS`."""

    usage: str  # how its ``--hardware`` is written, for the error that lists them
    load: Callable[[], Opener]  # imports the backend and returns its opener
    bare: bool = False  # the scheme alone names it (``sim``, ``ros2``)
    urls: bool = True  # ``SCHEME:…`` names it
    #: raises a FreelookError saying how to install what the backend needs and this install
    #: lacks (its extra): checked before anything slow is begun
    ready: Callable[[], None] = _core
    #: without ``--robot`` the robot is described from what it shows (a ROS 2 robot's topics)
    describe: Describer | None = None
    #: the camera's frames are rendered in this process (the simulator's compiled renderer)
    renders_camera: bool = False


def _robot_map(spec: str | None, default: World | None) -> World | None:
    if spec is None:
        return default
    if spec.lower() == "none":
        return None
    return load_world(spec)  # WorldError names the file and what was wrong


def _real_robot(opener: RobotOpener) -> Opener:
    """A real robot's opener on a request: no map unless one is given."""

    async def open_server(request: BackendRequest) -> tuple[RobotServer, str]:
        return await opener(
            request.config,
            request.url,
            request.options,
            robot_map=_robot_map(request.robot_map, None),
            recorder=request.recorder,
            start=request.start,
        )

    return open_server


def _sim() -> Opener:
    from freelook.config import physical_robot
    from freelook.hardware.sim import published_map, simulated_server

    async def open_server(request: BackendRequest) -> tuple[RobotServer, str]:
        the_world = load_world(request.world)
        server, _ = simulated_server(
            request.config,
            the_world,
            request.options,
            seed=request.seed,
            robot_map=_robot_map(request.robot_map, published_map(the_world)),
            recorder=request.recorder,
            start=request.start,
            truth=None if request.exact else physical_robot(request.config, request.seed),
        )
        return server, f"the simulator in {the_world.name}"

    return open_server


def _arcos() -> Opener:
    from freelook.hardware.arcos import open_arcos_server

    return _real_robot(open_arcos_server)


def _judp() -> Opener:
    from freelook.hardware.judp import open_judp_server

    return _real_robot(open_judp_server)


#: ``--map ros:TOPIC``: a ROS 2 robot's own map, from its topic (``ros:/map``)
ROS_MAP = "ros:"


def _ros2() -> Opener:
    from freelook.hardware.ros2 import open_ros2_server

    async def open_server(request: BackendRequest) -> tuple[RobotServer, str]:
        spec = request.robot_map
        topic = spec[len(ROS_MAP) :] if spec is not None and spec.startswith(ROS_MAP) else None
        if topic is not None and not topic.strip("/"):
            raise ConfigError(f"--map {spec!r}: expected ros:TOPIC, e.g. ros:/map")
        return await open_ros2_server(
            request.config,
            request.url,
            request.options,
            # a map file given wins over the description's map topic; ros:TOPIC names one
            robot_map=_robot_map(spec, None) if topic is None else None,
            recorder=request.recorder,
            start=request.start,
            map_topic=topic if topic is not None else ("" if spec is not None else None),
        )

    return open_server


#: s a ROS 2 robot's topics are watched for when no ``--robot`` describes it
DESCRIBE_SECONDS = 2.0


async def _ros2_described(hardware: str, say: Callable[[str], None]) -> tuple[RobotConfig, str]:
    """No ``--robot`` on a ROS 2 robot: a description of what its topics show (as ``freelook
    ros2 describe`` writes it), what was found and assumed said; and the ``--hardware`` URL of
    the namespace it was found in."""
    import asyncio

    from freelook.hardware.ros2 import describe_robot, parse_ros2_url

    namespace = parse_ros2_url(hardware)
    say(
        f"no --robot: watching the ROS 2 robot's topics for {DESCRIBE_SECONDS:g} s "
        "(freelook ros2 describe -o FILE writes the description down to edit)"
    )
    described = await asyncio.to_thread(describe_robot, namespace, DESCRIBE_SECONDS)
    for line in described.found:
        say(f"  found: {line}")
    for line in described.assumed:
        say(f"  assumed: {line}")
    url = hardware
    if described.namespace != namespace:
        url = f"ros2://{described.namespace}"
        say(f"  the robot's topics are in namespace /{described.namespace}: --hardware {url}")
    return described.config, url


def _ros2_ready() -> None:
    """rclpy and the message packages import (the ros2 extra, or a sourced ROS 2)."""
    from freelook.hardware.ros2 import ros

    ros()


#: ``--hardware`` scheme → its backend (python-can's ``BACKENDS``, by URL scheme).
BACKENDS: dict[str, Backend] = {
    "sim": Backend("sim", _sim, bare=True, urls=False, renders_camera=True),
    "arcos": Backend("arcos://HOST:PORT, arcos:///dev/DEVICE", _arcos),
    "judp": Backend("judp://HOST:PORT", _judp),
    "ros2": Backend(
        "ros2 or ros2://NAMESPACE", _ros2, bare=True, ready=_ros2_ready, describe=_ros2_described
    ),
}


def register_backend(scheme: str, backend: Backend) -> None:
    """Add a backend under ``scheme`` (a name no other backend has)."""
    if scheme in BACKENDS:
        raise ValueError(f"a backend already serves {scheme!r}")
    BACKENDS[scheme] = backend


def known_backends() -> str:
    """How every backend's ``--hardware`` is written (installed ones too), for an error
    message."""
    install_plugins(BACKENDS, BACKENDS_GROUP, Backend)
    return ", ".join(backend.usage for backend in BACKENDS.values())


def backend_for(hardware: str) -> Backend | None:
    """The backend ``hardware`` names (registered, or installed by a package); None when no
    backend serves it, or not written that way (a bare name, a URL)."""
    scheme, colon, _ = hardware.partition(":")
    backend = installed_plugin(BACKENDS, BACKENDS_GROUP, scheme, Backend)
    if backend is None or not (backend.urls if colon else backend.bare):
        return None
    return backend


def _backend(hardware: str) -> Backend:
    backend = backend_for(hardware)
    if backend is None:
        raise ConfigError(f"--hardware {hardware!r}: expected {known_backends()}")
    return backend


def check_backend(hardware: str) -> None:
    """That the backend ``hardware`` names exists and can run in this install (its extra is
    installed), before anything slow (compiling ahead, connecting) is begun: a
    :class:`ConfigError` for an unknown name, the backend's own error for what is missing."""
    _backend(hardware).ready()


async def open_robot_server(
    config: RobotConfig,
    hardware: str,
    options: ServerOptions,
    *,
    world: str = "lab",
    robot_map: str | None = None,
    seed: int = 0,
    recorder: BackgroundRecorder | None = None,
    start: tuple[float, float, float] | None = None,
    exact: bool = False,
) -> tuple[RobotServer, str]:
    """A robot server on the backend ``hardware`` names, and a line describing it.

    ``robot_map``: a map file or built-in world, ``"none"`` for range sensors alone, or None
    for the backend's default (the simulated world's own map file; no map on a real robot).
    ``start``: where the robot starts (the simulator puts it there) or, on a real robot, where
    it stands on its map; None: the map's start or the free place nearest its origin.
    ``exact``: a simulated robot exactly as described, not under its error model.
    Raises a :class:`freelook.errors.FreelookError` naming what could not be opened.
    """
    opener = _backend(hardware).load()
    request = BackendRequest(
        config, hardware, options, world, robot_map, seed, recorder, start, exact
    )
    return await opener(request)

"""``freelook sim`` (the one-command demo) and ``freelook operator``."""

from __future__ import annotations

from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from freelook.cli._options import (
    LinkDelay,
    LinkJitter,
    LinkLoss,
    Seed,
    WeakKey,
    Wire,
    link_shaping,
)

if TYPE_CHECKING:
    from freelook.config import RobotConfig
    from freelook.launch import SessionOptions
    from freelook.maps import World

__all__ = ["register"]

_Certfile = Annotated[
    Path | None,
    typer.Option(help="TLS certificate (PEM) for the cockpit; with --keyfile serves https."),
]
_Keyfile = Annotated[Path | None, typer.Option(help="TLS private key (PEM) for --certfile.")]
_Foxglove = Annotated[
    int | None,
    typer.Option(
        help="Also serve the live topics to Foxglove (WebSocket) on this port, on --host; "
        "Foxglove drives only with the cockpit's token (docs/foxglove.md)."
    ),
]
_Host = Annotated[
    str,
    typer.Option(
        help="Web address. Loopback by default; beyond loopback use --certfile/--keyfile "
        "(the token is required everywhere)."
    ),
]
_Port = Annotated[
    int, typer.Option(help="Web port (0: one the system picks, in the announced URL).")
]
_NoRecord = Annotated[bool, typer.Option("--no-record", help="Do not record.")]

# sim's own options
_Robot = Annotated[str, typer.Option(help="Robot name or TOML file.")]
_World = Annotated[str, typer.Option(help="World name or map file.")]
_Record = Annotated[Path | None, typer.Option(help="Record to this file.")]
_NoBrowser = Annotated[
    bool,
    typer.Option("--no-browser", help="Do not open the cockpit in a browser (the URL is printed)."),
]
_Start = Annotated[
    str | None,
    typer.Option(
        help="Start pose X,Y,THETA (m, m, degrees); default: the map's start (RobotHome), "
        "else the free place nearest its origin."
    ),
]
_Robots = Annotated[
    int,
    typer.Option(
        min=1, max=1000, help="Simulated robots (several: a fleet on Zenoh, one simulator)."
    ),
]
_Stations = Annotated[
    int,
    typer.Option(min=1, max=64, help="Operator stations, each its own cockpit on the next port."),
]
_Zenoh = Annotated[
    str, typer.Option(help="HOST:PORT the fleet's Zenoh peer listens on (with --robots).")
]
_ExactRobot = Annotated[
    bool,
    typer.Option(
        "--exact-robot",
        help="Simulate the robot exactly as its description says (a demo); by default it "
        "differs by its error model (config/errors/ROBOT.toml), as a real robot would.",
    ),
]
_Ros2 = Annotated[
    bool,
    typer.Option(
        "--ros2",
        help="Only the simulator, as a ROS 2 robot on the standard topics (drive it with "
        "freelook robot --hardware ros2, or any ROS 2 tool); docs/ros2.md.",
    ),
]
_Ros2Namespace = Annotated[str, typer.Option(help="The ROS 2 robot's namespace (with --ros2).")]
_Video = Annotated[
    str, typer.Option(help="The driving camera's codec: jpeg, vp8, vp9 or h264 (docs/video.md).")
]

# operator's own options
_RobotUrl = Annotated[
    str,
    typer.Option(
        "--robot",
        help="The robot's link: udp://HOST:PORT, serial:///dev/DEVICE[?baud=N], or "
        "zenoh://HOST:PORT/ROBOT[?mode=client] (the fleet on that bus, ROBOT driven first).",
    ),
]
_RobotConfig = Annotated[
    str, typer.Option("--robot-config", help="Robot description (name or TOML).")
]
_Map = Annotated[str | None, typer.Option(help="Map to show (name or file).")]
_Key = Annotated[str | None, typer.Option(help="Native key (else FREELOOK_LINK_KEY).")]
_Station = Annotated[
    int, typer.Option(help="This station's id (its key's entry in the robot's keys file).")
]
_RecordTo = Annotated[
    Path | None, typer.Option(help="Record to this file (default: runs/DATE-TIME.mcap).")
]


def sim(
    robot: _Robot = "pioneer3dx",
    world: _World = "lab",
    port: _Port = 8080,
    host: _Host = "127.0.0.1",
    certfile: _Certfile = None,
    keyfile: _Keyfile = None,
    record: _Record = None,
    no_record: _NoRecord = False,
    no_browser: _NoBrowser = False,
    seed: Seed = 0,
    start: _Start = None,
    foxglove: _Foxglove = None,
    robots: _Robots = 1,
    stations: _Stations = 1,
    zenoh: _Zenoh = "127.0.0.1:7447",
    exact_robot: _ExactRobot = False,
    ros2: _Ros2 = False,
    ros2_namespace: _Ros2Namespace = "",
    video: _Video = "jpeg",
    link_delay: LinkDelay = 0.0,
    link_jitter: LinkJitter = 0.0,
    link_loss: LinkLoss = 0.0,
) -> None:
    """Simulated robot + robot server + operator + browser cockpit, in one command."""
    from freelook.cli._fail import fail
    from freelook.cli._run import run_until_stopped
    from freelook.errors import FreelookError
    from freelook.hardware import compile_ahead
    from freelook.launch import SessionOptions, default_run_path, run_session
    from freelook.video import parse_codec

    config, the_world, start_pose = _sim_setup(robot, world, host, port, start)
    try:
        codec = parse_codec(video)
    except FreelookError as err:
        fail(err)
    path = None if no_record else (record or default_run_path())
    options = SessionOptions(
        host=host,
        port=port,
        record=path,
        open_browser=not no_browser,
        seed=seed,
        certfile=certfile,
        keyfile=keyfile,
        start=start_pose,
        foxglove=foxglove,
        error_model=not exact_robot,
        video=codec,
        shaping=link_shaping(link_delay, link_jitter, link_loss, seed),
    )
    if ros2:
        _ros2_ready()  # a missing extra is said before anything is compiled
    if robots == 1 and stations == 1:
        # a first run compiles in a child, so this process holds no compiler's memory
        compile_ahead(config, camera=True, notify=lambda line: typer.echo(line, err=True))
    if ros2:
        _ros2_sim(config, the_world, ros2_namespace, seed, start_pose, exact_robot)
        return
    try:
        if robots > 1 or stations > 1:
            run_until_stopped(_fleet(config, the_world, robots, stations, options, zenoh))
        else:
            run_until_stopped(
                run_session(config, the_world, options, announce=lambda line: typer.echo(line))
            )
    except (FreelookError, OSError) as err:  # TLS files, a port in use
        fail(err)
    typer.echo("freelook: stopped")


def _sim_setup(
    robot: str, world: str, host: str, port: int, start: str | None
) -> tuple[RobotConfig, World, tuple[float, float, float]]:
    """``sim``'s robot, world and start pose, checked (one line, exit code 2, if not)."""
    from freelook.cli._fail import fail
    from freelook.cli._world import parse_start
    from freelook.config import load_robot
    from freelook.errors import ConfigError, FreelookError
    from freelook.maps import choose_start, load_world

    try:
        if not 0 <= port <= 65535:  # before the first start's compilation
            raise ConfigError(f"cannot serve the cockpit on {host}:{port}: a port is 0–65535")
        config = load_robot(robot)
        the_world = load_world(world)
        return config, the_world, choose_start(the_world, config.footprint, parse_start(start))
    except FreelookError as err:
        fail(err)


def _ros2_ready() -> None:
    """ROS 2 can run here (the ros2 extra, or a sourced ROS 2), or one line and exit code 2."""
    from freelook.errors import FreelookError
    from freelook.hardware import check_backend

    try:
        check_backend("ros2")
    except FreelookError as err:
        typer.echo(str(err), err=True)
        raise typer.Exit(2) from None


def _ros2_sim(
    config: RobotConfig,
    world: World,
    namespace: str,
    seed: int,
    start: tuple[float, float, float],
    exact: bool,
) -> None:
    """``freelook sim --ros2``: the simulator published as a ROS 2 robot, until Ctrl-C; it
    differs from its description by its error model unless ``exact``."""
    from freelook.cli._run import run_until_stopped
    from freelook.config import physical_robot
    from freelook.errors import FreelookError
    from freelook.hardware.ros2 import parse_ros2_url, serve_simulated_ros2

    try:
        namespace = parse_ros2_url(f"ros2://{namespace}")
        run_until_stopped(
            serve_simulated_ros2(
                config,
                world,
                namespace,
                seed=seed,
                start=start,
                truth=None if exact else physical_robot(config, seed),
                announce=typer.echo,
            )
        )
    except FreelookError as err:
        typer.echo(str(err), err=True)
        raise typer.Exit(2) from None
    typer.echo("freelook: stopped")


def operator(
    robot_url: _RobotUrl,
    robot_config: _RobotConfig = "pioneer3dx",
    world: _Map = None,
    wire: Wire = "native",
    key: _Key = None,
    weak_key: WeakKey = False,
    station: _Station = 1,
    port: _Port = 8080,
    host: _Host = "127.0.0.1",
    certfile: _Certfile = None,
    keyfile: _Keyfile = None,
    record: _RecordTo = None,
    no_record: _NoRecord = False,
    no_browser: _NoBrowser = False,
    foxglove: _Foxglove = None,
    link_delay: LinkDelay = 0.0,
    link_jitter: LinkJitter = 0.0,
    link_loss: LinkLoss = 0.0,
) -> None:
    """The operator station and cockpit for a robot elsewhere (recorded to runs/ unless
    --no-record)."""
    from freelook.cli._fail import fail
    from freelook.cli._run import run_until_stopped
    from freelook.config import load_robot
    from freelook.errors import FreelookError
    from freelook.launch import SessionOptions, default_run_path, run_fleet_operator, run_operator
    from freelook.link import link_key, parse_transport_url
    from freelook.maps import load_world

    try:
        url = parse_transport_url(robot_url)
        config = load_robot(robot_config)
        the_world = load_world(world) if world else None
        secret = link_key(key, allow_weak=weak_key)
        if wire == "native" and secret is None:
            raise FreelookError("the native profile needs a key: --key or FREELOOK_LINK_KEY")
    except FreelookError as err:
        fail(err)
    options = SessionOptions(
        host=host,
        port=port,
        record=None if no_record else (record or default_run_path()),
        open_browser=not no_browser,
        wire=wire,
        key=secret,
        certfile=certfile,
        keyfile=keyfile,
        station=station,
        foxglove=foxglove,
        shaping=link_shaping(link_delay, link_jitter, link_loss, station),
    )
    try:
        run = run_fleet_operator if url.transport.shared_bus else run_operator
        run_until_stopped(
            run(config, the_world, url, options, announce=lambda line: typer.echo(line))
        )
    except (FreelookError, OSError) as err:  # the link, TLS files, the web port
        fail(err)


def _fleet(
    config: RobotConfig,
    world: World,
    robots: int,
    stations: int,
    options: SessionOptions,
    zenoh: str,
) -> Coroutine[Any, Any, None]:
    """``sim --robots N --stations M``: the fleet on the batched simulator, over Zenoh."""
    from freelook.errors import ConfigError
    from freelook.launch import run_fleet_session

    host, _, port = zenoh.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"--zenoh {zenoh!r}: expected HOST:PORT")
    return run_fleet_session(
        config,
        world,
        robots,
        stations,
        options,
        zenoh_address=(host, int(port)),
        announce=lambda line: typer.echo(line),
    )


def register(app: typer.Typer) -> None:
    """Add ``sim`` and ``operator`` to ``app``."""
    app.command("sim")(sim)
    app.command("operator")(operator)

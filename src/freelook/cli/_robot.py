"""``freelook robot``: run the robot program on a hardware backend and serve it on a link."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

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
    from freelook.robot import RobotServer, ServerOptions

__all__ = ["register"]

_RobotName = Annotated[
    str | None,
    typer.Option(
        "--robot",
        help="Robot name or TOML file (default: pioneer3dx; with --hardware ros2, a description "
        "of what the robot's topics show, as freelook ros2 describe writes it).",
    ),
]
_Hardware = Annotated[
    str,
    typer.Option(
        help="sim, arcos://HOST:PORT (MobileSim: 8101), arcos:///dev/ttyUSB0, "
        "judp://HOST:PORT (a JAUS robot; 3794) or ros2[://NAMESPACE] (a ROS 2 robot's "
        "standard topics; docs/ros2.md)."
    ),
]
_World = Annotated[str, typer.Option(help="The simulated world (with --hardware sim).")]
_Map = Annotated[
    str | None,
    typer.Option(
        "--map",
        help="Map file or built-in world the robot localizes in and keeps clear of "
        "(default with sim: the world's own map file; 'none': range sensors only; "
        "with --hardware ros2, ros:TOPIC takes the robot's own map from a topic, e.g. ros:/map).",
    ),
]
_Listen = Annotated[
    str,
    typer.Option(
        help="udp://HOST:PORT, serial:///dev/…?baud=N or zenoh://HOST:PORT/NAME[?mode=client]; "
        "the default is loopback only: udp://0.0.0.0:47001 for operators on other machines."
    ),
]
_Key = Annotated[str | None, typer.Option(help="Native link key (else FREELOOK_LINK_KEY).")]
_Insecure = Annotated[
    bool,
    typer.Option(
        "--insecure",
        help="Native profile without authentication, for tools on this machine: no freelook "
        "operator speaks it (an open link is --wire thesis on both ends; docs/security.md).",
    ),
]
_Keys = Annotated[
    Path | None,
    typer.Option(help="Station keys file (TOML): each station's key and permissions."),
]
_Peer = Annotated[
    str | None,
    typer.Option(help="HOST:PORT of the operator: answer and hear nobody else (UDP)."),
]
_Start = Annotated[
    str | None,
    typer.Option(
        help="Start pose X,Y,THETA (m, m, degrees) on the map; default: the map's start "
        "(RobotHome), else the free place nearest its origin."
    ),
]
_Video = Annotated[
    str,
    typer.Option(
        help="The driving camera's codec: vp9 (the default), vp8 or h264 (inter-frame, its "
        "bitrate set from the link's budget and the operator's loss; docs/video.md), or jpeg."
    ),
]
_Camera = Annotated[
    str | None,
    typer.Option(
        help="The driving camera read with PyAV instead of the backend's: "
        "file:///PATH (a clip, looped), v4l2:///dev/video0 (USB) or rtsp://HOST/PATH."
    ),
]
_LinkRate = Annotated[
    str | None,
    typer.Option(
        help="Bit/s a UDP link or a relay's carries (e.g. 250k, 2M: a radio behind an IP "
        "bridge, an LTE uplink); video fits in what telemetry leaves. A serial radio's comes "
        "from its baud."
    ),
]
_CommandMaxAge = Annotated[
    float | None,
    typer.Option(
        min=0.05,
        max=10.0,
        help="S a motion command that carries no expiry of its own (the thesis profile's) may "
        "be old when it arrives and still act, measured from its sender's stamp; older ones are "
        "refused and counted (native sessions' commands carry their expiry; docs/protocol.md).",
    ),
]
_ExactRobot = Annotated[
    bool,
    typer.Option(
        "--exact-robot",
        help="With sim: simulate the robot exactly as its description says (a demo); by "
        "default it differs by its error model (config/errors/ROBOT.toml), as a real robot "
        "would.",
    ),
]

#: s from listening until LLVM's pages are handed back (its loops loaded from numba's cache)
_LOADED_AFTER = 5.0


def robot(
    robot_name: _RobotName = None,
    hardware: _Hardware = "sim",
    world: _World = "lab",
    robot_map: _Map = None,
    listen: _Listen = "udp://127.0.0.1:47001",
    wire: Wire = "native",
    key: _Key = None,
    insecure: _Insecure = False,
    weak_key: WeakKey = False,
    seed: Seed = 0,
    keys: _Keys = None,
    peer: _Peer = None,
    start: _Start = None,
    video: _Video = "vp9",
    camera: _Camera = None,
    link_rate: _LinkRate = None,
    command_max_age: _CommandMaxAge = None,
    link_delay: LinkDelay = 0.0,
    link_jitter: LinkJitter = 0.0,
    link_loss: LinkLoss = 0.0,
    exact_robot: _ExactRobot = False,
) -> None:
    """Run the robot program on a hardware backend and serve it (Ctrl-C stops it).

    Over 80 lines: the command's 22 options, one a line, before its run."""
    import dataclasses
    import logging

    from freelook.cli._fail import fail
    from freelook.cli._run import run_until_stopped
    from freelook.cli._world import parse_start
    from freelook.config import load_robot
    from freelook.errors import FreelookError
    from freelook.hardware import backend_for, check_backend, compile_ahead, open_robot_server
    from freelook.link import parse_transport_url
    from freelook.video import RATE_LOG, parse_codec, parse_rate

    if wire not in ("thesis", "native"):
        typer.echo(f"unknown wire profile {wire!r} (thesis or native)", err=True)
        raise typer.Exit(2)
    # the server's warnings (refused stations, video off) on stderr, with the time
    logging.basicConfig(format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    # and each change of an inter-frame stream's bitrate, size and frame rate
    logging.getLogger(RATE_LOG).setLevel(logging.INFO)
    # and, through a relay with ?direct, each change of the path a station's link takes
    logging.getLogger("freelook.link._direct_zenoh").setLevel(logging.INFO)

    async def serve() -> None:
        try:
            parse_transport_url(listen)  # a bad address fails before anything starts
            _check_camera(camera)
            backend = backend_for(hardware)
            if robot_name is None and backend is not None and backend.describe is not None:
                check_backend(hardware)  # a missing extra is said before anything is watched
                config, hardware_url = await backend.describe(hardware, typer.echo)
            else:
                config, hardware_url = load_robot(robot_name or "pioneer3dx"), hardware
            options = dataclasses.replace(
                _server_options(listen, wire, key, insecure, weak_key, keys, peer),
                video=parse_codec(video),
                link_rate=parse_rate(link_rate) if link_rate is not None else None,
                camera_url=camera,
                command_max_age=command_max_age,
                shaping=link_shaping(link_delay, link_jitter, link_loss, seed),
            )
            start_pose = parse_start(start)
            check_backend(hardware_url)  # a missing extra is said before anything is compiled
            # a first run compiles in a child, so this process holds no compiler's memory
            compile_ahead(
                config,
                camera=options.camera and backend is not None and backend.renders_camera,
                notify=lambda line: typer.echo(line, err=True),
            )
            server, description = await open_robot_server(
                config,
                hardware_url,
                options,
                world=world,
                robot_map=robot_map,
                seed=seed,
                start=start_pose,
                exact=exact_robot,
            )
        except FreelookError as err:
            fail(err)
        await _run(server, config, description, options)

    _steady_malloc()
    if run_until_stopped(serve()):
        typer.echo("freelook: stopped")


def _steady_malloc() -> None:
    """glibc's malloc as a long-running robot wants it: two arenas for its threads (the
    encoder's and the camera's share one) and blocks of 128 KiB and more mapped and unmapped
    on their own (by default that limit rises with the largest block freed, and a camera's
    frames then stay in the arenas): 4 MB of RSS. Nothing where the C library is not glibc."""
    from freelook.runtime import M_ARENA_MAX, M_MMAP_THRESHOLD, mallopt

    mallopt((M_ARENA_MAX, 2), (M_MMAP_THRESHOLD, 128 * 1024))


def _check_camera(camera: str | None) -> None:
    """A ``--camera`` URL that can be opened (a clip that is there)."""
    from freelook.errors import FreelookError
    from freelook.video import parse_camera_url

    if camera is None:
        return
    scheme, target, _, _ = parse_camera_url(camera)
    if scheme == "file" and not Path(target).is_file():
        raise FreelookError(f"--camera {camera!r}: no such file")


def _server_options(
    listen: str,
    wire: str,
    key: str | None,
    insecure: bool,
    weak_key: bool,
    keys: Path | None,
    peer: str | None,
) -> ServerOptions:
    """The link the robot serves on: its wire profile and the keys that profile needs."""
    from freelook.errors import FreelookError
    from freelook.link import KeyRing, link_key
    from freelook.robot import ServerOptions

    secret = link_key(key, allow_weak=weak_key)
    ring = KeyRing.load(keys, allow_weak=weak_key) if keys is not None else None
    if wire == "native" and secret is None and ring is None and not insecure:
        raise FreelookError(
            "the native profile needs keys: --keys FILE, --key, FREELOOK_LINK_KEY, or --insecure"
        )
    return ServerOptions(
        listen=listen,
        wire=wire,
        key=secret,
        allow_unauthenticated=insecure,
        peer=_address(peer) if peer else None,
        keys=ring,
    )


async def _run(
    server: RobotServer, config: RobotConfig, description: str, options: ServerOptions
) -> None:
    """Serve until stopped, announcing the link once it listens (one line, exit code 2, if it
    cannot start), and handing back LLVM's pages once the robot's loops are loaded."""
    import asyncio

    from freelook.cli._fail import fail
    from freelook.errors import FreelookError
    from freelook.hardware import release_compiler_pages

    running = asyncio.create_task(server.run())
    ready = asyncio.create_task(server.ready.wait())
    await asyncio.wait((running, ready), return_when=asyncio.FIRST_COMPLETED)
    if running.done():  # it could not start (a port in use, a serial device missing)
        ready.cancel()
        try:
            running.result()
        except (FreelookError, OSError) as err:
            fail(err)
        return
    # announced once it listens: a packet sent on seeing this line is heard
    where = options.listen
    if server.local_address is not None:
        where = f"udp://{server.local_address[0]}:{server.local_address[1]}"
    typer.echo(f"robot {config.name} on {description}: {options.wire} profile on {where}")
    beyond = _beyond_loopback(where)
    if beyond is not None:
        typer.echo(
            "  on loopback only: no operator on another machine reaches it; "
            f"--listen {beyond} listens on every interface"
        )
    if options.wire == "thesis" or options.allow_unauthenticated:
        typer.echo(
            "  warning: this link is not authenticated: anyone who can send to it can "
            "drive the robot. Use it only on a trusted radio"
            + ("" if options.peer else ", or pin the operator with --peer HOST:PORT"),
            err=True,
        )
    for line in server.program.core.unavailable():
        typer.echo(f"  {line}")
    # by then its first cycles and first camera frames have loaded every loop it runs
    asyncio.get_running_loop().call_later(_LOADED_AFTER, release_compiler_pages)
    await running


def _beyond_loopback(listen: str) -> str | None:
    """The ``--listen`` URL that serves ``listen``'s port on every interface, when ``listen``
    is on loopback alone (UDP, or a Zenoh peer); None when it reaches beyond (or is a serial
    line, or a Zenoh client, which connects out)."""
    import ipaddress

    from freelook.link import parse_transport_url

    url = parse_transport_url(listen)
    if not url.host or url.mode == "client":  # a serial line, a router's client
        return None
    try:
        loopback = ipaddress.ip_address(url.host).is_loopback
    except ValueError:  # a host name
        loopback = url.host == "localhost"
    if not loopback:
        return None
    return f"{url.scheme}://0.0.0.0:{url.port}" + (f"/{url.robot}" if url.robot else "")


def _address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` as an address; a clear error otherwise."""
    from freelook.errors import ConfigError

    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"--peer {text!r}: expected HOST:PORT")
    return host, int(port)


def register(app: typer.Typer) -> None:
    """Add the ``robot`` command to ``app``."""
    app.command("robot")(robot)

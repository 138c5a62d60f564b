"""The two-machine command lines of README.md and docs/*.md, taken from the docs as written.

A small parser reads every fenced ``bash`` block and its ``freelook`` lines. Every line is
checked: a ``freelook robot`` line says where it listens, and on UDP or as a Zenoh peer that
is every interface (``0.0.0.0``), since the default is loopback alone and an operator on
another machine never reaches it; no robot line is ``--insecure`` (``freelook operator``
always signs, and such a robot refuses every signed packet); an operator's, a gateway's or a
fleet list's robot is on another host, at a port a robot line of its block listens on.

Some of them also run, as a user runs them, on two loopback addresses: the robot's machine is
127.0.0.2 (``ROBOT_HOST``, and ``0.0.0.0`` in ``--listen``: the tests listen on loopback only,
never on this machine's network), the operator's is this machine's default source. Linux routes
all of 127.0.0.0/8 to ``lo``, but a socket connected to 127.0.0.2 leaves from 127.0.0.1, and
``freelook operator`` has no option naming its own address, so the operator connects from
127.0.0.1; what is tested is that a robot listening as the docs say is reached at an address
that is not 127.0.0.1, and that a robot started without ``--listen`` is not. ``$SECRET`` is
what the README's ``export SECRET=…`` line makes, run in bash. The operator gets
``--no-browser --no-record --port 0`` (headless, nothing written to runs/, any free web port);
its session opens and telemetry reaches its cockpit's WebSocket. The lines that run:

- README: the robot side alone (``--hardware sim``) and its cockpit; the same robot line
  without ``--listen``, which the operator's cockpit never reaches;
- README: the Pioneer over ARCOS (``arcos://127.0.0.1:8101``), the tests' emulated Pioneer at
  a port of its own in place of MobileSim's 8101;
- docs/ros2.md: the simulator as a ROS 2 robot, the robot program on it over DDS
  (``--hardware ros2``) and its cockpit, all three lines of the recipe.

The real-hardware lines (a serial Pioneer, a JAUS robot, a ROS 2 robot, a USB camera) are
checked only by the parser.
"""

from __future__ import annotations

import asyncio
import dataclasses
import ipaddress
import json
import re
import shlex
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import websockets

from cli_processes import read_until, start_cli, stop
from dds_domains import next_domain
from freelook.link import parse_transport_url

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
ROBOT_MACHINE = "127.0.0.2"  # the robot's machine: ROBOT_HOST, and 0.0.0.0 in --listen
HEADLESS = ("--no-browser", "--no-record", "--port", "0")  # added to each operator line
ANNOUNCED_URL = re.compile(r"open (https?://\S+)")
OPENS = 30.0  # s: a bound for a session and its first telemetry, not a timing
#: the per-test bound: a first start compiles the robot program's loops (FIRST_START)
TEST_TIMEOUT = 720


@dataclasses.dataclass(frozen=True)
class Line:
    """One ``freelook`` command line of a fenced bash block: ``freelook COMMAND ARGS``."""

    where: str  # FILE:LINE
    text: str
    command: str  # robot, operator, jaus, fleet list, sim, …
    args: tuple[str, ...]

    def option(self, name: str) -> str | None:
        args = self.args
        return next((args[i + 1] for i in range(len(args) - 1) if args[i] == name), None)

    def without(self, name: str) -> Line:
        """This line with option ``name`` and its value left out."""
        at = self.args.index(name)
        return dataclasses.replace(self, args=self.args[:at] + self.args[at + 2 :])


def bash_blocks(path: Path) -> Iterator[list[tuple[int, str]]]:
    """The fenced ``bash`` blocks of a markdown file, each its (line number, text) pairs."""
    block: list[tuple[int, str]] | None = None
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        fence = text.strip()
        if block is None and fence in ("```bash", "```sh", "```shell"):
            block = []
        elif block is not None and fence == "```":
            yield block
            block = None
        elif block is not None:
            block.append((number, text))


def freelook_lines(path: Path, block: list[tuple[int, str]]) -> list[Line]:
    """The block's ``freelook`` lines (``.venv/bin/freelook`` or ``freelook``, after any
    ``VAR=value`` assignments), as the shell splits them, comments left out."""
    lines = []
    for number, text in block:
        words = shlex.split(text, comments=True)
        while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
            words.pop(0)
        if len(words) < 2 or Path(words[0]).name != "freelook":
            continue
        command, args = words[1], words[2:]
        if command in ("fleet", "keys", "link", "record", "config", "world") and args:
            command, args = f"{command} {args[0]}", args[1:]
        lines.append(Line(f"{path.relative_to(ROOT)}:{number}", text, command, tuple(args)))
    return lines


def all_blocks() -> list[list[Line]]:
    return [
        lines
        for path in DOCS
        for block in bash_blocks(path)
        if (lines := freelook_lines(path, block))
    ]


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name, such as ROBOT_HOST
        return host == "localhost"


def _listen_problem(line: Line) -> str | None:
    listen = line.option("--listen")
    if listen is None:
        return "no --listen: the robot listens on loopback alone"
    url = parse_transport_url(listen)
    if url.scheme == "serial" or (url.scheme == "zenoh" and url.mode == "client"):
        return None  # a radio, or a router's client: nobody connects to a host of its own
    if url.host not in ("0.0.0.0", "::"):
        return f"--listen {listen}: not every interface, so no operator elsewhere reaches it"
    return None


def _robot_url(line: Line) -> str | None:
    """The robot an operator, a JAUS gateway or a fleet list reaches."""
    if line.command == "fleet list":
        return line.args[0] if line.args else None
    return line.option("--robot")


def test_every_two_machine_line_in_the_docs_can_be_reached_from_another_machine() -> None:
    blocks = all_blocks()
    robots = [line for lines in blocks for line in lines if line.command == "robot"]
    assert len(robots) >= 15, [line.where for line in robots]  # the parser found the docs' lines
    problems = []
    for lines in blocks:
        ports = set()
        for line in lines:
            if line.command != "robot":
                continue
            if (problem := _listen_problem(line)) is not None:
                problems.append(f"{line.where}: {problem}")
            if "--insecure" in line.args:
                problems.append(f"{line.where}: --insecure, which no freelook operator speaks")
            if (listen := line.option("--listen")) is not None:
                ports.add(parse_transport_url(listen).port)
        for line in lines:
            if line.command not in ("operator", "jaus", "fleet list"):
                continue
            text = _robot_url(line)
            assert text is not None, line.where
            url = parse_transport_url(text)
            if url.scheme == "serial":
                continue
            if _loopback(url.host):
                problems.append(f"{line.where}: {text} is on this machine, not the robot's")
            if ports and url.port not in ports:
                problems.append(f"{line.where}: {text}: no robot line here listens on that port")
    assert not problems, "\n".join(problems)


def test_the_readme_makes_the_secret_its_lines_use() -> None:
    assert len(readme_secret()) == 64  # 256 bits, in hex: a key, not a passphrase


@pytest.mark.parametrize(
    ("listen", "hint"),
    [
        ("udp://127.0.0.1:47001", "udp://0.0.0.0:47001"),
        ("udp://127.0.0.2:5005", "udp://0.0.0.0:5005"),
        ("udp://[::1]:47001", "udp://0.0.0.0:47001"),
        ("zenoh://localhost:7447/scout-1", "zenoh://0.0.0.0:7447/scout-1"),
        ("udp://0.0.0.0:47001", None),
        ("udp://10.0.0.5:47001", None),
        ("zenoh://127.0.0.1:7447/scout-1?mode=client", None),  # a router's client connects out
        ("serial:///dev/ttyUSB0?baud=115200", None),
    ],
)
def test_a_robot_on_loopback_alone_is_told_how_to_listen_beyond_it(
    listen: str, hint: str | None
) -> None:
    from freelook.cli._robot import _beyond_loopback  # what its start line is followed by

    assert _beyond_loopback(listen) == hint


def readme_secret() -> str:
    """What the README's ``export SECRET=…`` line makes, run in bash as a user runs it (with
    this interpreter for ``.venv/bin/python``)."""
    made = [
        text
        for block in bash_blocks(ROOT / "README.md")
        for _, text in block
        if text.startswith("export SECRET=")
    ]
    assert len(made) == 1, made
    script = made[0].replace(".venv/bin/python", shlex.quote(sys.executable))
    result = subprocess.run(
        ["bash", "-c", f'{script}\nprintf %s "$SECRET"'],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    secret = result.stdout.strip()
    assert re.fullmatch(r"[0-9a-f]+", secret), result
    return secret


def find(path: str, wanted: Callable[[Line], bool]) -> tuple[Line, list[Line]]:
    """The one line of ``path`` that is ``wanted``, with its block's lines."""
    found = [
        (line, lines)
        for lines in all_blocks()
        for line in lines
        if line.where.startswith(f"{path}:") and wanted(line)
    ]
    assert len(found) == 1, [line.where for line, _ in found]
    return found[0]


def as_run(line: Line, secret: str, elsewhere: tuple[str, str] | None = None) -> list[str]:
    """``freelook``'s arguments for ``line`` on this machine: ROBOT_HOST and the listening
    wildcard are the robot's loopback address, ``$SECRET`` the key, and ``elsewhere`` (OLD,
    NEW) puts what the line reaches at OLD at NEW instead."""
    args = []
    for i, word in enumerate(line.args):
        word = word.replace("$SECRET", secret).replace("ROBOT_HOST", ROBOT_MACHINE)
        if i > 0 and line.args[i - 1] == "--listen":
            word = word.replace("0.0.0.0", ROBOT_MACHINE)
        if elsewhere is not None:
            word = word.replace(*elsewhere)
        args.append(word)
    assert "0.0.0.0" not in " ".join(args), args  # loopback only
    return [*line.command.split(), *args, *(HEADLESS if line.command == "operator" else ())]


@asynccontextmanager
async def started(
    args: list[str], ready: Callable[[str], bool]
) -> AsyncIterator[tuple[asyncio.subprocess.Process, list[str]]]:
    """``freelook ARGS`` until it is ``ready``, stopped (SIGTERM to its pid) after."""
    process, lines = await start_cli(*args, ready=ready)
    try:
        yield process, lines
    finally:
        await stop(process)


def serving(line: str) -> bool:
    """A robot's start line: it listens."""
    return "profile on" in line


def cockpit_served(line: str) -> bool:
    """An operator's start line: its cockpit's URL."""
    return ANNOUNCED_URL.search(line) is not None


async def cockpit_telemetry(url: str) -> dict[str, Any]:
    """The first state the operator's cockpit sends with its session open and the robot's
    pose from telemetry in it, read from its WebSocket as the page reads it."""
    found = re.fullmatch(r"http://127\.0\.0\.1:(\d+)/\?token=(\S+)", url)
    assert found is not None, url
    port, token = found.groups()
    async with websockets.connect(
        f"ws://127.0.0.1:{port}/ws?token={token}",
        additional_headers={"Origin": f"http://127.0.0.1:{port}"},
        max_size=None,
    ) as ws:
        last: dict[str, Any] = {}
        try:
            async with asyncio.timeout(OPENS):
                async for frame in ws:
                    if not (isinstance(frame, bytes) and frame[:1] == b"\x01"):
                        continue
                    message = json.loads(frame[1:])
                    if message.get("type") != "state":
                        continue
                    last = message
                    if message["link"]["session"] == "open" and "pose" in message:
                        return message
        except TimeoutError:
            pass
    raise AssertionError(f"no telemetry in the cockpit within {OPENS:g} s; last state: {last}")


async def operator_sees_the_robot(operator_line: Line, secret: str) -> None:
    """The operator's line runs, its session with the robot opens and telemetry comes."""
    async with started(as_run(operator_line, secret), cockpit_served) as (_, lines):
        found = ANNOUNCED_URL.search(lines[-1])
        assert found is not None
        state = await cockpit_telemetry(found.group(1))
        assert state["link"]["connected"], state
        assert state["rates"]["telemetry_hz"] > 0, state


def readme_operator() -> Line:
    """The README's cockpit for a robot elsewhere, with the one-station key."""
    line, _ = find(
        "README.md",
        lambda line: (
            line.command == "operator"
            and line.option("--robot") == "udp://ROBOT_HOST:47001"
            and "--station" not in line.args
        ),
    )
    return line


@pytest.mark.timeout(TEST_TIMEOUT)
def test_the_readme_robot_alone_is_reached_from_another_address_and_not_without_listen() -> None:
    secret = readme_secret()
    robot_line, _ = find("README.md", lambda line: "# robot side alone" in line.text)
    operator_line = readme_operator()

    async def run() -> None:
        async with started(as_run(robot_line, secret), serving) as (_, lines):
            assert f"profile on udp://{ROBOT_MACHINE}:47001" in lines[-1], lines
            await operator_sees_the_robot(operator_line, secret)
        # the same line without --listen: on loopback alone, and it says so
        alone = robot_line.without("--listen")
        async with started(as_run(alone, secret), serving) as (robot, lines):
            assert "profile on udp://127.0.0.1:47001" in lines[-1], lines
            await read_until(robot, lines, lambda line: "loopback" in line, 10.0, "the hint")
            assert lines[-1].strip() == (
                "on loopback only: no operator on another machine reaches it; "
                "--listen udp://0.0.0.0:47001 listens on every interface"
            )
            async with started(as_run(operator_line, secret), cockpit_served) as (operator, said):
                await read_until(
                    operator,
                    said,
                    lambda line: "no answer to session request" in line,
                    OPENS,
                    "the operator to find no robot",
                )
                assert f"the robot at udp://{ROBOT_MACHINE}:47001" in said[-1], said

    asyncio.run(run())


@pytest.mark.timeout(TEST_TIMEOUT)
def test_the_readme_pioneer_over_arcos_is_reached_from_another_address() -> None:
    # tests/hardware/arcos/, as a namespace package of tests/ (which is on sys.path)
    from hardware.arcos.arcos_emulator import ArcosEmulator, TcpRobot

    secret = readme_secret()
    robot_line, _ = find(
        "README.md", lambda line: line.option("--hardware") == "arcos://127.0.0.1:8101"
    )
    operator_line = readme_operator()

    async def run() -> None:
        pioneer = TcpRobot(ArcosEmulator())  # MobileSim's part, on a port of its own
        await pioneer.start()
        try:
            args = as_run(robot_line, secret, ("127.0.0.1:8101", f"127.0.0.1:{pioneer.port}"))
            async with started(args, serving) as (_, lines):
                assert "Emulated Pioneer" in lines[-1], lines  # the robot it drives
                assert f"profile on udp://{ROBOT_MACHINE}:47001" in lines[-1], lines
                await operator_sees_the_robot(operator_line, secret)
        finally:
            await pioneer.stop()

    asyncio.run(run())


@pytest.mark.timeout(TEST_TIMEOUT)
def test_the_ros2_simulator_recipe_runs_end_to_end(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("rclpy")  # the ros2 extra (tools/test.sh installs it)
    # a DDS domain of this test's own, discovery kept on this machine (as tests/hardware/ros2)
    monkeypatch.setenv("ROS_DOMAIN_ID", str(next_domain()))
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    secret = readme_secret()
    sim_line, recipe = find("docs/ros2.md", lambda line: line.command == "sim")
    assert [line.command for line in recipe] == ["sim", "robot", "operator"]
    _, robot_line, operator_line = recipe

    async def run() -> None:
        async with (
            started(as_run(sim_line, secret), lambda line: "on ROS 2" in line),
            started(as_run(robot_line, secret), serving) as (_, lines),
        ):
            assert "on a ROS 2 robot" in lines[-1], lines
            assert f"profile on udp://{ROBOT_MACHINE}:47001" in lines[-1], lines
            await operator_sees_the_robot(operator_line, secret)

    asyncio.run(run())

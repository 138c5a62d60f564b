"""Errors a user meets first, as the real commands give them: a port in use or out of range, a
bad robot file, millimetres typed for metres, a bus with nobody on it. Each is one line naming
what is wrong (the address, the field, the unit), exit code 2, no traceback, nothing left
behind (no recording in runs/)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from freelook.cli import app
from keys_for_tests import KEY_A

FREELOOK = [sys.executable, "-m", "freelook.cli"]
COMPILING = "compiling the robot program"  # a first start's notice, not an error


def _run(args: list[str], cwd: Path, timeout: float = 180.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*FREELOOK, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "FREELOOK_LINK_KEY": KEY_A},
    )


def _one_line(stderr: str) -> str:
    """The one line of an error (a first start's compile notice aside), with no traceback."""
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line and not line.startswith(COMPILING)]
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.fixture
def held_udp() -> Iterator[int]:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


@pytest.fixture
def held_tcp() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def test_a_robot_on_a_port_in_use_says_which(tmp_path: Path, held_udp: int) -> None:
    done = _run(["robot", "--world", "square", "--listen", f"udp://127.0.0.1:{held_udp}"], tmp_path)
    assert done.returncode == 2, done.stderr
    line = _one_line(done.stderr)
    assert f"udp://127.0.0.1:{held_udp}" in line
    assert "in use" in line


def _free_tcp_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("command", ["sim", "operator", "fleet"])
def test_a_cockpit_on_a_port_in_use_says_which_and_records_nothing(
    tmp_path: Path, held_tcp: int, command: str
) -> None:
    args = {
        "sim": ["sim", "--world", "square"],
        "operator": ["operator", "--robot", "udp://127.0.0.1:9"],
        "fleet": [
            *("sim", "--world", "square", "--robots", "2", "--stations", "2"),
            *("--zenoh", f"127.0.0.1:{_free_tcp_port()}"),
        ],
    }[command]
    done = _run([*args, "--no-browser", "--port", str(held_tcp)], tmp_path)
    assert done.returncode == 2, done.stderr
    line = _one_line(done.stderr)
    assert f"127.0.0.1:{held_tcp}" in line
    assert "--port" in line  # the way out
    assert not (tmp_path / "runs").exists()  # no junk recording
    assert list(tmp_path.iterdir()) == []


def test_a_foxglove_port_in_use_says_which_and_records_nothing(
    tmp_path: Path, held_tcp: int
) -> None:
    args = ["operator", "--robot", "udp://127.0.0.1:9", "--port", "0", "--no-browser"]
    done = _run([*args, "--foxglove", str(held_tcp)], tmp_path)
    assert done.returncode == 2, done.stderr
    line = _one_line(done.stderr)
    assert f"127.0.0.1:{held_tcp}" in line
    assert "--foxglove" in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "address"),
    [
        (["sim", "--port", "99999"], "127.0.0.1:99999"),
        (["operator", "--robot", "udp://127.0.0.1:9", "--port", "99999"], "127.0.0.1:99999"),
        (["operator", "--robot", "udp://127.0.0.1:99999"], "udp://127.0.0.1:99999"),
        (["operator", "--robot", "udp://127.0.0.1:9", "--foxglove", "99999"], "127.0.0.1:99999"),
        (["robot", "--listen", "udp://127.0.0.1:99999"], "udp://127.0.0.1:99999"),
        (["robot", "--listen", "udp://127.0.0.1:port"], "udp://127.0.0.1:port"),
        (["jaus", "--robot", "udp://127.0.0.1:9", "--port", "99999"], "udp://127.0.0.1:99999"),
    ],
)
def test_ports_out_of_range_are_one_line(tmp_path: Path, args: list[str], address: str) -> None:
    done = _run([*args, "--no-browser"] if args[0] in ("sim", "operator") else args, tmp_path)
    assert done.returncode == 2, done.stderr
    assert address in _one_line(done.stderr)
    assert list(tmp_path.iterdir()) == []


def test_sim_with_a_bad_robot_file_names_each_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "bad"\n[drive]\nkind = "tracked"\ntrack_width = -1\n')
    done = _run(["sim", "--robot", str(bad), "--no-browser"], tmp_path)
    checked = CliRunner().invoke(app, ["config", "check", str(bad)])
    assert done.returncode == 2 == checked.exit_code
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert any(line.startswith(f"{bad}: drive.track_width: ") for line in lines)
    assert any(line.endswith("(got -1)") for line in lines)
    assert f"{bad}: footprint: missing required field" in lines
    assert lines == checked.output.splitlines()  # what config check says, field by field
    assert not (tmp_path / "runs").exists()


HAND = {
    "--resolution": "2160",
    "--fov": "94",
    "--ipd": "0.064",
    "--screen-distance": "3",
    "--screen-width": "4",
    "--camera-width": "1280",
}


def _hit(**changed: str) -> tuple[int, str]:
    args = {**HAND, **{f"--{k.replace('_', '-')}": v for k, v in changed.items()}}
    result = CliRunner().invoke(app, ["hit", *(x for pair in args.items() for x in pair)])
    return result.exit_code, result.output


def test_hit_refuses_millimetres_typed_for_metres() -> None:
    code, output = _hit(ipd="64")
    assert code == 2
    assert output.strip() == (
        "error: --ipd 64: expected a person's interpupillary distance in m, 0.045 to 0.085 m; "
        "64 looks like millimetres (0.064 m)"
    )


@pytest.mark.parametrize(
    ("option", "value", "unit"),
    [
        ("resolution", "100", "px"),  # a headset is wider than that
        ("resolution", "100000", "px"),
        ("fov", "1.6", "radians (92 degrees)"),  # radians typed for degrees
        ("fov", "175", "degrees"),
        ("ipd", "6.4", "centimetres (0.064 m)"),
        ("ipd", "0.2", "m"),
        ("screen_distance", "300", "millimetres (0.3 m) or centimetres (3 m)"),
        ("screen_width", "400", "m"),
        ("camera_width", "4", "px"),
        ("camera_width", "1e6", "px"),
    ],
)
def test_hit_checks_every_argument_against_human_ranges(option: str, value: str, unit: str) -> None:
    code, output = _hit(**{option: value})
    assert code == 2, output
    assert output.startswith(f"error: --{option.replace('_', '-')} ")
    assert unit in output
    assert len(output.strip().splitlines()) == 1


def test_every_hit_argument_has_a_range_and_the_ranges_hold_real_headsets() -> None:
    from freelook.cli._hit import HUMAN_RANGES

    assert set(HUMAN_RANGES) == set(HAND)
    for headset in (
        {"resolution": "2160", "fov": "94", "ipd": "0.058"},  # a Quest 2, a narrow IPD
        {"resolution": "4128", "fov": "110", "ipd": "0.072"},  # a Quest 3, a wide IPD
        {"resolution": "7680", "fov": "138", "ipd": "0.064", "screen_distance": "0.5"},
    ):
        code, output = _hit(**headset)
        assert code == 0, output


def test_fleet_list_refuses_a_udp_address() -> None:
    result = CliRunner().invoke(app, ["fleet", "list", "udp://127.0.0.1:47001"])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith("udp://127.0.0.1:47001: fleet list asks a Zenoh bus")


def test_fleet_list_with_nobody_there_says_so(held_tcp: int) -> None:
    # a port that is held by a plain socket: no Zenoh peer or router answers there
    url = f"zenoh://127.0.0.1:{held_tcp}/any"
    result = CliRunner().invoke(app, ["fleet", "list", url, "--timeout", "0.5"])
    assert result.exit_code == 1, result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith(f"no robot answered on zenoh://127.0.0.1:{held_tcp} within 0.5 s")


def test_a_weak_key_on_the_command_line_is_refused_in_one_line_unless_accepted(
    tmp_path: Path,
) -> None:
    refused = _run(["robot", "--world", "square", "--key", "robot"], tmp_path)
    assert refused.returncode == 2
    line = _one_line(refused.stderr)
    assert re.search(r"--key has at most \d+ bits of entropy, 128 needed", line)
    assert "freelook keys new" in line


@pytest.mark.parametrize("command", ["robot", "sim"])
@pytest.mark.parametrize("seed", ["-1", str(2**32)])
def test_a_seed_the_simulator_cannot_take_is_a_usage_error_not_a_traceback(
    command: str, seed: str
) -> None:
    result = CliRunner().invoke(app, [command, "--seed", seed])
    assert result.exit_code == 2
    assert "Invalid value for '--seed'" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    "args", [["--robots", "0"], ["--robots", "-2"], ["--stations", "-1"], ["--stations", "0"]]
)
def test_a_fleet_of_nothing_is_a_usage_error(args: list[str]) -> None:
    result = CliRunner().invoke(app, ["sim", *args])
    assert result.exit_code == 2
    assert f"Invalid value for '{args[0]}'" in result.output

"""Every constant of the shipped error models says where it comes from, on its own line."""

from __future__ import annotations

import re
import tomllib
from importlib import resources

import pytest

from freelook.config import builtin_error_models

#: keys that describe the file rather than the robot
_NOT_CONSTANTS = {"robot", "sources", "name", "source"}


def _constants(text: str) -> dict[str, str]:
    """Each constant's TOML path and its line's comment ("" when it has none)."""
    found: dict[str, str] = {}
    section = ""
    for line in text.splitlines():
        header = re.match(r"^\[(\w+)\]\s*$", line)
        if header:
            section = header.group(1)
            continue
        key = re.match(r"^(\w+)\s*=([^#]*)(#(.*))?$", line)
        if key and key.group(1) not in _NOT_CONSTANTS:
            path = f"{section}.{key.group(1)}" if section else key.group(1)
            found[path] = (key.group(4) or "").strip()
    return found


def _leaf_keys(text: str) -> set[str]:
    data = tomllib.loads(text)
    keys = set()
    for name, value in data.items():
        if isinstance(value, dict) and not {"mean"} <= set(value):
            keys |= {f"{name}.{k}" for k in value}
        elif name not in _NOT_CONSTANTS:
            keys.add(name)
    return keys


def _unsourced(text: str) -> list[str]:
    """The constants of ``text`` whose line names no source (a comment of a few words)."""
    constants = _constants(text)
    missing = sorted(_leaf_keys(text) - set(constants))  # a value spread over lines
    return missing + [k for k, note in constants.items() if len(note.split()) < 3]


def _text(name: str) -> str:
    return (resources.files("freelook.config.errors") / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("robot", builtin_error_models())
def test_every_constant_of_a_shipped_error_model_names_its_source(robot: str) -> None:
    text = _text(f"{robot}.toml")
    assert _constants(text)  # the check reads the file's constants at all
    assert _unsourced(text) == []


def test_the_measurement_files_constants_name_their_source_too() -> None:
    text = _text("measurements/foi-ugv.toml")
    assert set(_constants(text)) == {"side", "resolution_deg", "cw", "ccw"}
    assert _unsourced(text) == []


def test_the_foi_ugvs_fitted_constants_say_they_are_the_calibration() -> None:
    notes = _constants(_text("foi-ugv.toml"))
    for key in (
        "wheels.left",
        "wheels.right",
        "slip.icr_spread_left_turn",
        "slip.icr_spread_right_turn",
    ):
        assert "freelook calibrate foi-ugv" in notes[key], key


def test_a_constant_without_its_source_is_found() -> None:
    text = (
        'robot = "x"\nlaser.yaw_deg = 0.5  # a dotted key the line scan does not read\n'
        "[wheels]\nleft = { mean = 1.0, std = 0.1 }  # tyre wear, a per cent\n"
        "right = { mean = 1.0, std = 0.1 }\n[slip]\nnoise = 0.01  # ok\n"
        "longitudinal = [\n  0.1,\n]  # the comment on another line\n"
    )
    assert _unsourced(text) == ["laser.yaw_deg", "wheels.right", "slip.noise", "slip.longitudinal"]

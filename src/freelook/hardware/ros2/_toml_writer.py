"""TOML written line by line, with comments: how a watch of a robot writes its description."""

from __future__ import annotations

import json
import math
import textwrap

from freelook.hardware.ros2._describe import clean

__all__: list[str] = []


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        assert math.isfinite(value)
        return repr(round(value, 6))
    if isinstance(value, str):
        return json.dumps(value)  # names here are ASCII: a JSON string is a TOML one
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise TypeError(f"no TOML for {value!r}")


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def comment(self, *lines: str) -> None:
        """Comment lines, each wrapped at 96 characters (a list item's lines indented)."""
        for line in lines:
            wrapped = textwrap.wrap(clean(line, 600), 96, subsequent_indent="  ")
            self.lines += [f"# {part}" for part in wrapped or [""]]

    def section(self, name: str, *comments: str) -> None:
        self.lines += ["", f"[{name}]"]
        self.comment(*(c for c in comments if c))

    def key(self, name: str, value: object, note: str = "") -> None:
        line = f"{name} = {_toml(value)}"
        self.lines.append(f"{line:<30} # {clean(note, 100)}" if note else line)

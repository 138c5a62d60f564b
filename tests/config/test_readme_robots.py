"""README names every robot that ships (``freelook config list``), and says how many."""

from __future__ import annotations

import re
from pathlib import Path

from freelook.config import builtin_robots

README = Path(__file__).resolve().parents[2] / "README.md"
NUMBERS = dict(
    enumerate(
        ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven"), start=2
    )
)


def test_readme_names_every_robot_that_ships() -> None:
    text = README.read_text(encoding="utf-8")
    paragraph = next(p for p in text.split("\n\n") if p.startswith("Robots are TOML files"))
    sentence = paragraph.split("Worlds are data files")[0]
    named = set(re.findall(r"`([a-z0-9][a-z0-9-]*)`", sentence))
    shipped = set(builtin_robots())
    assert shipped <= named, f"README leaves out {sorted(shipped - named)}"
    assert f"{NUMBERS[len(shipped)]} ship with freelook" in " ".join(sentence.split())

"""Loading robot descriptions from TOML, with errors that name the file and the field."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from freelook.config._models import RobotConfig
from freelook.errors import ConfigError
from freelook.files import read_regular

__all__ = [
    "builtin_robots",
    "format_validation_error",
    "load_robot",
    "read_toml",
    "robot_from_mapping",
]

_ROBOTS_PACKAGE = "freelook.config.robots"


def builtin_robots() -> list[str]:
    """Names of the robot descriptions shipped with freelook."""
    folder = resources.files(_ROBOTS_PACKAGE)
    return sorted(
        p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml")
    )


def format_validation_error(source: str, error: ValidationError) -> list[str]:
    """One line per problem: ``file: field.path: what was expected (got value)``."""
    lines = []
    for problem in error.errors():
        field = ".".join(str(part) for part in problem["loc"]) or "(top level)"
        kind = problem["type"]
        nested = (problem.get("ctx") or {}).get("problems")
        if isinstance(nested, list):  # a cross-field check names each field itself
            prefix = f"{field}." if problem["loc"] else ""
            lines += [f"{source}: {prefix}{p['field']}: {p['message']}" for p in nested]
            continue
        if kind == "extra_forbidden":
            message = "unknown key (not a field of this section)"
        elif kind == "missing":
            message = "missing required field"
        elif kind == "finite_number":
            message = f"a finite number (got {problem['input']!r})"
        else:
            message = f"{problem['msg']} (got {problem['input']!r})"
        lines.append(f"{source}: {field}: {message}")
    return lines


def robot_from_mapping(
    data: dict[str, Any], source: str = "<mapping>", base_dir: Path | None = None
) -> RobotConfig:
    """Validate an already-parsed mapping; ``source`` names it in error messages, files it
    names by relative paths (the arm's URDF and SRDF) are looked up in ``base_dir``."""
    try:
        return RobotConfig.model_validate(data, context={"base_dir": base_dir})
    except ValidationError as err:
        problems = format_validation_error(source, err)
        raise ConfigError(f"{source}: invalid robot description", problems) from None


MAX_FILE_BYTES = 1 << 20  # a description or a keys file is a few kilobytes
MAX_NESTING = 16  # tables and arrays within each other; a description needs four


def read_toml(path: Path, what: str = "file") -> dict[str, Any]:
    """A TOML file's contents: a regular file of at most 1 MiB, nested at most 16 deep;
    :class:`ConfigError` naming the file otherwise."""
    try:
        text = read_regular(path, MAX_FILE_BYTES).decode("utf-8")
    except OSError as err:
        raise ConfigError(f"{path}: cannot read {what}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: not valid TOML: {err}") from None
    except RecursionError:
        raise ConfigError(f"{path}: nested deeper than {MAX_NESTING} levels") from None
    if _depth(data) > MAX_NESTING:
        raise ConfigError(f"{path}: nested deeper than {MAX_NESTING} levels")
    return data


def _depth(value: object) -> int:
    """How deep tables and arrays nest in ``value`` (a scalar: 0), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        children = (
            item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        )
        if children is None:
            continue
        deepest = max(deepest, depth + 1)
        if deepest > MAX_NESTING:
            break
        stack.extend((child, depth + 1) for child in children)
    return deepest


def load_robot(name_or_path: str | Path) -> RobotConfig:
    """Load a built-in robot by name (``pioneer3dx``) or a TOML file by path."""
    candidate = Path(name_or_path)
    if candidate.suffix != ".toml" and str(name_or_path) in builtin_robots():
        resource = resources.files(_ROBOTS_PACKAGE) / f"{name_or_path}.toml"
        with resources.as_file(resource) as path:
            return robot_from_mapping(read_toml(path), str(path), path.parent)
    if not candidate.exists():
        known = ", ".join(builtin_robots())
        raise ConfigError(f"{name_or_path}: no such file and no built-in robot (built-in: {known})")
    return robot_from_mapping(read_toml(candidate), str(candidate), candidate.parent)

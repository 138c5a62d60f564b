"""Which transport a URL names and which backend ``--hardware`` names are asked of their tables
(``TRANSPORTS``, ``BACKENDS``) alone: no code outside them tests a scheme or a backend's name.

The scan reads every module of ``src/freelook`` and refuses a comparison with a transport's
scheme or a backend's name (``url.scheme == "serial"``, ``hardware == "sim"``, ``in ("udp",
…)``, a ``match`` case, ``startswith("serial:")``). The tables themselves may, and so may a
backend's own package for its own name (its parser reads its own URLs).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from freelook.hardware import BACKENDS
from freelook.link import TRANSPORTS

SRC = Path(__file__).parents[1] / "src" / "freelook"
NAMES = frozenset(TRANSPORTS) | frozenset(BACKENDS)

#: module → why it may name a transport or a backend
ALLOWED = {
    "link/_transport_table.py": "the transports' table",
    "hardware/_open.py": "the backends' table",
    "launch/_bench_fleet.py": "a benchmark that compares a UDP fleet with a Zenoh one",
}


def _strings(node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.Tuple | ast.List | ast.Set):
        for element in node.elts:
            yield from _strings(element)


def named(tree: ast.AST, names: frozenset[str] = NAMES) -> Iterator[tuple[int, str, str]]:
    """(line, the name, the code) for each test of a transport's or backend's name."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                for text in _strings(operand):
                    if text in names:
                        yield node.lineno, text, ast.unparse(node)
        elif isinstance(node, ast.MatchValue):
            for text in _strings(node.value):
                if text in names:
                    yield node.lineno, text, f"case {text!r}"
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("startswith", "removeprefix", "endswith")
        ):
            for argument in node.args:
                for text in _strings(argument):
                    scheme, colon, _ = text.partition(":")
                    if colon and scheme in names:
                        yield node.lineno, scheme, ast.unparse(node)


def _own_backend(module: str, name: str) -> bool:
    """A backend's package reading its own name (``hardware/arcos/…`` and ``"arcos"``)."""
    parts = module.split("/")
    return len(parts) > 2 and parts[0] == "hardware" and parts[1] == name


def test_no_module_tests_a_transport_scheme_or_a_backend_name() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        module = path.relative_to(SRC).as_posix()
        if module in ALLOWED:
            continue
        for line, name, code in named(ast.parse(path.read_text(), str(path))):
            if not _own_backend(module, name):
                found.append(f"{module}:{line}: {code}")
    assert found == [], "ask TRANSPORTS or BACKENDS instead:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "code",
    [
        'if url.scheme == "serial":\n    pass',
        'framing = "stream" if robot.scheme != "udp" else "datagram"',
        'ok = url.scheme in ("zenoh", "zenoh+tls")',
        'match url.scheme:\n    case "udp":\n        pass',
        'camera = hardware == "sim"',
        'described = hardware.split(":")[0] == "ros2"',
        'serial = options.listen.startswith("serial:")',
    ],
)
def test_the_scan_catches_a_test_of_a_name(code: str) -> None:
    assert list(named(ast.parse(code)))


@pytest.mark.parametrize(
    "code",
    [
        "endpoint = await url.transport.open(url, side)",
        'ok = parts.scheme in ("file", "v4l2", "rtsp")',  # a camera's URL, no transport's
        'secure = request.url.scheme == "https"',
        'if side.role == "robot":\n    pass',
    ],
)
def test_the_scan_lets_other_strings_be(code: str) -> None:
    assert list(named(ast.parse(code))) == []


def test_every_allowed_module_exists() -> None:
    assert [m for m in ALLOWED if not (SRC / m).is_file()] == []

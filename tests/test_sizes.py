"""Sizes a reader can hold: no module of freelook over 500 lines, no function over 80 lines
unless its docstring says why ("Over 80 lines: ...", a declaration such as a command's
options, or a measured kernel)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src" / "freelook"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
REASON = "Over 80 lines:"


def module_sizes(root: Path) -> dict[str, int]:
    """Each Python module below ``root``, by its path from there, with its line count."""
    return {
        str(path.relative_to(root)): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted(root.rglob("*.py"))
    }


def long_functions(root: Path) -> list[str]:
    """``module:line name (lines)`` of each function below ``root`` longer than the limit
    whose docstring gives no reason."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            assert node.end_lineno is not None
            lines = node.end_lineno - node.lineno + 1
            if lines > MAX_FUNCTION_LINES and REASON not in (ast.get_docstring(node) or ""):
                where = path.relative_to(root)
                found.append(f"{where}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_module_is_over_500_lines() -> None:
    sizes = module_sizes(SOURCE)
    assert len(sizes) > 100  # the tree was found
    over = {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES}
    assert over == {}


def test_no_function_is_over_80_lines_without_a_reason() -> None:
    assert long_functions(SOURCE) == []


@pytest.mark.parametrize(
    ("body_lines", "docstring", "flagged"),
    [
        (78, "Eighty lines with the def and this docstring.", False),
        (79, "Eighty-one lines, and says nothing of it.", True),
        (85, "Over 80 lines: a list of options, one a line.", False),
    ],
)
def test_the_function_check_flags_a_long_function_without_a_reason(
    tmp_path: Path, body_lines: int, docstring: str, flagged: bool
) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(body_lines))
    (tmp_path / "one.py").write_text(f'def f() -> None:\n    """{docstring}"""\n{body}')
    assert bool(long_functions(tmp_path)) == flagged


def test_the_module_check_counts_every_line(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_text("x = 1\n" * 501)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "small.py").write_text("x = 1\n" * 500)
    assert module_sizes(tmp_path) == {"big.py": 501, "pkg/small.py": 500}

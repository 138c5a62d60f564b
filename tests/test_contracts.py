"""What the documents promise about the code's shape, held to the code.

The import contracts themselves (layers, private modules, sans-I/O cores) are import-linter's
to check (``lint-imports``, pyproject.toml); these tests keep docs/architecture.md's diagram
drawn from those layers and from the packages that exist, and keep every citation pointing
inside the repository.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
SRC = ROOT / "src" / "freelook"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
LAYERS_CONTRACT = "layers"


def contract_layers(pyproject: str) -> list[set[str]]:
    """The layers contract's layers, top first, each as its packages' short names."""
    contracts = tomllib.loads(pyproject)["tool"]["importlinter"]["contracts"]
    (layers,) = [c["layers"] for c in contracts if c["type"] == LAYERS_CONTRACT]
    return [
        {name.strip().removeprefix("freelook.") for name in layer.split("|")} for layer in layers
    ]


def diagram_layers(page: str) -> list[set[str]]:
    """The bands of the page's first diagram, top first, each as the packages named left of
    its ``│``; a line of ``─`` ends a band, and the first band is the column headings."""
    diagram = page.split("```")[1]
    bands: list[set[str]] = [set()]
    for line in diagram.splitlines():
        left, bar, _ = line.replace("┼", "│").partition("│")
        if not bar:
            continue
        if set(left.strip()) == {"─"}:
            bands.append(set())
        else:
            bands[-1].update(left.split())
    return bands[1:]


def packages() -> set[str]:
    """Every package and top-level module of freelook."""
    found = {p.name for p in SRC.iterdir() if (p / "__init__.py").is_file()}
    found |= {p.stem for p in SRC.glob("*.py") if not p.stem.startswith("__")}
    return found


def test_every_package_is_in_exactly_one_layer() -> None:
    layers = contract_layers((ROOT / "pyproject.toml").read_text())
    listed = [name for layer in layers for name in layer]
    assert sorted(listed) == sorted(packages())


def test_the_architecture_diagram_is_the_layers_contract() -> None:
    assert diagram_layers(ARCHITECTURE.read_text()) == contract_layers(
        (ROOT / "pyproject.toml").read_text()
    )


def test_a_diagram_that_differs_from_the_contract_is_caught() -> None:
    """The comparison sees a package moved between layers and one left out."""
    page = ARCHITECTURE.read_text()
    pyproject = (ROOT / "pyproject.toml").read_text()
    moved = page.replace(" autonomy                  │", " autonomy  stereo          │", 1)
    moved = moved.replace(" arm  stereo               │", " arm                       │", 1)
    assert moved != page
    assert diagram_layers(moved) != contract_layers(pyproject)
    dropped = page.replace(" maps                      │", "                           │", 1)
    assert dropped != page
    assert diagram_layers(dropped) != contract_layers(pyproject)


#: citations of files the repository does not hold: the source documents by number, and the
#: design contract they were restated in (docs/references.md and docs/design.md are the
#: repository's own)
OUTSIDE = re.compile(r"\bseeds? 0\d\d\b|\bDESIGN(?:\.md)?\s+§|shared/seeds|\bseeds/")
CITING = ("src", "tests", "docs", "tools", "README.md")
TEXT = {".py", ".md", ".js", ".html", ".toml", ".css", ".urdf", ".srdf", ".sh", ".json"}


def _texts() -> list[Path]:
    files: list[Path] = []
    for name in CITING:
        path = ROOT / name
        files += [path] if path.is_file() else sorted(path.rglob("*"))
    here = Path(__file__).resolve()  # its examples of what not to write
    return [
        f
        for f in files
        if f.suffix in TEXT and f.is_file() and "node_modules" not in f.parts and f != here
    ]


@pytest.mark.parametrize(
    "line",
    ["(seed 002's detector)", "the law of DESIGN §3", "see DESIGN.md §4", "../shared/seeds/"],
)
def test_a_citation_outside_the_repository_is_recognised(line: str) -> None:
    assert OUTSIDE.search(line)


def test_citations_point_inside_the_repository() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in _texts()
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert not found, "cite docs/references.md's short names and docs/design.md:\n" + "\n".join(
        found
    )

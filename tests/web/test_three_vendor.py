"""three.js ships inside the package (``src/freelook/web/static/vendor/three``): exactly the
files the pages import, byte for byte those of the npm package ``package-lock.json`` locks,
with its licence, in a built wheel too; and the station enters its room from that wheel alone,
with no ``node_modules`` anywhere near it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
from test_access import _get, _run  # type: ignore[import-not-found]
from test_station import HEADSET, IWER  # type: ignore[import-not-found]

from cli_processes import FIRST_START
from conftest import Sim, start_sim  # type: ignore[import-not-found]
from freelook.web import three_dir

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "src" / "freelook" / "web" / "static"
VENDOR = three_dir()
NPM_THREE = ROOT / "node_modules" / "three"
VENDORED_AS = {"LICENSE": "LICENSE", "three.module.js": "build/three.module.js"}
VENDORED_AS["three.core.js"] = "build/three.core.js"  # npm package's path of each vendored file
#: a module's imports: static (``import … from "x"``, ``export … from "x"``, ``import "x"``)
#: and dynamic (``import("x")``)
IMPORTS = re.compile(
    r"""(?:^|[;}\n])\s*(?:import|export)\s*(?:[\w$*{},\s]*?\bfrom\s*)?["']([^"']+)["']"""
    r"""|\bimport\(\s*["']([^"']+)["']\s*\)"""
)


def _page_imports(static: Path) -> set[str]:
    """Every URL the pages' modules reach from their ``<script type="module">`` through their
    imports (the import map's names resolved as the browser does), from the files in
    ``static`` (served at ``/static/``)."""
    reached: set[str] = set()
    todo: list[str] = []
    imports: dict[str, str] = {}
    for page in static.glob("*.html"):
        html = page.read_text(encoding="utf-8")
        for block in re.findall(r'<script type="importmap">(.*?)</script>', html, re.S):
            imports |= json.loads(block)["imports"]
        todo += re.findall(r'<script type="module" src="([^"]+)"', html)
    while todo:
        url = todo.pop()
        if url in reached:
            continue
        reached.add(url)
        assert url.startswith("/static/"), f"a page imports {url}: not a static file"
        path = static / url.removeprefix("/static/")
        assert path.is_file(), f"a page imports {url}: no file"
        for found in IMPORTS.finditer(path.read_text(encoding="utf-8")):
            spec = found.group(1) or found.group(2)
            todo.append(urlsplit(urljoin(f"http://page{url}", imports.get(spec, spec))).path)
    return reached


def test_the_vendored_files_are_the_ones_the_pages_import() -> None:
    reached = _page_imports(STATIC)
    assert "/static/station-room.js" in reached  # the walk went through the station's modules
    assert "/static/arm3d.js" in reached  # ... and the cockpit's 3-D view, imported on demand
    prefix = "/static/vendor/three/"
    assert {url.removeprefix(prefix) for url in reached if url.startswith(prefix)} == {
        p.name for p in VENDOR.glob("*.js")
    }
    assert sorted(p.name for p in VENDOR.iterdir()) == sorted([*VENDORED_AS, "README.md"])


def test_the_walk_finds_a_dynamic_import_and_a_name_from_the_import_map(tmp_path: Path) -> None:
    (tmp_path / "vendor").mkdir()
    (tmp_path / "p.html").write_text(
        '<script type="importmap">{"imports": {"lib": "/static/vendor/lib.js"}}</script>\n'
        '<script type="module" src="/static/main.js"></script>'
    )
    (tmp_path / "main.js").write_text('import {\n  a,\n  b as c } from "./a.js";\nimport("./b.js")')
    (tmp_path / "a.js").write_text('export { x } from "lib";')
    (tmp_path / "b.js").write_text("/** @type {import('./a.js').T} */ export const y = 1;")
    (tmp_path / "vendor" / "lib.js").write_text("import './core.js';")
    (tmp_path / "vendor" / "core.js").write_text("export const x = 'from \"nowhere\"';")
    assert _page_imports(tmp_path) == {
        f"/static/{name}" for name in ("main.js", "a.js", "b.js", "vendor/lib.js", "vendor/core.js")
    }
    (tmp_path / "vendor" / "core.js").unlink()
    with pytest.raises(AssertionError, match=r"imports /static/vendor/core\.js: no file"):
        _page_imports(tmp_path)


def test_the_vendored_three_is_the_locked_npm_package() -> None:
    lock = json.loads((ROOT / "package-lock.json").read_text())
    locked = lock["packages"]["node_modules/three"]["version"]
    assert json.loads((ROOT / "package.json").read_text())["dependencies"]["three"] == locked
    assert f"# three.js {locked}," in (VENDOR / "README.md").read_text()
    if not NPM_THREE.is_dir():
        pytest.skip("npm ci installs the locked package to compare with (tools/test.sh does)")
    assert json.loads((NPM_THREE / "package.json").read_text())["version"] == locked
    for name, source in VENDORED_AS.items():
        assert (VENDOR / name).read_bytes() == (NPM_THREE / source).read_bytes(), name


def test_three_is_served_beside_the_pages() -> None:
    results: dict[str, Any] = {}

    async def body(port: int, backend: object) -> None:
        import asyncio

        base = f"http://127.0.0.1:{port}/static"
        for name in ("three.module.js", "three.core.js", "LICENSE"):
            results[name] = await asyncio.to_thread(_get, f"{base}/vendor/three/{name}")
        results["escape"] = await asyncio.to_thread(_get, f"{base}/vendor/three/../../_app.py")

    _run(body)
    for name in ("three.module.js", "three.core.js"):
        status, headers = results[name]
        assert status == 200, name
        assert "javascript" in headers["content-type"], name
    assert results["LICENSE"][0] == 200
    assert results["escape"][0] == 404


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """freelook's wheel, built by pip from a copy of the sources (the tree is left as it is)."""
    tree = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tree / name)
    junk = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.nbi", "*.nbc")
    shutil.copytree(ROOT / "src", tree / "src", ignore=junk)
    out = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(tree)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    (found,) = out.glob("freelook-*.whl")
    return found


def test_the_wheel_carries_three_and_its_licence(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for name in VENDORED_AS:
            packed = f"freelook/web/static/vendor/three/{name}"
            assert packed in names
            assert archive.read(packed) == (VENDOR / name).read_bytes(), name
    for url in _page_imports(STATIC):  # and everything else the pages import
        assert f"freelook/web{url}" in names


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    """``freelook sim --robot taros --world eod`` run from the unpacked wheel, as ``pip
    install`` would lay it out (its first start compiles the robot's loops afresh)."""
    site = tmp_path_factory.mktemp("site")
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    where = subprocess.run(
        [sys.executable, "-c", "import freelook; print(freelook.__file__)"],
        env={"PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(site)  # the sim imports freelook from the wheel
    assert not [p for p in Path(where).parents if (p / "node_modules").exists()]
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PYTHONPATH", str(site))
        running = start_sim(site, "--robot", "taros", "--world", "eod", announce_within=FIRST_START)
    yield running
    running.stop()
    if running.process.stdout is not None:
        running.process.stdout.close()


@pytest.mark.browser
@pytest.mark.timeout(FIRST_START + 120)
def test_the_station_enters_its_room_from_the_wheel_alone(browser: Any, installed: Sim) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    if IWER.exists():  # a headset emulated in the browser (iwer, a test tool from npm)
        page.add_init_script(path=str(IWER))
        page.add_init_script(HEADSET)
    page.goto(installed.url.replace("/?token=", "/station?token="))
    page.wait_for_function(
        "document.getElementById('status').textContent !== 'connecting…'", timeout=30_000
    )
    page.wait_for_function(
        "window.station && station.mainFrames > 2 && station.last && station.last.odom",
        timeout=60_000,
    )
    assert page.locator("#status").inner_text() == "taros: main screen arm_stereo (stereo)"
    assert page.locator("#missing-asset").count() == 0
    assert page.evaluate("station.room.robotMeshes.length") == 26  # TAROS's collision boxes
    if IWER.exists():
        page.click("#enter-vr")
        page.wait_for_function("station.inXR && station.xrFrames > 5")
    assert errors == []
    page.close()

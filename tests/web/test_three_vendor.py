"""three.js for the arm's 3-D view comes from the npm registry (``npm ci`` on the repository's
package.json), is served beside the page, and its absence is said rather than hidden."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_access import _get, _run  # type: ignore[import-not-found]

from freelook.web import three_dir

ROOT = Path(__file__).resolve().parents[2]


def test_three_is_the_locked_registry_package_and_served_beside_the_page() -> None:
    lock = json.loads((ROOT / "package-lock.json").read_text())
    locked = lock["packages"]["node_modules/three"]["version"]
    assert json.loads((ROOT / "package.json").read_text())["dependencies"]["three"] == locked
    found = three_dir()
    if found is None:
        pytest.fail("three.js is not installed: run npm ci (tools/test.sh does)")
    installed = json.loads((found.parent / "package.json").read_text())["version"]
    assert installed == locked
    results: dict[str, object] = {}

    async def body(port: int, backend: object) -> None:
        import asyncio

        base = f"http://127.0.0.1:{port}"
        results["three"] = await asyncio.to_thread(_get, f"{base}/vendor/three/three.module.js")
        results["escape"] = await asyncio.to_thread(_get, f"{base}/vendor/three/../package.json")
        results["view"] = await asyncio.to_thread(_get, f"{base}/static/arm3d.js")

    _run(body)
    status, headers = results["three"]  # type: ignore[misc]
    assert status == 200
    assert "javascript" in headers["content-type"]
    assert results["escape"][0] == 404  # type: ignore[index]
    assert results["view"][0] == 200  # type: ignore[index]


def test_a_named_folder_without_three_is_not_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FREELOOK_THREE_DIR", str(tmp_path))
    assert three_dir() != tmp_path

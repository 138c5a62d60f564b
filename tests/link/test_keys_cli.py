"""``freelook keys new``: random keys a robot accepts, written for its owner only."""

from __future__ import annotations

import stat
from pathlib import Path

from typer.testing import CliRunner

from freelook.cli import app
from freelook.link import KeyRing, key_bits


def test_keys_new_writes_random_strong_keys_the_robot_loads(tmp_path: Path) -> None:
    path = tmp_path / "stations.toml"
    result = CliRunner().invoke(
        app, ["keys", "new", str(path), "--stations", "3", "--observer", "3"]
    )
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    ring = KeyRing.load(path)  # strong keys: no --weak-key needed
    keys = [ring.lookup(s) for s in (1, 2, 3)]
    assert all(k is not None for k in keys)
    assert len({k.key for k in keys if k is not None}) == 3
    three = ring.lookup(3)
    assert three is not None
    assert three.permissions.observer
    text = path.read_text()
    keys_written = [line.split('"')[1] for line in text.splitlines() if line.startswith("key =")]
    assert len(keys_written) == 3
    assert all(key_bits(key) == 256 for key in keys_written)
    again = tmp_path / "again.toml"
    CliRunner().invoke(app, ["keys", "new", str(again)])
    assert KeyRing.load(again).lookup(1) != ring.lookup(1)  # drawn afresh


def test_keys_new_never_overwrites_and_refuses_an_observer_that_is_not_a_station(
    tmp_path: Path,
) -> None:
    path = tmp_path / "stations.toml"
    path.write_text("keep me")
    result = CliRunner().invoke(app, ["keys", "new", str(path)])
    assert result.exit_code == 2
    assert "not overwritten" in result.output
    assert path.read_text() == "keep me"
    other = tmp_path / "other.toml"
    result = CliRunner().invoke(app, ["keys", "new", str(other), "--observer", "5"])
    assert result.exit_code == 2
    assert "--observer 5: not a station of 1…1" in result.output
    assert not other.exists()

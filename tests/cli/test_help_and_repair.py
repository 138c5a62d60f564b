"""What the commands say of themselves, and a repair that loses nothing: ``freelook experiment
--help`` lists the experiments of the registry, ``freelook operator --help`` documents
``--no-browser``, and ``freelook record repair IN OUT`` refuses an existing OUT (unless
``--force``, which replaces it only once the repaired file is whole)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from freelook.cli import app
from freelook.record import Recorder, RepairError, repair, topic_counts

WIDE = {"COLUMNS": "160", "TERMINAL_WIDTH": "160"}


def _help(*command: str) -> str:
    result = CliRunner().invoke(app, [*command, "--help"], env=WIDE)
    assert result.exit_code == 0, result.output
    return result.output


def test_experiment_help_lists_every_experiment_of_the_registry() -> None:
    from freelook.experiments import EXPERIMENTS

    text = _help("experiment")
    for name, (_, full, reduced) in EXPERIMENTS.items():
        assert f"- {name}: {full} trials ({reduced} with --reduced)" in text, name
    assert "Experiment name, or 'all'." in text
    assert text.count("Experiments:") == 1
    assert _help("experiment").count("Experiments:") == 1  # asked twice: listed once


def test_the_experiment_list_is_read_only_when_help_is_asked_for() -> None:
    import subprocess
    import sys

    probe = (
        "import sys\nfrom freelook.cli import app\n"
        "print(any(m.startswith('freelook.experiments') for m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize("command", ["operator", "sim"])
def test_no_browser_is_documented(command: str) -> None:
    text = _help(command)
    (line,) = [line for line in text.splitlines() if "--no-browser" in line]
    assert "Do not open the cockpit in a browser (the URL is printed)." in line


def _damaged(tmp_path: Path) -> Path:
    """A recording cut off half way (a process killed mid-run)."""
    path = tmp_path / "run.mcap"
    with Recorder(path, chunk_size=512) as recorder:
        for i in range(200):
            recorder.cmd_vel(100.0 + 0.05 * i, 0.3, -0.1)
    cut = tmp_path / "cut.mcap"
    cut.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    return cut


def _repair(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["record", "repair", *args])
    return result.exit_code, result.output


def test_repair_into_a_new_output(tmp_path: Path) -> None:
    cut = _damaged(tmp_path)
    out = tmp_path / "fixed.mcap"
    code, text = _repair(str(cut), str(out))
    assert code == 0, text
    recovered = int(re.search(r": (\d+) messages from", text).group(1))  # type: ignore[union-attr]
    assert topic_counts(out)["/cmd_vel"] == recovered > 0


@pytest.mark.parametrize("how", ["argument", "option", "default"])
def test_repair_refuses_an_existing_output_and_touches_nothing(tmp_path: Path, how: str) -> None:
    cut = _damaged(tmp_path)
    out = tmp_path / "precious.mcap" if how != "default" else cut.with_suffix(".repaired.mcap")
    out.write_bytes(b"a week of work")
    args = {"argument": [str(out)], "option": ["-o", str(out)], "default": []}[how]
    source = cut.read_bytes()
    code, text = _repair(str(cut), *args)
    assert code == 2
    assert text.strip() == (
        f"{out}: exists; nothing written (name another output, or --force to replace it)"
    )
    assert out.read_bytes() == b"a week of work"
    assert cut.read_bytes() == source
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["run.mcap", cut.name, out.name])


def test_force_replaces_the_output_once_the_repair_is_whole(tmp_path: Path) -> None:
    cut = _damaged(tmp_path)
    out = tmp_path / "old.mcap"
    out.write_bytes(b"an older repair")
    code, text = _repair(str(cut), str(out), "--force")
    assert code == 0, text
    assert topic_counts(out)["/cmd_vel"] > 0
    # into the source itself: the cut file becomes the repaired one, nothing else is left
    code, text = _repair(str(cut), str(cut), "--force")
    assert code == 0, text
    assert topic_counts(cut)["/cmd_vel"] == topic_counts(out)["/cmd_vel"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cut.mcap", "old.mcap", "run.mcap"]


def test_two_different_outputs_are_refused(tmp_path: Path) -> None:
    cut = _damaged(tmp_path)
    code, text = _repair(str(cut), str(tmp_path / "a.mcap"), "-o", str(tmp_path / "b.mcap"))
    assert code == 2
    assert "two outputs given" in text
    assert not (tmp_path / "a.mcap").exists()
    assert not (tmp_path / "b.mcap").exists()


def test_the_library_refuses_too_and_a_failed_replace_leaves_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cut = _damaged(tmp_path)
    out = tmp_path / "kept.mcap"
    out.write_bytes(b"kept")
    with pytest.raises(RepairError, match=r"kept\.mcap: exists; the repair writes nothing"):
        repair(cut, out)
    assert out.read_bytes() == b"kept"

    import freelook.record._repair as module

    def failing(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(module.os, "replace", failing)
    with pytest.raises(RepairError, match=r"kept\.mcap: cannot replace it: No space left"):
        repair(cut, out, overwrite=True)
    assert out.read_bytes() == b"kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cut.mcap", "kept.mcap", "run.mcap"]
    with pytest.raises(RepairError, match=r"cannot write"):
        repair(cut, tmp_path / "no such folder" / "out.mcap")

"""Every experiment runs in its reduced form, through the command line, and writes Markdown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from freelook.cli import app
from freelook.experiments import EXPERIMENTS


@pytest.mark.parametrize("name", ["translation-offset", "packet-drop", "flc-figures"])
def test_experiment_runs_reduced(name: str) -> None:
    result = CliRunner().invoke(app, ["experiment", name, "--reduced", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data[0]["name"] == name
    assert data[0]["rows"]
    assert data[0]["command"].startswith(f"freelook experiment {name} --trials")


def test_markdown_and_unknown_names(tmp_path: Path) -> None:
    out = tmp_path / "results.md"
    runner = CliRunner()
    result = runner.invoke(
        app, ["experiment", "translation-offset", "--trials", "1", "--markdown", str(out)]
    )
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert "| mean of 1 runs | 18 cm |" in text
    assert "`freelook experiment translation-offset --trials 1 --seed 1`" in text
    assert runner.invoke(app, ["experiment", "nope"]).exit_code == 2
    assert set(EXPERIMENTS) == {
        "square-laps",
        "translation-offset",
        "flc-figures",
        "ellipse",
        "packet-drop",
        "reckless",
        "localization",
    }


def test_a_missed_target_fails_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    from freelook.experiments import _registry as registry

    def missing(trials: int, seed: int, progress: object) -> registry.ExperimentResult:
        result = registry.ExperimentResult("missing", "A target missed", "nowhere", "")
        result.rows += [
            registry.Row("met", "1", "1", "≤ 1", True),
            registry.Row("missed", "1", "2", "≤ 1", False),
        ]
        return result

    monkeypatch.setitem(registry.EXPERIMENTS, "missing", (missing, 1, 1))
    result = CliRunner().invoke(app, ["experiment", "missing", "--json"])
    assert result.exit_code == 1
    assert "targets missed:\n  missing: missed" in result.output

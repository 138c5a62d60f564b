"""Every experiment runs in its reduced form, through the command line, and writes Markdown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from freelook.cli import app
from freelook.experiments import EXPERIMENTS


@pytest.mark.parametrize("name", ["flc-figures", "arm-fuzz"])
def test_experiment_runs_reduced_and_meets_every_target(name: str) -> None:
    result = CliRunner().invoke(app, ["experiment", name, "--reduced", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data[0]["name"] == name
    assert data[0]["rows"]
    assert all(row["ok"] is not False for row in data[0]["rows"]), data[0]["rows"]
    assert data[0]["command"].startswith(f"freelook experiment {name} --trials")
    # every row with a paper value says under which conditions it ran
    assert all(row["conditions"] for row in data[0]["rows"] if row["paper"])


def test_translation_offset_runs_reduced_and_its_prediction_is_judged_against_table_4() -> None:
    result = CliRunner().invoke(app, ["experiment", "translation-offset", "--reduced", "--json"])
    assert result.exit_code == 1, result.output  # the model's h is not the paper's 18 cm
    rows = json.loads(result.stdout)[0]["rows"]
    (paper,) = [row for row in rows if row["paper"]]
    assert paper["ok"] is False
    assert "mean +" in paper["ours"]
    assert paper["conditions"]
    (pull,) = [row for row in rows if row["what"].startswith("freelook extra: pull")]
    assert pull["ok"] is True  # the pull on the paper's sensors beats the paper's law


def test_packet_drop_runs_reduced_and_its_half_duplex_row_is_judged_against_table_7_1() -> None:
    result = CliRunner().invoke(app, ["experiment", "packet-drop", "--reduced", "--json"])
    assert result.exit_code == 1, result.output  # the model's drops are not the table's
    rows = json.loads(result.stdout)[0]["rows"]
    (model,) = [row for row in rows if "half-duplex" in row["what"]]
    assert model["ok"] is False
    assert "node failure as the table's in" in model["ours"]
    assert model["conditions"]
    assert all(row["ok"] for row in rows if row is not model)


def test_markdown_and_unknown_names(tmp_path: Path) -> None:
    out = tmp_path / "results.md"
    runner = CliRunner()
    result = runner.invoke(
        app, ["experiment", "translation-offset", "--trials", "1", "--markdown", str(out)]
    )
    assert result.exit_code == 1, result.output  # a row missed: written all the same
    text = out.read_text()
    assert "| the paper's eq. 6 (gain 0), gyro + encoders: h over 1 runs | mean 18 cm," in text
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
        "arm-fuzz",
        "bomb-disposal",
        "latency",
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


def test_markdown_rewrites_one_experiments_section_in_place(tmp_path: Path) -> None:
    from freelook.cli._experiment import write_markdown
    from freelook.experiments import ExperimentResult, Row

    out = tmp_path / "results.md"
    first = ExperimentResult("a", "First", "paper A", "freelook experiment a")
    first.rows.append(Row("row", "1", "2", "≤ 2", True, "seed 1"))
    second = ExperimentResult("b", "Second", "paper B", "freelook experiment b")
    write_markdown(out, [first, second])
    first.rows[0] = Row("row", "1", "3", "≤ 2", False, "seed 2")
    write_markdown(out, [first])
    text = out.read_text()
    assert text.index("## First") < text.index("## Second")  # kept in place
    assert "| row | 1 | 3 | ≤ 2 | **no** | seed 2 |" in text
    assert "| row | 1 | 2 |" not in text
    assert text.count("## Second") == 1


def test_markdown_closes_every_section_with_one_blank_line(tmp_path: Path) -> None:
    # a table followed straight by the next section's marker runs on into it
    from freelook.cli._experiment import write_markdown
    from freelook.experiments import ExperimentResult

    out = tmp_path / "results.md"
    out.write_text(
        "# Results\n<!-- experiment: a -->\n## A\n\n| x |\n|---|\n| 1 |\n"
        "<!-- experiment: b -->\n## B\n\n| y |\n\n\n\n<!-- experiment: c -->\n## C\n"
    )
    write_markdown(out, [ExperimentResult("c", "C again", "paper C", "freelook experiment c")])
    text = out.read_text()
    assert "| 1 |\n\n<!-- experiment: b -->" in text
    assert "| y |\n\n<!-- experiment: c -->" in text
    write_markdown(out, [ExperimentResult("c", "C again", "paper C", "freelook experiment c")])
    assert out.read_text() == text  # rewriting a section changes nothing else


def test_a_tables_notes_follow_it_in_the_markdown(tmp_path: Path) -> None:
    from freelook.cli._experiment import write_markdown
    from freelook.experiments import ExperimentResult, Row

    out = tmp_path / "results.md"
    result = ExperimentResult("a", "First", "paper A", "freelook experiment a")
    result.rows.append(Row("row", "1", "2", "≤ 1", False, "seed 1"))
    result.notes.append("why the row misses")
    write_markdown(out, [result])
    text = out.read_text()
    table_end = text.index("| row |")
    assert text.index("Note: why the row misses") > table_end
    assert "\n\nNote: why the row misses\n" in text


def test_each_trial_beside_the_papers_and_a_section_per_seed_set(tmp_path: Path) -> None:
    from freelook.cli._experiment import write_markdown
    from freelook.experiments import ExperimentResult, Row
    from freelook.experiments._result import TrialTable

    out = tmp_path / "results.md"
    runs = []
    for first in (501, 901):
        result = ExperimentResult("a", "First", "paper A", f"freelook experiment a --seed {first}")
        result.rows.append(Row("row", "1", "2", "≤ 1", False, f"seed {first}"))
        result.trials.append(
            TrialTable("Each run", ["run", "paper", "ours"], [["1", "-3°", f"{first}°"]])
        )
        result.section = f"a seeds {first}–{first + 9}"
        runs.append(result)
    write_markdown(out, runs)
    write_markdown(out, [ExperimentResult("a", "First", "paper A", "freelook experiment a")])
    text = out.read_text()
    assert "<!-- experiment: a seeds 501–510 -->\n## First (seeds 501–510)" in text
    assert "<!-- experiment: a seeds 901–910 -->" in text
    assert "<!-- experiment: a -->" in text  # the default seeds' section beside them
    assert "Each run:\n\n| run | paper | ours |\n|---|---|---|\n| 1 | -3° | 901° |" in text
    assert text.index("| row | 1 | 2 |") < text.index("Each run:")

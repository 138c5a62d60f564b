"""``freelook calibrate``: the shipped FOI UGV error model is the fit of its named measurement,
another measurement gives another model, and bad measurements are refused by field."""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from freelook.cli import app
from freelook.config import load_error_model
from freelook.experiments import load_measurement, measured_robots, sensitivity_models

_FITTED = (
    ("wheels", "left"),
    ("wheels", "right"),
    ("slip", "icr_spread_left_turn"),
    ("slip", "icr_spread_right_turn"),
)


def _measurement(tmp_path: Path, cw: list[float], ccw: list[float], robot: str = "foi-ugv") -> Path:
    path = tmp_path / "laps.toml"
    path.write_text(
        f'robot = "{robot}"\nname = "other-laps"\nsource = "a test track"\nside = 2.0\n'
        f"resolution_deg = 1.0\ncw = {cw}\nccw = {ccw}\n"
    )
    return path


@pytest.mark.slow
def test_calibrate_reproduces_the_shipped_model_from_its_named_measurement() -> None:
    result = CliRunner().invoke(app, ["calibrate", "foi-ugv", "--json"])
    assert result.exit_code == 0, result.output
    (fit,) = json.loads(result.stdout)
    assert fit["shipped_mismatches"] == []
    assert fit["measurement"]["name"] == "ogren2013-tables-2-3"
    shipped = load_error_model("foi-ugv").model_dump()
    for constant in fit["constants"]:
        section, name = constant["key"].split(".")
        assert shipped[section][name]["mean"] == pytest.approx(constant["mean"], abs=1e-6)
        assert constant["std"] > 0.0  # the fit's uncertainty, written as the seed spread
    # the fit explains the tables to about their rounding, and the sprockets differ
    assert fit["rms_deg"] < 1.5
    assert fit["difference"] > 3 * fit["difference_std"]


@pytest.mark.slow
def test_another_measurement_gives_another_model(tmp_path: Path) -> None:
    laps = _measurement(tmp_path, [-1.0, -2.0, -3.0, -4.0, -5.0], [-1.0, -2.0, -3.0, -4.0, -5.0])
    written = tmp_path / "fitted.toml"
    result = CliRunner().invoke(
        app, ["calibrate", "foi-ugv", "--measurement", str(laps), "--write", str(written)]
    )
    # another measurement is not expected to be the shipped model: no failure for that
    assert result.exit_code == 0, result.output
    assert "the shipped error model is not this fit" in result.output
    shipped = load_error_model("foi-ugv").model_dump()
    other = load_error_model(written).model_dump()
    moved = [
        (s, n)
        for s, n in _FITTED
        if abs(other[s][n]["mean"] - shipped[s][n]["mean"]) > 3 * shipped[s][n]["std"]
    ]
    assert moved, (other, shipped)
    # both directions drift alike now: that is the sprockets, not the spread
    assert other["wheels"]["left"]["mean"] > shipped["wheels"]["left"]["mean"]
    # the written file keeps every other line, comments included
    before = tomllib.loads(
        (Path(__file__).parents[2] / "src/freelook/config/errors/foi-ugv.toml").read_text()
    )
    after = tomllib.loads(written.read_text())
    assert after["gyro"] == before["gyro"]
    assert after["laser"] == before["laser"]
    assert "freelook calibrate foi-ugv (other-laps)" in written.read_text()


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("cw = [nan]", "cw"),
        ("cw = []", "cw"),
        ("side = -2.0", "side"),
        ("colour = 3", "colour"),
    ],
)
def test_a_bad_measurement_is_refused_naming_its_field(
    tmp_path: Path, text: str, field: str
) -> None:
    good = _measurement(tmp_path, [-1.0], [1.0]).read_text().splitlines()
    key = text.split(" =")[0]
    lines = [line for line in good if not line.startswith(f"{key} =")] + [text]
    path = tmp_path / "bad.toml"
    path.write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(app, ["calibrate", "foi-ugv", "--measurement", str(path)])
    assert result.exit_code == 2, result.output
    assert field in result.output


def test_a_robot_without_a_measurement_or_a_measurement_of_another_robot_is_refused(
    tmp_path: Path,
) -> None:
    assert measured_robots() == ["foi-ugv"]
    assert load_measurement("foi-ugv").cw == [-3.0, -4.0, -4.0, -5.0, -6.0]
    runner = CliRunner()
    result = runner.invoke(app, ["calibrate", "taros"])
    assert result.exit_code == 2
    assert "taros: no measurement in its paper" in result.output
    laps = _measurement(tmp_path, [-1.0], [1.0], robot="pioneer3dx")
    result = runner.invoke(app, ["calibrate", "foi-ugv", "--measurement", str(laps)])
    assert result.exit_code == 2
    assert "a measurement of pioneer3dx, not foi-ugv" in result.output
    result = runner.invoke(app, ["calibrate", "foi-ugv", "--measurement", str(tmp_path / "no")])
    assert result.exit_code == 2
    assert "cannot read the measurement" in result.output


def test_the_sensitivity_models_move_each_fitted_parameter_by_its_sigma_alone() -> None:
    shipped = load_error_model("foi-ugv")
    models = sensitivity_models("foi-ugv")
    assert [label.split(" = ")[0] for label, _ in models] == ["δ +1σ", "δ −1σ", "s +1σ", "s −1σ"]
    wheels, spread = shipped.wheels, shipped.slip.icr_spread_left_turn
    delta = wheels.left.mean - wheels.right.mean
    for (label, model), (d_delta, d_spread) in zip(
        models,
        [
            (wheels.left.std * math.sqrt(2), 0.0),
            (-wheels.left.std * math.sqrt(2), 0.0),
            (0.0, spread.std),
            (0.0, -spread.std),
        ],
        strict=True,
    ):
        got = model.wheels.left.mean - model.wheels.right.mean
        assert got == pytest.approx(delta + d_delta, abs=1e-12), label
        # the sprockets' mean stays, both turns move together
        assert model.wheels.left.mean + model.wheels.right.mean == pytest.approx(
            wheels.left.mean + wheels.right.mean
        )
        assert model.slip.icr_spread_left_turn.mean == pytest.approx(spread.mean + d_spread)
        assert model.slip.icr_spread_right_turn.mean == model.slip.icr_spread_left_turn.mean
        # every other constant as shipped
        rest = model.model_dump()
        base = shipped.model_dump()
        for section, name in _FITTED:
            rest[section][name]["mean"] = base[section][name]["mean"]
        assert rest == base, label

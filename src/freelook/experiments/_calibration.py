"""Error models identified from one named measurement of the robot's paper (``freelook
calibrate``), so the paper's other rows run as predictions, not fits.

The FOI UGV's measurement is Ögren 2013 §5.3's square laps (Tables 2–3,
``config/errors/measurements/foi-ugv.toml``). The procedure, in code below:

1. The robot of the fit is the shipped error model's *systematic* robot: every spread (std)
   0, no random slip per step, put down exactly where it is told; its other constants are
   the shipped ones (each with its source in ``config/errors/foi-ugv.toml``).
2. Two parameters are free: the sprockets' difference δ = left − right (their mean stays the
   shipped one) and the tracks' ICR spread s, the same turning either way (one spread per
   direction is not identifiable from one lap test each way).
3. Each residual is a lap's simulated camera drift (the paper's system: eq. 6, gain 0, gyro
   + encoder filter, no laser, the laps of :func:`square_laps_trial`, seed
   :data:`CALIBRATION_SEED`) minus the paper's, over the tables' rounding σ = 1°/√12;
   :func:`scipy.optimize.least_squares` minimises their squares from a start that knows
   nothing of the shipped values (δ = 0, s = the description's identified spread).
4. The uncertainty is the fit's covariance (JᵀJ)⁻¹, scaled by the reduced χ² when the
   model leaves more scatter than the rounding. It is written as the fitted constants' std:
   each seed's robot is one the measurement allows.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from scipy.optimize import least_squares

from freelook.config import ErrorModel, load_error_model, load_robot
from freelook.errors import ConfigError
from freelook.experiments import _scenarios as sc
from freelook.experiments._parallel import map_trials, workers

__all__ = [
    "CALIBRATION_SEED",
    "Calibration",
    "FittedConstant",
    "LapMeasurement",
    "calibrate",
    "load_measurement",
    "measured_robots",
    "sensitivity_models",
    "shipped_mismatches",
    "with_fitted",
]

#: the seed of the simulator's own streams (sensor noise, the gyro's turn-on bias) in the fit
CALIBRATION_SEED = 0
_MEASUREMENTS = "freelook.config.errors"
#: the finite-difference steps of δ and s: far above the simulator's rounding, far below 1σ
_STEPS = np.diag([1e-4, 1e-4])


class LapMeasurement(BaseModel):
    """A square-lap test: the camera's accumulated drift after each lap, each way (deg)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    robot: str = Field(min_length=1)
    name: str = Field(min_length=1)
    source: str = Field(min_length=1)
    side: float = Field(gt=0.5, le=10.0, description="m")
    resolution_deg: float = Field(gt=0.0, le=10.0)
    cw: list[float] = Field(min_length=1, max_length=20)
    ccw: list[float] = Field(min_length=1, max_length=20)


def measured_robots() -> list[str]:
    """Robots whose paper gives a measurement shipped with freelook to identify them from."""
    folder = resources.files(_MEASUREMENTS) / "measurements"
    return sorted(
        p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml")
    )


def load_measurement(robot_or_path: str | Path) -> LapMeasurement:
    """A built-in robot's named measurement, or one from a TOML file."""
    if isinstance(robot_or_path, Path) or str(robot_or_path).endswith(".toml"):
        path = Path(robot_or_path)
        try:
            text, where = path.read_text(encoding="utf-8"), str(path)
        except (OSError, UnicodeDecodeError) as err:
            raise ConfigError(f"{path}: cannot read the measurement: {err}") from None
    else:
        if robot_or_path not in measured_robots():
            raise ConfigError(
                f"{robot_or_path}: no measurement in its paper identifies its error model "
                f"(measured robots: {', '.join(measured_robots())})"
            )
        resource = resources.files(_MEASUREMENTS) / "measurements" / f"{robot_or_path}.toml"
        text, where = resource.read_text(encoding="utf-8"), f"measurements/{robot_or_path}.toml"
    try:
        return LapMeasurement.model_validate(tomllib.loads(text))
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{where}: not valid TOML: {err}") from None
    except ValidationError as err:
        fields = "; ".join(".".join(map(str, e["loc"])) + ": " + e["msg"] for e in err.errors())
        raise ConfigError(f"{where}: invalid measurement: {fields}") from None


@dataclass(frozen=True, slots=True)
class FittedConstant:
    """One constant of the error model as the fit gives it: ``key`` is its TOML path."""

    key: str
    mean: float
    std: float


@dataclass(frozen=True, slots=True)
class Calibration:
    """What :func:`calibrate` found: the two parameters with their 1σ and correlation, the
    constants they set, and each lap's simulated drift beside the measured one."""

    robot: str
    measurement: LapMeasurement
    difference: float  # δ, left over right sprocket ratio
    difference_std: float
    spread: float  # s, both turns
    spread_std: float
    correlation: float
    constants: tuple[FittedConstant, ...]
    fitted_cw: tuple[float, ...]
    fitted_ccw: tuple[float, ...]
    rms_deg: float
    evaluations: int

    def model(self, base: ErrorModel) -> ErrorModel:
        """``base`` with the fitted constants in place."""
        data = base.model_dump()
        for c in self.constants:
            section, name = c.key.split(".")
            data[section][name] = {"mean": c.mean, "std": c.std}
        return ErrorModel.model_validate(data)


def _systematic(model: ErrorModel) -> ErrorModel:
    """``model``'s systematic robot: every std 0, no random slip, placed exactly."""
    data = model.model_dump()
    for section in data.values():
        if isinstance(section, dict):
            for value in section.values():
                if isinstance(value, dict) and set(value) == {"mean", "std"}:
                    value["std"] = 0.0
    data["slip"]["noise"] = 0.0
    data["start"] = {"xy_std": 0.0, "theta_std_deg": 0.0}
    return ErrorModel.model_validate(data)


def _constants(base: ErrorModel, p: np.ndarray, std: np.ndarray) -> tuple[FittedConstant, ...]:
    """The TOML constants of parameters ``p`` = (δ, s) with their 1σ ``std``; the sprockets'
    mean stays ``base``'s, each side carrying half of δ's spread."""
    mean = (base.wheels.left.mean + base.wheels.right.mean) / 2
    side_std = float(std[0]) / math.sqrt(2)
    return (
        FittedConstant("wheels.left", mean + float(p[0]) / 2, side_std),
        FittedConstant("wheels.right", mean - float(p[0]) / 2, side_std),
        FittedConstant("slip.icr_spread_left_turn", float(p[1]), float(std[1])),
        FittedConstant("slip.icr_spread_right_turn", float(p[1]), float(std[1])),
    )


def calibrate(robot: str, measurement: LapMeasurement | None = None, jobs: int = 1) -> Calibration:
    """Identify ``robot``'s sprocket difference and ICR spread from ``measurement`` (None: its
    named one) by the procedure of the module's docstring; ``jobs`` worker processes share
    each step's laps (the same fit on any number: each lap run is a function of its model)."""
    measured = measurement if measurement is not None else load_measurement(robot)
    base = load_error_model(robot)
    config = load_robot(robot)
    sigma = measured.resolution_deg / math.sqrt(12)
    paper = np.array([*measured.cw, *measured.ccw])
    seen: dict[tuple[float, ...], np.ndarray] = {}

    def evaluate(points: list[np.ndarray]) -> None:
        """Each of ``points`` not seen yet: its laps both ways, all of them side by side."""
        todo = [key for key in dict.fromkeys(_key(p) for p in points) if key not in seen]
        arguments = [
            (robot, _systematic(_with(base, np.array(key))), clockwise, len(want), measured.side)
            for key in todo
            for clockwise, want in ((True, measured.cw), (False, measured.ccw))
        ]
        with workers(jobs):
            drifts = map_trials(_lap_drifts, arguments, _quiet)
        for k, key in enumerate(todo):
            seen[key] = (np.array([*drifts[2 * k], *drifts[2 * k + 1]]) - paper) / sigma

    def residuals(p: np.ndarray) -> np.ndarray:
        evaluate([p])
        return seen[_key(p)]

    def jacobian(p: np.ndarray) -> np.ndarray:
        # forward differences of absolute steps: scipy's relative ones vanish at δ = 0
        evaluate([p, *(p + step for step in _STEPS)])
        f = residuals(p)
        columns = [(residuals(p + step) - f) / step[k] for k, step in enumerate(_STEPS)]
        return np.stack(columns, axis=1)

    start = np.array([0.0, config.slip.icr_spread])
    fit = least_squares(residuals, start, jac=jacobian, x_scale=_STEPS.diagonal() * 10)
    jac = jacobian(fit.x)
    dof = max(1, paper.size - start.size)
    chi2 = float(np.sum(fit.fun**2)) / dof
    cov = np.linalg.inv(jac.T @ jac) * max(1.0, chi2)
    std = np.sqrt(np.diag(cov))
    simulated = fit.fun * sigma + paper
    n = len(measured.cw)
    return Calibration(
        robot=robot,
        measurement=measured,
        difference=float(fit.x[0]),
        difference_std=float(std[0]),
        spread=float(fit.x[1]),
        spread_std=float(std[1]),
        correlation=float(cov[0, 1] / (std[0] * std[1])),
        constants=_constants(base, _rounded(fit.x, std), std),
        fitted_cw=tuple(float(v) for v in simulated[:n]),
        fitted_ccw=tuple(float(v) for v in simulated[n:]),
        rms_deg=float(np.sqrt(np.mean((fit.fun * sigma) ** 2))),
        evaluations=len(seen),
    )


def _key(p: np.ndarray) -> tuple[float, ...]:
    return tuple(float(v) for v in p)


def _quiet(done: int, total: int) -> None:
    pass


def _lap_drifts(
    robot: str, model: ErrorModel, clockwise: bool, laps: int, side: float
) -> list[float]:
    """The camera's drift after each lap (deg) of the fit's system (module docstring, 3)."""
    return sc.square_laps_trial(
        CALIBRATION_SEED,
        clockwise,
        laps,
        side,
        use_gyro=True,
        use_localization=False,
        robot_name=robot,
        gain=0.0,
        laser=False,
        model=model,
    ).drifts


def _with(base: ErrorModel, p: np.ndarray) -> ErrorModel:
    mean = (base.wheels.left.mean + base.wheels.right.mean) / 2
    data = base.model_dump()
    data["wheels"]["left"]["mean"] = mean + float(p[0]) / 2
    data["wheels"]["right"]["mean"] = mean - float(p[0]) / 2
    data["slip"]["icr_spread_left_turn"]["mean"] = float(p[1])
    data["slip"]["icr_spread_right_turn"]["mean"] = float(p[1])
    return ErrorModel.model_validate(data)


def sensitivity_models(robot: str) -> list[tuple[str, ErrorModel]]:
    """``robot``'s shipped error model with each fitted parameter's mean moved by its 1σ, up
    and down, the other constants as shipped: (label, model), the sprockets' difference δ
    first (σ_δ = √2 × each side's std, split evenly between the sides), then the ICR spread s
    (both turns together, as fitted)."""
    base = load_error_model(robot)
    side_std = base.wheels.left.std
    spread_std = base.slip.icr_spread_left_turn.std
    delta = side_std * math.sqrt(2)
    p0 = np.array(
        [base.wheels.left.mean - base.wheels.right.mean, base.slip.icr_spread_left_turn.mean]
    )
    out = []
    for k, std in enumerate((delta, spread_std)):
        for sign in (1.0, -1.0):
            p = p0.copy()
            p[k] += sign * std
            shown = f"{p[0] * 100:+.4f} %" if k == 0 else f"{p[1]:.6f}"
            label = f"{'δ' if k == 0 else 's'} {'+' if sign > 0 else '−'}1σ = {shown}"
            out.append((label, _with(base, p)))
    return out


def _rounded(p: np.ndarray, std: np.ndarray) -> np.ndarray:
    """The parameters to 6 decimals: the shipped file's precision, far below their 1σ."""
    del std
    return np.round(p, 6)


def shipped_mismatches(calibration: Calibration, model: ErrorModel) -> list[str]:
    """Where ``model`` (the shipped error model) differs from the fit: a mean more than a
    hundredth of its σ (or 1e-6) off, a std more than 5 % off."""
    data = model.model_dump()
    problems = []
    for c in calibration.constants:
        section, name = c.key.split(".")
        shipped = data[section][name]
        if abs(shipped["mean"] - c.mean) > max(1e-6, 0.01 * c.std):
            problems.append(f"{c.key}.mean: shipped {shipped['mean']:.6f}, fitted {c.mean:.6f}")
        if abs(shipped["std"] - _sig2(c.std)) > 0.05 * c.std:
            problems.append(f"{c.key}.std: shipped {shipped['std']:.2g}, fitted {c.std:.2g}")
    return problems


def _sig2(value: float) -> float:
    """``value`` to two significant digits (how a std is written)."""
    return float(f"{value:.2g}")


def with_fitted(text: str, calibration: Calibration) -> str:
    """The error model TOML ``text`` with the fitted constants' lines rewritten (comments and
    every other line kept)."""
    lines = text.splitlines()
    section = ""
    wanted = {c.key: c for c in calibration.constants}
    name = calibration.measurement.name
    for i, line in enumerate(lines):
        header = re.match(r"^\[(\w+)\]\s*$", line)
        if header:
            section = header.group(1)
            continue
        key = re.match(r"^(\w+)\s*=", line)
        if key and f"{section}.{key.group(1)}" in wanted:
            c = wanted[f"{section}.{key.group(1)}"]
            lines[i] = (
                f"{key.group(1)} = {{ mean = {c.mean:.6f}, std = {_sig2(c.std):.2g} }}"
                f"  # fitted: freelook calibrate {calibration.robot} ({name}), std = its 1σ"
            )
    return "\n".join(lines) + "\n"

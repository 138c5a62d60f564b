"""The error model: how a simulated robot's physics differs from what its program believes.

A robot description (``config/robots/*.toml``) is the robot program's belief: its nominal
wheel diameter and track width, its identified slip, its sensors' mounts. A real robot differs
from its description, and so does the simulator's: each robot has an error model
(``config/errors/*.toml``, one per robot, shared by every experiment) whose quantities are a
systematic value and a seed-to-seed spread. :meth:`ErrorModel.draw` turns it and a seed into
one physical robot (:class:`PhysicalTruth`), which only the simulator reads.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from freelook.config._load import format_validation_error
from freelook.config._models import RobotConfig
from freelook.errors import ConfigError

__all__ = [
    "ErrorModel",
    "PhysicalTruth",
    "Spread",
    "builtin_error_models",
    "load_error_model",
    "physical_robot",
]

_ERRORS_PACKAGE = "freelook.config.errors"


class _Strict(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, validate_default=True, allow_inf_nan=False
    )


class Spread(_Strict):
    """One physical quantity: its systematic value ``mean`` and each seed's spread ``std``
    (drawn normal, clipped at two standard deviations)."""

    mean: float
    std: float = Field(default=0.0, ge=0.0)

    def draw(self, rng: np.random.Generator) -> float:
        """One value (a normal draw is taken even when ``std`` is 0, so streams do not shift)."""
        z = float(np.clip(rng.standard_normal(), -2.0, 2.0))
        return self.mean + self.std * z


def _ratio(mean: float = 1.0) -> Spread:
    return Spread(mean=mean)


class WheelErrors(_Strict):
    """True over nominal: each side's wheel (sprocket) diameter and the track width.

    A holonomic base on omni wheels names where they sit (``omni_angles_deg``, from forward,
    counter-clockwise, at half the track width from the centre): its program commands a twist
    and the base's own controller turns the wheels (the M2P2 over JAUS), so the layout is the
    physical robot's, not the description's. ``left``, ``right`` and ``third`` are then the
    wheels in that order, ``track`` their distance from the centre."""

    left: Spread = Field(default_factory=_ratio)
    right: Spread = Field(default_factory=_ratio)
    track: Spread = Field(default_factory=_ratio)
    third: Spread = Field(default_factory=_ratio)
    omni_angles_deg: tuple[float, float, float] | None = None


class SlipErrors(_Strict):
    """The ground's skid-steer slip (Martinez et al.'s ICR model, extended).

    The tracks' ICR spread (effective over geometric track width) differs turning left
    (counter-clockwise) and right, grows with the yaw rate by ``spread_per_rate`` per rad/s,
    and the body slides sideways in a turn: ``lateral`` (m/s per m/s·rad/s, outwards, a
    centripetal skid) plus an ICR ``icr_forward`` m ahead of the axle (v_y = −x_ICR·ω).
    """

    icr_spread_left_turn: Spread = Field(default_factory=_ratio)
    icr_spread_right_turn: Spread = Field(default_factory=_ratio)
    spread_per_rate: float = Field(default=0.0, ge=0.0, le=1.0, description="per rad/s")
    longitudinal: Spread = Field(default_factory=lambda: Spread(mean=0.0))
    lateral: Spread = Field(
        default_factory=lambda: Spread(mean=0.0), description="s (m/s per m/s²), 0…1"
    )
    icr_forward: Spread = Field(default_factory=lambda: Spread(mean=0.0), description="m, −0.5…0.5")
    noise: float = Field(default=0.0, ge=0.0, le=0.2, description="relative std, per step")


class GyroErrors(_Strict):
    """The gyro's true scale-factor error s (it reads (1 + s) times the rate)."""

    scale: Spread = Field(default_factory=lambda: Spread(mean=0.0))


class LaserErrors(_Strict):
    """Where the laser really sits against its configured mount, and its bad returns."""

    forward: Spread = Field(default_factory=lambda: Spread(mean=0.0), description="m")
    left: Spread = Field(default_factory=lambda: Spread(mean=0.0), description="m")
    yaw_deg: Spread = Field(default_factory=lambda: Spread(mean=0.0), description="deg")
    outlier_rate: float = Field(
        default=0.0, ge=0.0, le=0.2, description="returns up to a fifth short of the truth"
    )
    dropout_rate: float = Field(
        default=0.0, ge=0.0, le=0.2, description="returns missing (read as range_max)"
    )


class StartErrors(_Strict):
    """How far a robot placed by hand is from where it is told it stands."""

    xy_std: float = Field(default=0.0, ge=0.0, le=1.0, description="m")
    theta_std_deg: float = Field(default=0.0, ge=0.0, le=45.0, description="deg")


class ErrorModel(_Strict):
    """One robot's error model (see the module's docstring); ``sources`` says where each
    number comes from."""

    robot: str = Field(min_length=1)
    sources: str = ""
    wheels: WheelErrors = WheelErrors()
    slip: SlipErrors = SlipErrors()
    gyro: GyroErrors = GyroErrors()
    laser: LaserErrors = LaserErrors()
    start: StartErrors = StartErrors()

    def draw(self, seed: int) -> PhysicalTruth:
        """The physical robot of ``seed`` (its own stream: the simulator's are untouched)."""
        rng = np.random.default_rng(np.random.SeedSequence([seed, 0x7E17]))
        w, s, g, la, st = self.wheels, self.slip, self.gyro, self.laser, self.start
        start = (
            st.xy_std * float(rng.standard_normal()),
            st.xy_std * float(rng.standard_normal()),
            math.radians(st.theta_std_deg) * float(rng.standard_normal()),
        )
        truth = PhysicalTruth(
            model=self.robot,
            seed=seed,
            left_wheel=w.left.draw(rng),
            right_wheel=w.right.draw(rng),
            track=w.track.draw(rng),
            spread_left_turn=max(1.0, s.icr_spread_left_turn.draw(rng)),
            spread_right_turn=max(1.0, s.icr_spread_right_turn.draw(rng)),
            spread_per_rate=s.spread_per_rate,
            longitudinal=min(max(s.longitudinal.draw(rng), 0.0), 0.4),
            lateral=0.0,
            icr_forward=0.0,
            slip_noise=s.noise,
            gyro_scale=g.scale.draw(rng),
            laser_forward=la.forward.draw(rng),
            laser_left=la.left.draw(rng),
            laser_yaw=math.radians(la.yaw_deg.draw(rng)),
            outlier_rate=la.outlier_rate,
            dropout_rate=la.dropout_rate,
            start_offset=start,
        )
        # drawn last, so adding them left every earlier draw of a seed as it was
        truth = dataclasses.replace(
            truth,
            lateral=min(max(s.lateral.draw(rng), 0.0), 1.0),
            icr_forward=min(max(s.icr_forward.draw(rng), -0.5), 0.5),
        )
        if w.omni_angles_deg is None:
            return truth
        a, b, c = (math.radians(angle) for angle in w.omni_angles_deg)
        angles = (a, b, c)
        return dataclasses.replace(truth, third_wheel=w.third.draw(rng), omni_angles=angles)


@dataclass(frozen=True, slots=True)
class PhysicalTruth:
    """One physical robot drawn from an error model: what the simulator runs, never what the
    robot program reads. Ratios are true over nominal; offsets add to the nominal mount."""

    model: str
    seed: int
    left_wheel: float
    right_wheel: float
    track: float
    spread_left_turn: float
    spread_right_turn: float
    spread_per_rate: float
    longitudinal: float
    lateral: float
    icr_forward: float
    slip_noise: float
    gyro_scale: float
    laser_forward: float
    laser_left: float
    laser_yaw: float
    outlier_rate: float
    dropout_rate: float
    #: (dx, dy, dθ): the true start is the believed one moved by this, in the world frame
    start_offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    #: a base on three omni wheels: where they sit (rad), and the third's true diameter ratio
    omni_angles: tuple[float, float, float] | None = None
    third_wheel: float = 1.0

    def believed(self, true_pose: tuple[float, float, float]) -> tuple[float, float, float]:
        """Where a robot placed by hand at ``true_pose`` is told it stands."""
        x, y, theta = true_pose
        dx, dy, dth = self.start_offset
        return x - dx, y - dy, theta - dth

    def describe(self) -> str:
        """One line for an experiment's conditions."""
        return (
            f"error model {self.model} (wheels L {100 * (self.left_wheel - 1):+.2f} % "
            f"R {100 * (self.right_wheel - 1):+.2f} %, track {100 * (self.track - 1):+.2f} %, "
            f"ICR spread {self.spread_left_turn:.3f}↺/{self.spread_right_turn:.3f}↻, "
            f"gyro scale {100 * self.gyro_scale:+.2f} %, laser yaw "
            f"{math.degrees(self.laser_yaw):+.2f}°, seed {self.seed})"
        )


def builtin_error_models() -> list[str]:
    """Robots with an error model shipped with freelook."""
    folder = resources.files(_ERRORS_PACKAGE)
    return sorted(
        p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml")
    )


def _validated(text: str, source: str) -> ErrorModel:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{source}: not valid TOML: {err}") from None
    try:
        return ErrorModel.model_validate(data)
    except ValidationError as err:
        problems = format_validation_error(source, err)
        raise ConfigError(f"{source}: invalid error model", problems) from None


def load_error_model(robot: str | RobotConfig | Path) -> ErrorModel:
    """The error model of a built-in robot (by name or its description) or a TOML file."""
    name = robot.name if isinstance(robot, RobotConfig) else str(robot)
    if isinstance(robot, Path) or name.endswith(".toml"):
        path = Path(name)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise ConfigError(f"{path}: cannot read the error model: {err}") from None
        return _validated(text, str(path))
    if name not in builtin_error_models():
        known = ", ".join(builtin_error_models())
        raise ConfigError(f"{name}: no error model for this robot (there are: {known})")
    resource = resources.files(_ERRORS_PACKAGE) / f"{name}.toml"
    return _validated(resource.read_text(encoding="utf-8"), f"config/errors/{name}.toml")


def physical_robot(config: RobotConfig, seed: int) -> PhysicalTruth | None:
    """The simulated robot's physics for ``seed``: its built-in error model's draw (None: the
    robot has none, and is simulated as its description says)."""
    if config.name not in builtin_error_models():
        return None
    return load_error_model(config.name).draw(seed)

"""``freelook hit``: the Horizontal Image Translation of a stereo pair on the virtual
station's screen, by hand."""

from __future__ import annotations

import json
import math
from typing import Annotated

import typer

__all__ = ["register"]

#: What each argument may be, in the unit it expects: people and headsets, not just numbers
#: (``--ipd 64`` is millimetres typed for metres). Option → (low, high, unit, what it is).
HUMAN_RANGES: dict[str, tuple[float, float, str, str]] = {
    "--resolution": (320.0, 16384.0, "px", "a headset's width, both eyes"),
    "--fov": (30.0, 170.0, "degrees", "one eye's horizontal field of view"),
    "--ipd": (0.045, 0.085, "m", "a person's interpupillary distance"),
    "--screen-distance": (0.25, 100.0, "m", "a virtual screen's distance"),
    "--screen-width": (0.1, 100.0, "m", "a virtual screen's width"),
    "--camera-width": (16.0, 16384.0, "px", "a camera image's width"),
}


def check_human_ranges(values: dict[str, float]) -> str | None:
    """Why one of ``values`` (option → value) is outside what people and headsets have, or
    None. Values that are not finite positive numbers are :func:`hit`'s to refuse."""
    for option, value in values.items():
        low, high, unit, what = HUMAN_RANGES[option]
        if not math.isfinite(value) or value <= 0 or low <= value <= high:
            continue
        guesses = []  # the units it may have been typed in
        if unit == "m":
            for name, per_metre in (("millimetres", 1000), ("centimetres", 100)):
                if low <= value / per_metre <= high:
                    guesses.append(f"{name} ({value / per_metre:g} m)")
        elif unit == "degrees" and low <= math.degrees(value) <= high:
            guesses.append(f"radians ({math.degrees(value):.0f} degrees)")
        hint = f"; {value:g} looks like {' or '.join(guesses)}" if guesses else ""
        return f"{option} {value:g}: expected {what} in {unit}, {low:g} to {high:g} {unit}{hint}"
    return None


def hit_command(
    resolution: Annotated[
        float, typer.Option("--resolution", help="headset's horizontal resolution, both eyes (px)")
    ],
    fov: Annotated[float, typer.Option("--fov", help="one eye's horizontal field of view (deg)")],
    ipd: Annotated[float, typer.Option("--ipd", help="interpupillary distance (m)")],
    screen_distance: Annotated[
        float, typer.Option("--screen-distance", help="virtual screen's distance (m)")
    ],
    screen_width: Annotated[
        float, typer.Option("--screen-width", help="virtual screen's width (m)")
    ],
    camera_width: Annotated[
        float, typer.Option("--camera-width", help="one camera image's width (px)")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Print d′, p_max, w′_s and p′_max (TAROS eqs. 1–4): how far to shift each stereo image
    outwards on the virtual screen."""
    from freelook.stereo import HitError, hit

    try:
        result = hit(resolution, fov, ipd, screen_distance, screen_width, camera_width)
    except HitError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None
    # numbers the equations take, but no person or headset has
    wrong = check_human_ranges(
        {
            "--resolution": resolution,
            "--fov": fov,
            "--ipd": ipd,
            "--screen-distance": screen_distance,
            "--screen-width": screen_width,
            "--camera-width": camera_width,
        }
    )
    if wrong is not None:
        typer.echo(f"error: {wrong}", err=True)
        raise typer.Exit(2)
    if as_json:
        typer.echo(json.dumps(result.as_dict()))
        return
    typer.echo(f"d′     projection distance   {result.projection_distance:9.2f} px (headset)")
    typer.echo(f"p_max  screen parallax limit {result.max_parallax:9.2f} px (headset)")
    typer.echo(f"w′_s   screen width          {result.screen_width:9.2f} px (headset)")
    typer.echo(f"p′_max shift of each image   {result.camera_shift:9.2f} px (camera), outwards")


def register(app: typer.Typer) -> None:
    """Add ``hit`` to the ``freelook`` command."""
    app.command("hit")(hit_command)

"""``freelook hit``: the virtual station's Horizontal Image Translation, by hand."""

from __future__ import annotations

import json
from typing import Annotated

import typer

__all__ = ["register"]


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
    from freelook.station import HitError, hit

    try:
        result = hit(resolution, fov, ipd, screen_distance, screen_width, camera_width)
    except HitError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None
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

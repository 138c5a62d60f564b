"""``freelook world``: list and draw worlds."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from freelook.maps import World

__all__ = ["draw_world", "parse_start", "register"]

world_app = typer.Typer(help="List and draw simulator worlds.", no_args_is_help=True)


def parse_start(text: str | None) -> tuple[float, float, float] | None:
    """``X,Y,THETA`` (m, m, degrees) as a pose (θ in rad); None for None."""
    import math

    from freelook.errors import ConfigError

    if text is None:
        return None
    parts = text.split(",")
    try:
        x, y, theta = (float(p) for p in parts)
    except ValueError:
        raise ConfigError(
            f"--start {text!r}: expected X,Y,THETA (metres, metres, degrees), e.g. 1.5,2,90"
        ) from None
    if not all(math.isfinite(v) for v in (x, y, theta)):
        raise ConfigError(f"--start {text!r}: expected finite numbers")
    return (x, y, math.radians(theta))


def draw_world(
    name_or_path: str,
    output: Path,
    robot: str = "pioneer3dx",
    start: tuple[float, float, float] | None = None,
) -> tuple[float, float, float]:
    """Draw a world's map with a metre grid, its objects in colour, its places and keep-out
    areas, and the start a robot would use there; returns that start."""
    import math

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from freelook.config import load_robot
    from freelook.maps import choose_start, load_world
    from freelook.record import draw_grid

    world = load_world(name_or_path)
    footprint = load_robot(robot).footprint
    chosen = choose_start(world, footprint, start)
    x0, x1, y0, y1 = world.extent
    fig, ax = plt.subplots(figsize=(8, 8 * (y1 - y0) / (x1 - x0) + 0.6))
    shown = world.occupancy.astype(np.float64)
    if world.unknown is not None:
        shown[world.unknown] = 0.3
    draw_grid(ax, shown, (x0, x1, y0, y1), "Greys")
    _draw_keep_out(ax, world)
    _draw_places_and_objects(ax, world)
    where = (
        "--start"
        if start is not None
        else world.start_from.removeprefix("the ") or "nearest free place to the origin"
    )
    _draw_start(ax, chosen, where)
    ax.set_xticks(range(math.floor(x0), math.ceil(x1) + 1))
    ax.set_yticks(range(math.floor(y0), math.ceil(y1) + 1))
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.25)
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    area = (x1 - x0) * (y1 - y0)
    ax.set_title(
        f"{world.name}: {x1 - x0:.1f} × {y1 - y0:.1f} m ({area:.0f} m²), "
        f"{world.resolution * 100:.0f} cm cells"
    )
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(output, dpi=100)
    plt.close(fig)
    return chosen


def _draw_keep_out(ax: Axes, world: World) -> None:
    """The keep-out areas (filled) and lines, in red."""
    from matplotlib.patches import Polygon

    for k, zone in enumerate(world.keep_out):
        label = "keep out" if k == 0 else None
        if zone.kind == "area":
            ax.add_patch(
                Polygon(zone.vertices, closed=True, color="tab:red", alpha=0.3, label=label)
            )
        else:
            (ax1, ay1), (ax2, ay2) = zone.vertices
            ax.plot([ax1, ax2], [ay1, ay2], color="tab:red", lw=2, label=label)


def _draw_places_and_objects(ax: Axes, world: World) -> None:
    """The named places (green diamonds) and the objects in their own colours, each named."""
    import math

    from matplotlib.patches import Circle, Polygon

    for place in world.places:
        ax.plot(place.x, place.y, "D", color="tab:green", ms=5)
        ax.annotate(
            place.name, (place.x, place.y), xytext=(4, -10), textcoords="offset points", fontsize=7
        )
    for obj in world.objects:
        color = tuple(c / 255 for c in obj.color)
        if obj.shape == "cylinder":
            ax.add_patch(Circle((obj.x, obj.y), obj.radius, color=color))
        else:
            c, s = math.cos(obj.yaw), math.sin(obj.yaw)
            hx, hy = obj.size_x / 2, obj.size_y / 2
            corners = [
                (obj.x + c * u - s * v, obj.y + s * u + c * v)
                for u, v in ((hx, hy), (-hx, hy), (-hx, -hy), (hx, -hy))
            ]
            ax.add_patch(Polygon(corners, closed=True, color=color))
        ax.annotate(obj.name, (obj.x, obj.y), xytext=(4, 4), textcoords="offset points", fontsize=8)


def _draw_start(ax: Axes, start: tuple[float, float, float], where: str) -> None:
    """The start pose as a blue dot with an arrow along its heading, labelled by its origin."""
    import math

    sx, sy, st = start
    ax.annotate(
        "",
        xy=(sx + 0.6 * math.cos(st), sy + 0.6 * math.sin(st)),
        xytext=(sx, sy),
        arrowprops={"arrowstyle": "->", "color": "tab:blue", "lw": 2},
    )
    ax.plot(sx, sy, "o", color="tab:blue", label=f"start ({where})")


@world_app.command("show")
def show(
    world: Annotated[str, typer.Argument(help="Built-in world name or a .toml/.yaml/.map file.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="PNG file to write.")],
    robot: Annotated[
        str, typer.Option(help="Robot name or TOML file (its footprint picks the start).")
    ] = "pioneer3dx",
    start: Annotated[
        str | None, typer.Option(help="Start pose X,Y,THETA (m, m, degrees) to check and mark.")
    ] = None,
) -> None:
    """Draw a world to a PNG, with the start a robot would use there."""
    import math

    from freelook.errors import FreelookError

    try:
        x, y, theta = draw_world(world, output, robot, parse_start(start))
    except FreelookError as err:
        typer.echo(str(err), err=True)
        raise typer.Exit(2) from None
    typer.echo(f"wrote {output}; start {x:.2f},{y:.2f},{math.degrees(theta):.0f}")


@world_app.command("list")
def list_worlds() -> None:
    """List the built-in worlds."""
    from freelook.maps import builtin_worlds

    for name in builtin_worlds():
        typer.echo(name)


def register(app: typer.Typer) -> None:
    """Add the ``world`` group to ``app``."""
    app.add_typer(world_app, name="world")

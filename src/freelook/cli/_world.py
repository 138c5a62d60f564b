"""``freelook world``: list and draw worlds."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["draw_world", "register"]

world_app = typer.Typer(help="List and draw simulator worlds.", no_args_is_help=True)


def draw_world(name_or_path: str, output: Path) -> None:
    """Draw a world's map with a metre grid, its objects in colour and the start pose."""
    import math

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Circle, Polygon

    from freelook.maps import load_world

    world = load_world(name_or_path)
    x0, x1, y0, y1 = world.extent
    fig, ax = plt.subplots(figsize=(8, 8 * (y1 - y0) / (x1 - x0) + 0.6))
    ax.imshow(
        world.occupancy,
        origin="lower",
        extent=(x0, x1, y0, y1),
        cmap="Greys",
        interpolation="nearest",
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
    sx, sy, st = world.start
    ax.annotate(
        "",
        xy=(sx + 0.6 * math.cos(st), sy + 0.6 * math.sin(st)),
        xytext=(sx, sy),
        arrowprops={"arrowstyle": "->", "color": "tab:blue", "lw": 2},
    )
    ax.plot(sx, sy, "o", color="tab:blue", label="start")
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


@world_app.command("show")
def show(
    world: Annotated[str, typer.Argument(help="Built-in world name or a .toml/.yaml/.map file.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="PNG file to write.")],
) -> None:
    """Draw a world to a PNG."""
    from freelook.errors import WorldError

    try:
        draw_world(world, output)
    except WorldError as err:
        typer.echo(str(err), err=True)
        raise typer.Exit(2) from None
    typer.echo(f"wrote {output}")


@world_app.command("list")
def list_worlds() -> None:
    """List the built-in worlds."""
    from freelook.maps import builtin_worlds

    for name in builtin_worlds():
        typer.echo(name)


def register(app: typer.Typer) -> None:
    """Add the ``world`` group to ``app``."""
    app.add_typer(world_app, name="world")

"""``freelook plot``: the example manoeuvres of Ögren 2013 (Figs. 6 and 7)."""

from __future__ import annotations

import math
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

__all__ = ["draw_figure", "register"]


class Figure(StrEnum):
    fig6 = "fig6"
    fig7 = "fig7"


def draw_figure(figure: str, output: Path, robot: str = "foi-ugv") -> None:
    """Integrate the manoeuvre under Free Look Control and draw camera and chassis paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Circle, Polygon

    from freelook.config import load_robot
    from freelook.kinematics import (
        DriveState,
        fig6_segments,
        fig7_object,
        fig7_segments,
        simulate_free_look,
    )

    config = load_robot(robot)
    if config.pan_tilt is None:
        raise typer.BadParameter(f"robot {robot!r} has no pan unit")
    L1, L2 = config.pan_tilt.mount_forward, config.pan_tilt.mount_left
    d = config.drive.d_eff
    if figure == "fig6":
        start = DriveState(0.0, 0.0, 0.0, math.pi / 2)  # chassis east, camera north
        segments = fig6_segments()
        title = "Fig. 6: left, forward, right, forward, left (camera frame)"
    else:
        start = DriveState(0.0, 0.0, 0.0, 0.0)
        segments = fig7_segments()
        title = "Fig. 7: approach, orbit the object keeping it centred, turn, drive on"
    trace = simulate_free_look(segments, start, L1, L2, d)

    fig, ax = plt.subplots(figsize=(7.5, 7))
    ax.plot(trace.chassis[:, 0], trace.chassis[:, 1], color="0.45", lw=1.5, label="chassis z")
    ax.plot(trace.camera[:, 0], trace.camera[:, 1], color="tab:blue", lw=2.2, label="camera x")
    length, width = config.footprint.length, config.footprint.width
    step = max(1, len(trace.t) // 14)
    for i in range(0, len(trace.t), step):
        x, y, th = trace.chassis[i]
        c, s = math.cos(th), math.sin(th)
        corners = [
            (x + c * bx - s * by, y + s * bx + c * by)
            for bx, by in (
                (length / 2, width / 2),
                (-length / 2, width / 2),
                (-length / 2, -width / 2),
                (length / 2, -width / 2),
            )
        ]
        ax.add_patch(Polygon(corners, closed=True, fill=False, ec="0.6", lw=0.8))
        cx, cy, psi = trace.camera[i]
        ax.annotate(
            "",
            xy=(cx + 0.35 * math.cos(psi), cy + 0.35 * math.sin(psi)),
            xytext=(cx, cy),
            arrowprops={"arrowstyle": "->", "color": "tab:blue", "lw": 1.2},
        )
    if figure == "fig7":
        ox, oy = fig7_object(start, L1, L2)
        ax.add_patch(Circle((ox, oy), 0.15, color="tab:red", label="object"))
    ax.set_aspect("equal")
    ax.grid(alpha=0.3)
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_title(f"{title}\n{config.name}: L1 = {L1} m, L2 = {L2} m, d_eff = {d} m", fontsize=10)
    ax.legend(loc="best", fontsize=9)
    fig.tight_layout()
    fig.savefig(output, dpi=110)
    plt.close(fig)


def plot(
    figure: Annotated[Figure, typer.Argument(help="Which figure of Ögren 2013 to draw.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="PNG file to write.")],
    robot: Annotated[str, typer.Option(help="Robot description (name or TOML file).")] = "foi-ugv",
) -> None:
    """Integrate a Free Look Control manoeuvre and draw camera and chassis trajectories."""
    draw_figure(figure.value, output, robot)
    typer.echo(f"wrote {output}")


def register(app: typer.Typer) -> None:
    """Add the ``plot`` command to ``app``."""
    app.command("plot")(plot)

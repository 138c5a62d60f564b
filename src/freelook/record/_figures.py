"""The figures of a run report, as PNG bytes (matplotlib, Agg): the path on the robot's map with
the safety slowdowns and stops (thesis Figs. 7.6, 7.8), x/y/θ tracking against a reference
(Fig. 7.7), commanded and measured velocities (Fig. 7.9), and rates and drops over time
(Fig. 7.12). ``path_figure`` and ``link_figure`` give the matplotlib figures themselves (their
axes, legends), ``plot_*`` the PNG bytes a report inlines."""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from freelook.record._run_data import DIRECTIONS, RunData
from freelook.record._run_stats import RESTART_DROP, SafetyEpisode, direction_name

__all__ = [
    "draw_grid",
    "drop_limits",
    "link_figure",
    "path_figure",
    "path_limits",
    "plot_link",
    "plot_path",
    "plot_tracking",
    "plot_velocities",
]


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Any, dpi: int = 100) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    _pyplot().close(fig)
    return buffer.getvalue()


def draw_grid(
    ax: Any,
    shade: npt.NDArray[np.float64],
    extent: tuple[float, float, float, float],
    cmap: str,
    **style: Any,
) -> None:
    """A world's grid on ``ax``: each cell's ``shade`` (0 to 1 through ``cmap``) as a square in
    map coordinates (``extent``: x0, x1, y0, y1)."""
    ax.imshow(
        shade,
        origin="lower",
        extent=extent,
        cmap=cmap,
        vmin=0.0,
        vmax=1.0,
        interpolation="nearest",
        **style,
    )


def path_limits(
    xs: npt.NDArray[np.float64], ys: npt.NDArray[np.float64], *, least: float = 3.0
) -> tuple[float, float, float, float]:
    """(x0, x1, y0, y1) around the path and its surroundings: a margin of 15 % or 1 m, and
    at least ``least`` metres on each axis (a straight path does not collapse to a line)."""
    limits: list[float] = []
    for values in (xs, ys):
        low, high = float(np.min(values)), float(np.max(values))
        span = high - low
        margin = max(1.0, 0.15 * span)
        low, high = low - margin, high + margin
        if high - low < least:
            middle = (low + high) / 2
            low, high = middle - least / 2, middle + least / 2
        limits.extend((low, high))
    return limits[0], limits[1], limits[2], limits[3]


def path_figure(run: RunData, episodes: list[SafetyEpisode]) -> Any:
    """The path on the robot's map (a matplotlib figure); its legend outside the map, on the
    right, so it covers neither an obstacle nor the path."""
    plt = _pyplot()
    # constrained: the layout makes room for the legend beside the map
    fig, ax = plt.subplots(figsize=(10, 6.5), layout="constrained")
    xs, ys = run.pose[:, 1], run.pose[:, 2]
    if len(run.reference):
        xs = np.concatenate((xs, run.reference[:, 1]))
        ys = np.concatenate((ys, run.reference[:, 2]))
    x0, x1, y0, y1 = path_limits(xs, ys)
    world = run.world
    if world is not None:
        wx0, wx1, wy0, wy1 = world.extent
        shade = np.where(world.obstacles(), 0.15, 0.97)
        if world.unknown is not None:
            shade[world.unknown] = 0.75
        draw_grid(ax, shade, (wx0, wx1, wy0, wy1), "gray", zorder=0, label="map")
        ax.fill([], [], color="0.15", label="obstacle (robot's map)")
    if len(run.reference):
        ax.plot(run.reference[:, 1], run.reference[:, 2], "--", color="orange", label="reference")
    ax.plot(run.pose[:, 1], run.pose[:, 2], color="tab:blue", lw=1.6, label="robot (localized)")
    ax.plot(*run.pose[0, 1:3], "o", color="tab:green", ms=7, label="start")
    ax.plot(*run.pose[-1, 1:3], "s", color="tab:blue", ms=6, label="end")
    times = run.pose[:, 0]
    for stop, style, colour, label in (
        (False, "^", "gold", "safety slowdown"),
        (True, "X", "red", "safety stop"),
    ):
        picked = [e for e in episodes if e.stop == stop]
        if not picked:
            continue
        index = np.clip(np.searchsorted(times, [e.start for e in picked]), 0, len(times) - 1)
        ax.plot(
            run.pose[index, 1],
            run.pose[index, 2],
            style,
            color=colour,
            mec="black",
            mew=0.6,
            ms=9,
            ls="none",
            label=f"{label} ({len(picked)})",
            zorder=5,
        )
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_aspect("equal", adjustable="box")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    # outside the axes: "best" weighs lines and markers, never the map's image, so inside it
    # would sit on a wall as often as not
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=8)
    title = "Path on the robot's map" if world is not None else "Path (no map recorded)"
    ax.set_title(title)
    return fig


def plot_path(run: RunData, episodes: list[SafetyEpisode]) -> bytes:
    return _png(path_figure(run, episodes), 110)


def plot_tracking(run: RunData) -> tuple[bytes, float]:
    plt = _pyplot()
    fig, axes = plt.subplots(3, 2, figsize=(10, 7), sharex=True)
    t = run.pose[:, 0] - run.t0
    tr = run.reference[:, 0] - run.t0
    for row, (idx, name) in enumerate(((1, "x [m]"), (2, "y [m]"), (3, "θ [deg]"))):
        scale = 180 / math.pi if idx == 3 else 1.0
        axes[row, 0].plot(t, run.pose[:, idx] * scale, label="robot")
        axes[row, 0].plot(tr, run.reference[:, idx] * scale, "--", label="reference")
        axes[row, 0].set_ylabel(name)
        err = run.reference[:, idx] - np.interp(tr, t, run.pose[:, idx])
        if idx == 3:
            err = (err + math.pi) % (2 * math.pi) - math.pi
        axes[row, 1].plot(tr, err * (scale if idx == 3 else 1000.0))
        axes[row, 1].set_ylabel("error [deg]" if idx == 3 else "error [mm]")
    ex = run.reference[:, 1] - np.interp(run.reference[:, 0], run.pose[:, 0], run.pose[:, 1])
    ey = run.reference[:, 2] - np.interp(run.reference[:, 0], run.pose[:, 0], run.pose[:, 2])
    axes[0, 0].legend(fontsize=8)
    axes[2, 0].set_xlabel("t [s]")
    axes[2, 1].set_xlabel("t [s]")
    fig.suptitle("Tracking against the reference")
    fig.tight_layout()
    return _png(fig), float(np.max(np.hypot(ex, ey)))


def plot_velocities(run: RunData) -> bytes:
    plt = _pyplot()
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(9, 5), sharex=True)
    if len(run.cmd):
        t = run.cmd[:, 0] - run.t0
        a1.step(t, run.cmd[:, 1], where="post", label="commanded (after safety)")
        a2.step(t, np.degrees(run.cmd[:, 2]), where="post", label="commanded (after safety)")
    if len(run.odom):
        a1.plot(run.odom[:, 0] - run.t0, run.odom[:, 4], label="measured")
        a2.plot(run.odom[:, 0] - run.t0, np.degrees(run.odom[:, 5]), label="measured")
    a1.set_ylabel("v [m/s]")
    a2.set_ylabel("ω [deg/s]")
    a2.set_xlabel("t [s]")
    a1.legend(fontsize=8)
    fig.suptitle("Commanded and measured velocities")
    fig.tight_layout()
    return _png(fig)


def _rates(
    packets: npt.NDArray[np.float64], edges: npt.NDArray[np.float64], t0: float
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64] | None]:
    """Link packets received (all kinds), the drop % from sequence gaps, and telemetry
    messages received (None: the rows do not say which are), per one-second bin."""
    accepted = packets[packets[:, 4] > 0]
    counts, _ = np.histogram(accepted[:, 0] - t0, edges)
    lost = np.zeros(len(edges) - 1)
    for stream in np.unique(accepted[:, 2]):
        rows = accepted[accepted[:, 2] == stream]
        gaps = np.diff(rows[:, 3])
        # a gap's packets count as lost when the packet after it arrives
        missing = np.clip(np.where(gaps < -RESTART_DROP, 0, gaps - 1), 0, None)
        lost += np.histogram(rows[1:, 0] - t0, edges, weights=missing)[0]
    total = counts + lost
    drop = np.divide(100.0 * lost, total, out=np.zeros(len(total)), where=total > 0)
    telemetry = None
    if packets.shape[1] > 5:
        telemetry = np.histogram(accepted[accepted[:, 5] > 0, 0] - t0, edges)[0].astype(float)
        if not telemetry.any():
            telemetry = None
    return counts.astype(float), drop, telemetry


def drop_limits(drops: list[npt.NDArray[np.float64]]) -> tuple[float, float]:
    """The drop axis: from 0 (a drop is never negative) to a little over the highest drop,
    at least 1 % (a run without drops shows a flat line at the bottom, not ±0.04 %)."""
    peak = max((float(np.max(d)) for d in drops if len(d)), default=0.0)
    return 0.0, min(105.0, max(1.0, 1.1 * peak))


def link_figure(run: RunData) -> Any:
    """Link packets (all kinds) and telemetry received per second, and the drop %, per
    direction (a matplotlib figure)."""
    plt = _pyplot()
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(9, 5.5), sharex=True)
    end = max(run.duration, 1.0)
    edges = np.arange(0.0, math.ceil(end) + 1.0, 1.0)
    drops = []
    for direction in DIRECTIONS:
        name = direction_name(direction)
        telemetry = None
        if direction in run.packets:
            counts, drop, telemetry = _rates(run.packets[direction], edges, run.t0)
        elif direction in run.link_stats and len(run.link_stats[direction]) > 1:
            stats = run.link_stats[direction]
            t = stats[:, 0] - run.t0
            received = np.interp(edges, t, stats[:, 1])
            lost = np.interp(edges, t, stats[:, 2])
            counts, lost_per = np.diff(received), np.diff(lost)
            total = counts + lost_per
            drop = np.divide(100.0 * lost_per, total, out=np.zeros(len(total)), where=total > 0)
            name += " (robot's count)"
        else:
            continue
        (line,) = a1.step(edges[:-1], counts, where="post", label=f"{name}: link packets")
        if telemetry is not None:
            a1.step(
                edges[:-1],
                telemetry,
                where="post",
                ls="--",
                color=line.get_color(),
                label=f"{name}: telemetry messages",
            )
        a2.step(edges[:-1], drop, where="post", label=name)
        drops.append(drop)
    a1.set_ylabel("received / s")
    a1.set_ylim(bottom=0.0)
    a2.set_ylabel("drop [%]")
    a2.set_ylim(*drop_limits(drops))
    a2.set_xlabel("t [s]")
    a1.legend(fontsize=8)
    fig.suptitle("Link packets (all kinds) and telemetry received, and drops, per direction")
    fig.tight_layout()
    return fig


def plot_link(run: RunData) -> bytes:
    return _png(link_figure(run))

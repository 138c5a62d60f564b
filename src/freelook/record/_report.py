"""``freelook report``: an HTML page with plots and tables from one recorded run.

Figures follow the thesis (seed 004 §7): path on the map with the reference and the safety
activations (Figs. 7.6, 7.8), x/y/θ tracking with errors (Fig. 7.7), commanded vs measured
velocities (Fig. 7.9), Rx/Tx rates and drops over time (Fig. 7.12), and a Table 7.1 row per
direction. Link figures are computed here from the raw packets in the file (sequence numbers
and receive stamps), independently of the statistics the live link published.
"""

from __future__ import annotations

import html
import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from freelook.record._reader import read_messages, recording_info

__all__ = ["DirectionFigures", "RunData", "build_report", "direction_figures", "load_run"]

NODE_FAILURE_GAP = 1.0  # s without any packet in a direction counts as a node failure


@dataclass
class RunData:
    """The streams of one run, as numpy arrays (times in seconds from the run's start)."""

    metadata: dict[str, str] = field(default_factory=dict)
    t0: float = 0.0
    pose: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 4)))  # t x y θ
    odom: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 6)))  # t x y θ v ω
    cmd: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 3)))  # t v ω
    reference: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 4)))
    safety: list[tuple[float, str, str, int, float]] = field(default_factory=list)
    #: per direction: (receive time, send time, stream, sequence, accepted)
    packets: dict[str, list[tuple[float, float, int, int, bool]]] = field(
        default_factory=lambda: defaultdict(list)
    )


def _yaw(q: Any) -> float:
    return 2.0 * math.atan2(float(q.z), float(q.w))


def _stamp(s: Any) -> float:
    return float(s.sec) + float(s.nanosec) * 1e-9


def load_run(path: str | Path) -> RunData:
    """Read the streams a report needs from a recording; an empty, cut-off or damaged file
    raises :class:`RecordingError`."""
    run = RunData()
    run.metadata = recording_info(path).metadata  # a damaged file stops here, named
    pose, odom, cmd, ref = [], [], [], []
    first: float | None = None
    for item in read_messages(path):
        if first is None:
            first = item.log_time
        m = item.message
        if item.topic == "/localization":
            p = m.pose.pose
            pose.append((item.log_time, p.position.x, p.position.y, _yaw(p.orientation)))
        elif item.topic == "/odom":
            p = m.pose.pose
            tw = m.twist.twist
            odom.append(
                (
                    item.log_time,
                    p.position.x,
                    p.position.y,
                    _yaw(p.orientation),
                    tw.linear.x,
                    tw.angular.z,
                )
            )
        elif item.topic == "/cmd_vel":
            cmd.append((item.log_time, m.linear.x, m.angular.z))
        elif item.topic == "/freelook/reference":
            ref.append((item.log_time, m.x, m.y, m.theta))
        elif item.topic == "/freelook/safety":
            run.safety.append((item.log_time, m.kind, m.detail, int(m.zone), float(m.scale)))
        elif item.topic.startswith("/link/"):
            direction = item.topic.removeprefix("/link/")
            run.packets[direction].append(
                (
                    _stamp(m.receive_stamp),
                    _stamp(m.send_stamp),
                    int(m.stream),
                    int(m.sequence),
                    bool(m.accepted),
                )
            )
    run.t0 = first or 0.0
    run.pose = np.array(pose, dtype=np.float64).reshape(-1, 4)
    run.odom = np.array(odom, dtype=np.float64).reshape(-1, 6)
    run.cmd = np.array(cmd, dtype=np.float64).reshape(-1, 3)
    run.reference = np.array(ref, dtype=np.float64).reshape(-1, 4)
    if len(run.pose) == 0 and len(run.odom):
        run.pose = run.odom[:, :4].copy()
    return run


@dataclass(frozen=True)
class DirectionFigures:
    """Thesis Table 7.1 figures for one direction, from the raw packets."""

    direction: str
    received: int
    lost: int
    drop_percent: float
    rejected: int
    node_failures: int
    operation_time: float
    mean_rate_hz: float


def direction_figures(
    packets: list[tuple[float, float, int, int, bool]], direction: str
) -> DirectionFigures:
    """Drop % from sequence gaps per stream; node failures = gaps over 1 s with no packet."""
    accepted = [p for p in packets if p[4]]
    rejected = len(packets) - len(accepted)
    by_stream: dict[int, set[int]] = defaultdict(set)
    for _, _, stream, seq, _ in accepted:
        by_stream[stream].add(seq)
    received = sum(len(s) for s in by_stream.values())
    expected = sum(max(s) - min(s) + 1 for s in by_stream.values() if s)
    lost = expected - received
    times = sorted(p[0] for p in packets)
    duration = times[-1] - times[0] if len(times) > 1 else 0.0
    gaps = np.diff(np.array(times)) if len(times) > 1 else np.zeros(0)
    failures = int(np.count_nonzero(gaps > NODE_FAILURE_GAP))
    drop = 100.0 * lost / expected if expected else 0.0
    rate = (len(accepted) - 1) / duration if duration > 0 else 0.0
    return DirectionFigures(direction, received, lost, drop, rejected, failures, duration, rate)


def _plot_path(run: RunData, out: Path, world_name: str | None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 6))
    if world_name:
        try:
            from freelook.maps import load_world

            world = load_world(world_name)
            x0, x1, y0, y1 = world.extent
            ax.imshow(
                world.obstacles(), origin="lower", extent=(x0, x1, y0, y1), cmap="Greys", alpha=0.8
            )
        except Exception:  # the map is context only; a run without it still reports
            pass
    if len(run.reference):
        ax.plot(run.reference[:, 1], run.reference[:, 2], "--", color="orange", label="reference")
    if len(run.pose):
        ax.plot(run.pose[:, 1], run.pose[:, 2], color="tab:blue", label="robot (localized)")
        for t, _kind, _, _, scale in run.safety:
            i = min(int(np.searchsorted(run.pose[:, 0], t)), len(run.pose) - 1)
            ax.plot(
                run.pose[i, 1],
                run.pose[i, 2],
                "o",
                color="red" if scale == 0 else "gold",
                ms=4,
                label=None,
            )
    ax.plot([], [], "o", color="gold", label="safety slowdown")
    ax.plot([], [], "o", color="red", label="safety stop")
    ax.set_aspect("equal")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.legend(loc="best", fontsize=8)
    ax.set_title("Path on the map")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def _plot_tracking(run: RunData, out: Path) -> float | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 2, figsize=(10, 7), sharex=True)
    max_error: float | None = None
    if len(run.pose):
        t = run.pose[:, 0] - run.t0
        for row, (idx, name) in enumerate(((1, "x [m]"), (2, "y [m]"), (3, "θ [deg]"))):
            scale = 180 / math.pi if idx == 3 else 1.0
            axes[row, 0].plot(t, run.pose[:, idx] * scale, label="robot")
            axes[row, 0].set_ylabel(name)
            if len(run.reference):
                tr = run.reference[:, 0] - run.t0
                axes[row, 0].plot(tr, run.reference[:, idx] * scale, "--", label="reference")
                interp = np.interp(tr, t, run.pose[:, idx])
                err = run.reference[:, idx] - interp
                if idx == 3:
                    err = (err + math.pi) % (2 * math.pi) - math.pi
                axes[row, 1].plot(tr, err * (scale if idx == 3 else 1000.0))
                axes[row, 1].set_ylabel("error [deg]" if idx == 3 else "error [mm]")
        if len(run.reference):
            tr = run.reference[:, 0]
            ex = run.reference[:, 1] - np.interp(tr, run.pose[:, 0], run.pose[:, 1])
            ey = run.reference[:, 2] - np.interp(tr, run.pose[:, 0], run.pose[:, 2])
            max_error = float(np.max(np.hypot(ex, ey)))
    axes[0, 0].legend(fontsize=8)
    axes[2, 0].set_xlabel("t [s]")
    axes[2, 1].set_xlabel("t [s]")
    fig.suptitle("Tracking against the reference")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return max_error


def _plot_velocities(run: RunData, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(2, 1, figsize=(9, 5), sharex=True)
    if len(run.cmd):
        a1.step(run.cmd[:, 0] - run.t0, run.cmd[:, 1], where="post", label="commanded")
        a2.step(run.cmd[:, 0] - run.t0, np.degrees(run.cmd[:, 2]), where="post", label="commanded")
    if len(run.odom):
        a1.plot(run.odom[:, 0] - run.t0, run.odom[:, 4], label="measured")
        a2.plot(run.odom[:, 0] - run.t0, np.degrees(run.odom[:, 5]), label="measured")
    a1.set_ylabel("v [m/s]")
    a2.set_ylabel("ω [deg/s]")
    a2.set_xlabel("t [s]")
    a1.legend(fontsize=8)
    fig.suptitle("Commanded and measured velocities")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def _plot_link(run: RunData, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(2, 1, figsize=(9, 5), sharex=True)
    for direction, packets in sorted(run.packets.items()):
        if not packets:
            continue
        times = np.array(sorted(p[0] for p in packets if p[4])) - run.t0
        if len(times) < 2:
            continue
        edges = np.arange(math.floor(times[0]), math.ceil(times[-1]) + 1.0, 1.0)
        counts, _ = np.histogram(times, edges)
        a1.step(edges[:-1], counts, where="post", label=direction.replace("_", " "))
        by_time = sorted((p[0] - run.t0, p[2], p[3]) for p in packets if p[4])
        last: dict[int, int] = {}
        lost_t = []
        for t, stream, seq in by_time:
            prev = last.get(stream)
            if prev is not None and seq > prev + 1:
                lost_t.extend([t] * (seq - prev - 1))
            if prev is None or seq > prev:
                last[stream] = seq
        lost, _ = np.histogram(np.array(lost_t), edges)
        total = counts + lost
        pct = np.divide(100.0 * lost, total, out=np.zeros(len(total)), where=total > 0)
        a2.step(edges[:-1], pct, where="post", label=direction.replace("_", " "))
    a1.set_ylabel("packets / s")
    a2.set_ylabel("drop [%]")
    a2.set_xlabel("t [s]")
    a1.legend(fontsize=8)
    fig.suptitle("Rx rates and drops per direction")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def build_report(path: str | Path, out_dir: str | Path) -> Path:
    """Write ``index.html`` and its PNG plots for the run at ``path`` into ``out_dir``."""
    run = load_run(path)  # first: a damaged file leaves no empty report folder behind
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    world = run.metadata.get("world")
    _plot_path(run, out / "path.png", world)
    max_error = _plot_tracking(run, out / "tracking.png")
    _plot_velocities(run, out / "velocities.png")
    _plot_link(run, out / "link.png")
    figures = [direction_figures(p, d) for d, p in sorted(run.packets.items())]
    (out / "link_table.json").write_text(json.dumps([f.__dict__ for f in figures], indent=2) + "\n")
    duration = 0.0
    if len(run.pose) > 1:
        duration = float(run.pose[-1, 0] - run.pose[0, 0])
    rows = "".join(
        f"<tr><td>{html.escape(f.direction.replace('_', ' '))}</td><td>{f.received}</td>"
        f"<td>{f.lost}</td><td>{f.drop_percent:.2f}</td><td>{f.rejected}</td>"
        f"<td>{f.node_failures}</td><td>{f.operation_time:.1f}</td><td>{f.mean_rate_hz:.1f}</td></tr>"
        for f in figures
    )
    meta = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>"
        for k, v in sorted(run.metadata.items())
    )
    tracking = (
        ""
        if max_error is None
        else f"<p>Max position error against the reference: <b>{max_error * 1000:.1f} mm</b></p>"
    )
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>freelook run report</title>
<style>body{{font:14px system-ui,sans-serif;max-width:1100px;margin:20px auto;color:#222}}
table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:3px 8px;text-align:right}}
td:first-child,th:first-child{{text-align:left}}
img{{max-width:100%;border:1px solid #ddd;margin:6px 0}}</style>
</head><body>
<h1>Run report</h1>
<p>{html.escape(str(path))} · {duration:.1f} s · {len(run.safety)} safety events</p>
<table>{meta}</table>
<h2>Link (thesis Table 7.1)</h2>
<table><tr><th>direction</th><th>received</th><th>lost</th><th>drop %</th><th>rejected</th>
<th>node failures</th><th>operation time [s]</th><th>mean rate [Hz]</th></tr>{rows}</table>
<h2>Path</h2><img src="path.png" alt="path on the map">
<h2>Tracking</h2>{tracking}<img src="tracking.png" alt="x, y, θ tracking">
<h2>Velocities</h2><img src="velocities.png" alt="commanded and measured velocities">
<h2>Link over time</h2><img src="link.png" alt="Rx rates and drops">
</body></html>
"""
    index = out / "index.html"
    index.write_text(page, encoding="utf-8")
    return index

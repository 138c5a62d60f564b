"""``freelook report``: one self-contained HTML page (plots inline) from one recorded run.

At the top, a few lines a user reads first (``_run_stats.summary_lines``). Then the thesis's
figures (``_figures.py``), each only when the run has its data, a strip of the driving
camera's frames (``_frames.py``), and Table 7.1 for both link directions (sent, received, lost,
drop %, node failures, operation time, rate of link packets of all kinds, rate of telemetry),
with what it counts and what a node failure is said under it. The run's streams are read by
``_run_data.load_run``.
"""

from __future__ import annotations

import base64
import html
import json
from dataclasses import asdict
from pathlib import Path

from freelook.record._figures import plot_link, plot_path, plot_tracking, plot_velocities
from freelook.record._frames import camera_strip, plot_strip
from freelook.record._run_data import RunData, load_run
from freelook.record._run_stats import (
    NODE_FAILURE_GAP,
    DirectionFigures,
    SafetyEpisode,
    direction_name,
    link_table,
    node_failures_text,
    safety_episodes,
    summary_lines,
)

__all__ = ["build_report"]


def _img(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode()
    return f'<img src="data:image/png;base64,{data}" alt="{html.escape(alt)}">'


def build_report(path: str | Path, out_dir: str | Path) -> Path:
    """Write ``index.html`` (one file: plots inline) and ``link_table.json`` for the run at
    ``path`` into ``out_dir``."""
    run = load_run(path)  # first: a damaged file leaves no empty report folder behind
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    table = link_table(run)
    (out / "link_table.json").write_text(
        json.dumps([asdict(f) for f in table], indent=2) + "\n", encoding="utf-8"
    )
    sections = _sections(run, safety_episodes(run))
    sections.append(_camera_section(path))
    index = out / "index.html"
    index.write_text(_page(Path(path).name, run, table, sections), encoding="utf-8")
    return index


def _sections(run: RunData, episodes: list[SafetyEpisode]) -> list[str]:
    """The figures the run has data for, each under its heading."""
    sections = []
    if len(run.pose):
        shown = (
            f' data-map="{run.world.shape[1]}x{run.world.shape[0]} cells"'
            if run.world is not None
            else ""
        )
        sections.append(
            f'<h2>Path</h2><figure id="path"{shown}>'
            + _img(plot_path(run, episodes), "path on the map")
            + "</figure>"
        )
    if len(run.reference) and len(run.pose) > 1:
        png, max_error = plot_tracking(run)
        sections.append(
            f"<h2>Tracking</h2><p>Max position error against the reference: "
            f"<b>{max_error * 1000:.1f} mm</b></p>"
            f'<figure id="tracking">{_img(png, "x, y, θ tracking")}</figure>'
        )
    if len(run.cmd) or len(run.odom):
        sections.append(
            '<h2>Velocities</h2><figure id="velocities">'
            + _img(plot_velocities(run), "commanded and measured velocities")
            + "</figure>"
        )
    if run.packets or run.link_stats:
        sections.append(
            '<h2>Link over time</h2><figure id="link">'
            + _img(plot_link(run), "link packets and telemetry received per second, and drops")
            + "</figure>"
        )
    return sections


def _camera_section(path: str | Path) -> str:
    """The driving camera's frames spread over the run ('' when it recorded none)."""
    strip = camera_strip(path)
    if strip is None:
        return ""
    skipped = f"; {strip.undecodable} frames did not decode" if strip.undecodable else ""
    if not strip.frames:
        return f"<h2>Camera</h2><p>No frame of the camera decodes ({strip.source}{skipped}).</p>"
    return (
        f'<h2>Camera</h2><figure id="camera-strip" data-frames="{len(strip.frames)}"'
        f' data-source="{html.escape(strip.source)}">'
        + _img(plot_strip(strip), "the driving camera's frames over the run")
        + f"<figcaption>{html.escape(strip.source)}{skipped}</figcaption></figure>"
    )


#: what the link table counts, said under it (so it is read as the cockpit's figures are)
_COUNTED = (
    "Every figure of this table counts link packets of all kinds: from the robot, its "
    "telemetry, each fragment of each camera frame (a frame is many packets), map chunks and "
    "replies; from the station, commands, heartbeats and requests. The telemetry column counts "
    "the robot's telemetry messages alone, as the cockpit's telemetry rate does."
)
_NODE_FAILURE = (
    "A node failure (the thesis's Table 7.1) is a stretch of more than {gap:g} s in which a "
    "direction's receiver got no packet at all: the link, or the end that sends, stopped "
    "for that long."
)


def _node_failures(run: RunData, table: list[DirectionFigures]) -> str:
    """The node-failure note: what one is, and this run's, each with when and how long."""
    found = [
        f"{direction_name(f.direction)}: {node_failures_text(f, run.t0)}"
        for f in table
        if f.node_failures
    ]
    this_run = "This run had none." if not found else "This run: " + "; ".join(found) + "."
    return _NODE_FAILURE.format(gap=NODE_FAILURE_GAP) + " " + this_run


def _page(name: str, run: RunData, table: list[DirectionFigures], sections: list[str]) -> str:
    """The whole page: summary, metadata, Table 7.1, then the figures."""
    rows = "".join(
        f'<tr data-direction="{f.direction}"><td>'
        f"{html.escape(direction_name(f.direction))}</td>"
        f"<td>{f.sent}</td><td>{f.received}</td><td>{f.lost}</td><td>{f.drop_percent:.2f}</td>"
        f"<td>{f.node_failures}</td><td>{f.operation_time:.1f}</td><td>{f.mean_rate_hz:.1f}</td>"
        f"<td>{'—' if f.telemetry_hz is None else f'{f.telemetry_hz:.1f}'}</td>"
        f"<td>{f.rejected}</td><td>{'raw packets' if f.source == 'packets' else 'robot'}</td></tr>"
        for f in table
    )
    meta = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>"
        for k, v in sorted(run.metadata.items())
    )
    summary = "".join(f"<li>{html.escape(line)}</li>" for line in summary_lines(run, table))
    notes = (
        f'<p id="link-counted">{html.escape(_COUNTED)}</p>'
        f'<p id="node-failures">{html.escape(_node_failures(run, table))}</p>'
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>freelook run report</title>
<style>body{{font:14px system-ui,sans-serif;max-width:1100px;margin:20px auto;color:#222}}
table{{border-collapse:collapse;margin:6px 0}}
td,th{{border:1px solid #ccc;padding:3px 8px;text-align:right}}
td:first-child,th:first-child{{text-align:left}}
#summary{{background:#f4f6f8;border:1px solid #d8dee4;padding:8px 8px 8px 28px}}
figure{{margin:0}}img{{max-width:100%;border:1px solid #ddd;margin:6px 0}}</style>
</head><body>
<h1>Run report</h1>
<p>{html.escape(name)}</p>
<ul id="summary">{summary}</ul>
<table>{meta}</table>
<h2>Link (thesis Table 7.1)</h2>
<table id="link-table"><tr><th>direction</th><th>sent</th><th>received</th><th>lost</th>
<th>drop %</th><th>node failures</th><th>operation time [s]</th>
<th>link packets/s (all kinds)</th><th>telemetry/s</th>
<th>refused</th><th>from</th></tr>{rows}</table>
{notes}
{"".join(sections)}
</body></html>
"""

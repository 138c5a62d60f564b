"""What the report's figures and text say, checked on the report's own outputs (the matplotlib
figures, the page's text, its JSON), not on pixels: the path's legend covers no obstacle, the
drop axis starts at 0 and has a sensible range when nothing dropped, each rate says what it
counts (link packets of all kinds, telemetry messages) and a node failure is explained."""

from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from freelook.maps import load_world
from freelook.record import (
    Recorder,
    RunData,
    build_report,
    direction_figures,
    drop_limits,
    link_figure,
    path_figure,
)

T0 = 1_800_000_000.0


def _packets(
    seconds: float,
    rate: float,
    *,
    telemetry_every: int = 0,
    lost_at: tuple[float, float] | None = None,
    gap: tuple[float, float] | None = None,
) -> npt.NDArray[np.float64]:
    """Rows (receive, send, stream, sequence, accepted, telemetry) of one direction's packets
    at ``rate``: every ``telemetry_every``-th one telemetry; the sequences inside ``lost_at``
    (start, end s) lost; nothing at all inside ``gap``."""
    rows = []
    for seq in range(round(seconds * rate)):
        t = seq / rate
        if lost_at is not None and lost_at[0] <= t < lost_at[1]:
            continue
        if gap is not None and gap[0] <= t < gap[1]:
            continue
        telemetry = telemetry_every > 0 and seq % telemetry_every == 0
        rows.append((T0 + t + 0.002, T0 + t, 0, seq, 1, telemetry))
    return np.array(rows, dtype=np.float64)


def _run(
    path: tuple[float, float, float, float] = (3.0, 3.0, 4.5, 3.0),
    **packets: npt.NDArray[np.float64],
) -> RunData:
    """A straight drive from (x0, y0) to (x1, y1) in the lab, and the given packets."""
    x0, y0, x1, y1 = path
    t = np.linspace(0.0, 10.0, 200)
    x, y = x0 + (x1 - x0) * t / 10, y0 + (y1 - y0) * t / 10
    pose = np.column_stack((T0 + t, x, y, np.zeros_like(t)))
    return RunData(t0=T0, pose=pose, world=load_world("lab"), packets=dict(packets))


def _bbox(artist: Any, fig: Any) -> Any:
    fig.canvas.draw()
    return artist.get_window_extent(fig.canvas.get_renderer())


@pytest.mark.parametrize(
    "path",
    [
        (3.0, 3.0, 4.5, 3.0),  # a straight drive: "best" put the legend on a wall
        (1.0, 1.0, 17.0, 12.0),  # across the lab, every wall in view
    ],
)
def test_the_path_legend_covers_no_obstacle_and_no_part_of_the_map(
    path: tuple[float, float, float, float],
) -> None:
    run = _run(path)
    fig = path_figure(run, [])
    (ax,) = fig.axes
    legend = ax.get_legend()
    box, axes_box, figure_box = _bbox(legend, fig), _bbox(ax, fig), fig.bbox
    # beside the map, not on it, and inside the picture
    assert not box.overlaps(ax.get_window_extent())
    assert box.x0 >= ax.get_window_extent().x1
    assert figure_box.x0 <= box.x0
    assert box.x1 <= figure_box.x1
    assert figure_box.y0 <= box.y0
    assert box.y1 <= figure_box.y1
    assert axes_box.width > 300
    # no obstacle cell in view lies under the legend (in data coordinates)
    world = run.world
    assert world is not None
    (lx0, ly0), (lx1, ly1) = ax.transData.inverted().transform([[box.x0, box.y0], [box.x1, box.y1]])
    vx0, vx1 = ax.get_xlim()
    vy0, vy1 = ax.get_ylim()
    rows, cols = np.nonzero(world.obstacles())
    cx = world.origin[0] + (cols + 0.5) * world.resolution
    cy = world.origin[1] + (rows + 0.5) * world.resolution
    in_view = (cx >= vx0) & (cx <= vx1) & (cy >= vy0) & (cy <= vy1)
    assert in_view.any()  # the walls are in view
    under = in_view & (cx >= lx0) & (cx <= lx1) & (cy >= ly0) & (cy <= ly1)
    assert not under.any()
    labels = [t.get_text() for t in legend.get_texts()]
    assert "obstacle (robot's map)" in labels
    assert "robot (localized)" in labels


def test_the_drop_axis_starts_at_zero_and_has_a_range_when_nothing_dropped() -> None:
    run = _run(robot_to_operator=_packets(10.0, 100.0, telemetry_every=3))
    fig = link_figure(run)
    rates, drops = fig.axes
    assert drops.get_ylim() == (0.0, 1.0)  # not −0.04…0.04 %
    assert rates.get_ylim()[0] == 0.0
    assert drops.get_ylabel() == "drop [%]"
    labels = [t.get_text() for t in rates.get_legend().get_texts()]
    assert labels == [
        "robot → operator: link packets",
        "robot → operator: telemetry messages",
    ]
    assert "all kinds" in fig.texts[0].get_text()  # the title says what is counted


def test_the_drop_axis_reaches_over_the_highest_drop() -> None:
    # a second in which a fifth of the packets were lost, the rest clean
    packets = _packets(10.0, 100.0, lost_at=(4.0, 4.2))
    fig = link_figure(_run(operator_to_robot=packets))
    low, high = fig.axes[1].get_ylim()
    assert low == 0.0
    assert 20.0 < high <= 25.0
    assert drop_limits([np.zeros(5)]) == (0.0, 1.0)
    assert drop_limits([np.array([0.0, 100.0])]) == (0.0, 105.0)
    assert drop_limits([]) == (0.0, 1.0)


def test_each_rate_says_what_it_counts() -> None:
    # 100 packets a second from the robot (its camera's fragments among them), a third of
    # them telemetry: 33 telemetry messages a second, as the cockpit would say
    figures = direction_figures(_packets(20.0, 100.0, telemetry_every=3), "robot_to_operator")
    assert figures.mean_rate_hz == pytest.approx(100.0, rel=0.01)
    assert figures.telemetry_hz == pytest.approx(100.0 / 3, rel=0.02)
    # a recording from before the telemetry column: its packets say nothing of kinds
    old = direction_figures(_packets(5.0, 10.0)[:, :5], "robot_to_operator")
    assert old.telemetry_hz is None


def _record(path: Path) -> None:
    """A recording of both directions: the robot's telemetry beside its camera's fragments
    at 100 packets a second, with 1.5 s in which nothing arrived from the robot."""
    clock = [T0]
    recorder = Recorder(path, clock=lambda: clock[0], metadata={"robot": "pioneer3dx"})
    rows = []
    down = _packets(12.0, 100.0, telemetry_every=3, gap=(5.0, 6.5))
    rows += [("robot_to_operator", r) for r in down]
    rows += [("operator_to_robot", r) for r in _packets(12.0, 21.0)]
    for direction, (receive, send, stream, seq, _, telemetry) in sorted(
        rows, key=lambda r: r[1][0]
    ):
        clock[0] = receive
        recorder.packet(
            direction,  # type: ignore[arg-type]
            b"\x00" * 8,
            send_time=send,
            receive_time=receive,
            wire="native",
            accepted=True,
            kind="Telemetry" if telemetry else "VideoFrame",
            stream=int(stream),
            sequence=int(seq),
        )
        if telemetry:
            recorder.odom(send, 0.01 * (receive - T0), 0.0, 0.0, 0.1, 0.0)
    recorder.close()


def _text(page: str, element: str) -> str:
    found = re.search(rf'<p id="{element}">(.*?)</p>', page, re.S)
    assert found is not None, element
    return html.unescape(found.group(1))


def test_the_page_says_what_it_counts_and_explains_node_failures(tmp_path: Path) -> None:
    path = tmp_path / "run.mcap"
    _record(path)
    page = build_report(path, tmp_path / "report").read_text()
    headers = re.findall(r"<th>(.*?)</th>", page)
    assert headers[7:9] == ["link packets/s (all kinds)", "telemetry/s"]
    table = {
        row["direction"]: row
        for row in json.loads((tmp_path / "report" / "link_table.json").read_text())
    }
    down, up = table["robot_to_operator"], table["operator_to_robot"]
    assert down["mean_rate_hz"] == pytest.approx(100.0 * 10.5 / 12.0, rel=0.05)
    assert down["telemetry_hz"] == pytest.approx(down["mean_rate_hz"] / 3, rel=0.05)
    assert up["telemetry_hz"] is None  # the station sends none
    row = re.search(r'<tr data-direction="robot_to_operator">(.*?)</tr>', page)
    assert row is not None
    cells = re.findall(r"<td>(.*?)</td>", row.group(1))
    assert cells[7] == f"{down['mean_rate_hz']:.1f}"
    assert cells[8] == f"{down['telemetry_hz']:.1f}"
    assert (
        re.findall(r"<td>(.*?)</td>", page.split('data-direction="operator_to_robot">')[1])[8]
        == "—"
    )
    counted = _text(page, "link-counted")
    assert "link packets of all kinds" in counted
    assert "telemetry messages alone, as the cockpit's telemetry rate does" in counted
    # one node failure: said what it is, and when and how long this one was
    assert down["node_failures"] == 1
    (gap,) = down["gaps"]
    assert gap[1] == pytest.approx(1.51, abs=0.02)
    failures = _text(page, "node-failures")
    assert failures.startswith(
        "A node failure (the thesis's Table 7.1) is a stretch of more than 1 s"
    )
    assert "robot → operator: 1 node failure: nothing received for 1.5 s from 5.0 s." in failures
    assert "1 node failure: nothing received for 1.5 s from 5.0 s (robot → operator)" in page
    assert "1 node failures" not in page


def test_a_run_without_node_failures_says_so(tmp_path: Path) -> None:
    path = tmp_path / "run.mcap"
    clock = [T0]
    with Recorder(path, clock=lambda: clock[0]) as recorder:
        for receive, send, stream, seq, _, _ in _packets(5.0, 20.0):
            clock[0] = receive
            recorder.packet(
                "robot_to_operator",
                b"",
                send_time=send,
                receive_time=receive,
                wire="native",
                accepted=True,
                kind="Telemetry",
                stream=int(stream),
                sequence=int(seq),
            )
            recorder.odom(send, 0.0, 0.0, 0.0, 0.0, 0.0)
    page = build_report(path, tmp_path / "report").read_text()
    assert _text(page, "node-failures").endswith("This run had none.")
    assert math.isfinite(
        json.loads((tmp_path / "report" / "link_table.json").read_text())[0]["telemetry_hz"]
    )

"""A run's figures: thesis Table 7.1 per link direction, safety events, and the summary a user
reads first (distance, duration, top speed, safety events by kind, link drop per direction,
anything unusual).

Link figures come from the raw packets a direction's receiver recorded (sequence numbers and
receive stamps), independently of the statistics the live link published; a direction whose
receiver did not record (the robot's, in a station's recording) is tabled from the robot's own
counts in its telemetry and the station's count of what it sent.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from freelook.record._run_data import DIRECTIONS, RunData

__all__ = [
    "NODE_FAILURE_GAP",
    "RESTART_DROP",
    "DirectionFigures",
    "SafetyEpisode",
    "direction_figures",
    "direction_name",
    "link_table",
    "node_failures_text",
    "reported_figures",
    "safety_episodes",
    "summary_lines",
]

#: s without any packet in a direction: a node failure (the thesis's Table 7.1: the link, or
#: one end, stopped for that long)
NODE_FAILURE_GAP = 1.0
EPISODE_GAP = 0.5  # s: safety reports of one kind closer than this are one event
RESTART_DROP = 64  # a sequence falling further than the replay window: the sender restarted
STOP_KINDS = frozenset({"watchdog", "estop", "bumper", "hardware"})


@dataclass(frozen=True, slots=True)
class SafetyEpisode:
    """One safety event: reports of one kind with no gap over 0.5 s between them."""

    start: float  # s, log time
    end: float
    kind: str  # zone, approach, watchdog, estop, bumper, hardware (joined by "|")
    scale: float  # the smallest factor applied during it

    @property
    def stop(self) -> bool:
        """Whether the robot was stopped, not only slowed."""
        return self.scale <= 0.0 or bool(STOP_KINDS & set(self.kind.split("|")))


@dataclass(frozen=True)
class DirectionFigures:
    """Thesis Table 7.1 figures for one direction. Every count is of link packets of all
    kinds (from the robot: telemetry, each fragment of each camera frame, map chunks, replies;
    from a station: commands, heartbeats, requests); ``telemetry_hz`` counts the robot's
    telemetry messages alone, as the cockpit's telemetry rate does."""

    direction: str
    sent: int  # numbered by the sender (raw packets), or the sender's own count
    received: int
    lost: int
    drop_percent: float
    rejected: int  # refused by the receiver (CRC, authentication, replay, values)
    node_failures: int  # gaps over NODE_FAILURE_GAP (1 s) with nothing received
    operation_time: float  # s, first to last packet received
    mean_rate_hz: float  # link packets of all kinds received per second
    source: str = "packets"  # "packets": from the raw packets; "robot": its telemetry counts
    #: telemetry messages received per second (None: the direction carries none, or its
    #: receiver recorded no packets)
    telemetry_hz: float | None = None
    #: the node failures: (when the gap began, on the receiver's clock; how long it was), s
    gaps: tuple[tuple[float, float], ...] = ()


def _gaps(times: npt.NDArray[np.float64]) -> tuple[tuple[float, float], ...]:
    """Each stretch of over :data:`NODE_FAILURE_GAP` between packets received."""
    steps = np.diff(times)
    return tuple(
        (float(times[i]), float(steps[i])) for i in np.flatnonzero(steps > NODE_FAILURE_GAP)
    )


def direction_figures(packets: npt.NDArray[np.float64], direction: str) -> DirectionFigures:
    """Figures from a direction's raw packets (rows of receive time, send time, stream,
    sequence, accepted and, optionally, telemetry): drop % from sequence gaps per stream (a
    sender that restarted its numbering starts a new run), node failures from receive gaps."""
    packets = np.asarray(packets, dtype=np.float64)
    if packets.ndim != 2:
        packets = packets.reshape(-1, 5)
    accepted = packets[packets[:, 4] > 0]
    received = expected = 0
    for stream in np.unique(accepted[:, 2]):
        seqs = accepted[accepted[:, 2] == stream, 3].astype(np.int64)  # in receive order
        restarts = np.flatnonzero(np.diff(seqs) < -RESTART_DROP) + 1
        for run in np.split(seqs, restarts):
            unique = np.unique(run)
            received += len(unique)
            expected += int(unique[-1] - unique[0] + 1)
    lost = expected - received
    times = np.sort(packets[:, 0])
    duration = float(times[-1] - times[0]) if len(times) > 1 else 0.0
    gaps = _gaps(times)
    drop = 100.0 * lost / expected if expected else 0.0
    rate = (len(accepted) - 1) / duration if duration > 0 else 0.0
    rejected = len(packets) - len(accepted)
    telemetry_hz = None
    if packets.shape[1] > 5:
        telemetry = np.sort(accepted[accepted[:, 5] > 0, 0])
        if len(telemetry) > 1 and telemetry[-1] > telemetry[0]:
            telemetry_hz = (len(telemetry) - 1) / float(telemetry[-1] - telemetry[0])
    return DirectionFigures(
        direction,
        expected,
        received,
        lost,
        drop,
        rejected,
        len(gaps),
        duration,
        rate,
        telemetry_hz=telemetry_hz,
        gaps=gaps,
    )


def reported_figures(stats: npt.NDArray[np.float64], direction: str) -> DirectionFigures:
    """Figures from the receiver's own counts over time (log time, received, lost, refused,
    sent): a node failure is over 1 s in which its received count did not grow."""
    t, received, lost, refused, sent = stats.T
    grew = np.flatnonzero(np.diff(received) > 0) + 1
    times = t[grew] if len(grew) else t[:1]
    duration = float(times[-1] - times[0]) if len(times) > 1 else 0.0
    gaps = _gaps(times)
    n_received, n_lost = int(received.max()), int(lost.max())
    total = n_received + n_lost
    n_sent = int(sent.max()) or total
    rate = (received[grew[-1]] - received[grew[0]]) / duration if duration > 0 else 0.0
    return DirectionFigures(
        direction,
        n_sent,
        n_received,
        n_lost,
        100.0 * n_lost / total if total else 0.0,
        int(refused.max()),
        len(gaps),
        duration,
        float(rate),
        "robot",
        gaps=gaps,
    )


def link_table(run: RunData) -> list[DirectionFigures]:
    """Table 7.1: both directions, from raw packets where the receiver recorded them."""
    rows = []
    for direction in DIRECTIONS:
        if direction in run.packets:
            rows.append(direction_figures(run.packets[direction], direction))
        elif direction in run.link_stats:
            rows.append(reported_figures(run.link_stats[direction], direction))
    return rows


def _commanded_before(run: RunData, t: float) -> bool:
    """Whether the robot was commanded to move in the second before ``t``."""
    if not len(run.cmd):
        return True
    window = run.cmd[(run.cmd[:, 0] >= t - 1.0) & (run.cmd[:, 0] < t)]
    return bool(np.any(np.abs(window[:, 1:]) > 1e-3))


def safety_episodes(run: RunData) -> list[SafetyEpisode]:
    """The run's safety events: reports of one kind merged while they keep coming. A
    watchdog report while nothing was commanded (no command yet, or the operator stopped and
    only heartbeats come) stopped nothing and is not an event."""
    open_: dict[str, list[float]] = {}
    episodes: list[SafetyEpisode] = []
    for t, kind, _, _, scale in run.safety:
        current = open_.get(kind)
        if current is not None and t - current[1] <= EPISODE_GAP:
            current[1], current[2] = t, min(current[2], scale)
            continue
        if current is not None:
            episodes.append(SafetyEpisode(current[0], current[1], kind, current[2]))
        open_[kind] = [t, t, scale]
    episodes.extend(SafetyEpisode(a, b, kind, s) for kind, (a, b, s) in open_.items())
    return sorted(
        (e for e in episodes if e.kind != "watchdog" or _commanded_before(run, e.start)),
        key=lambda e: e.start,
    )


def direction_name(direction: str) -> str:
    """``robot_to_operator`` as a reader reads it: ``robot → operator``."""
    return direction.replace("_to_", " → ").replace("_", " ")


def node_failures_text(figures: DirectionFigures, t0: float) -> str:
    """``2 node failures: nothing received for 1.4 s from 12.3 s, …`` (times into the run)."""
    count = figures.node_failures
    noun = "node failure" if count == 1 else "node failures"
    if not figures.gaps:
        return f"{count} {noun}"
    shown = ", ".join(
        f"{length:.1f} s from {start - t0:.1f} s" for start, length in figures.gaps[:4]
    )
    more = f" and {len(figures.gaps) - 4} more" if len(figures.gaps) > 4 else ""
    return f"{count} {noun}: nothing received for {shown}{more}"


def _distance(run: RunData) -> float:
    track = run.odom if len(run.odom) else run.pose
    if len(track) < 2:
        return 0.0
    return float(np.sum(np.hypot(np.diff(track[:, 1]), np.diff(track[:, 2]))))


def summary_lines(run: RunData, table: list[DirectionFigures] | None = None) -> list[str]:
    """What a user reads first: how far, how long, how fast, what safety did, how the link
    held up, and what was unusual."""
    table = link_table(run) if table is None else table
    lines = [f"Drove {_distance(run):.2f} m in {run.duration:.1f} s"]
    if len(run.odom):
        speeds = np.abs(run.odom[:, 4])
        moving = speeds[speeds > 0.01]
        mean = f", {np.mean(moving):.2f} m/s on average while moving" if len(moving) else ""
        lines[0] += f"; top speed {speeds.max():.2f} m/s{mean}."
    else:
        lines[0] += "."
    episodes = safety_episodes(run)
    if episodes:
        kinds: dict[str, list[SafetyEpisode]] = defaultdict(list)
        for e in episodes:
            kinds[e.kind].append(e)
        parts = [
            f"{kind} {len(es)} × ({sum(e.end - e.start for e in es):.1f} s)"
            for kind, es in sorted(kinds.items())
        ]
        lines.append("Safety events: " + ", ".join(parts) + ".")
    else:
        lines.append("Safety events: none.")
    if table:
        lines.append(
            "Link drop: "
            + ", ".join(f"{direction_name(f.direction)} {f.drop_percent:.2f} %" for f in table)
            + "."
        )
        rates = [
            f"{direction_name(f.direction)} {f.mean_rate_hz:.0f} packets/s of all kinds"
            + (f" (telemetry {f.telemetry_hz:.0f}/s)" if f.telemetry_hz is not None else "")
            for f in table
        ]
        lines.append("Link rates: " + ", ".join(rates) + ".")
    unusual = []
    for e in episodes:
        if e.stop and e.kind != "zone":
            unusual.append(f"{e.kind} stop at {e.start - run.t0:.1f} s ({e.end - e.start:.1f} s)")
    for f in table:
        name = direction_name(f.direction)
        if f.rejected:
            unusual.append(f"{f.rejected} packets refused ({name})")
        if f.node_failures:
            unusual.append(f"{node_failures_text(f, run.t0)} ({name})")
    engaged = [t for t, _, estop in run.modes if estop]
    if engaged:
        unusual.append(f"e-stop engaged at {engaged[0] - run.t0:.1f} s")
    lines.append("Unusual: " + ("; ".join(unusual[:12]) if unusual else "nothing") + ".")
    return lines

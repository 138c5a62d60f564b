"""``python -m tools.attack``: a seeded adversarial campaign against real freelook processes on
loopback, interface by interface, with the figures the security notes quote.

Each probe starts what it attacks (a robot program, a simulated session with its cockpit and
Foxglove bridge, a JAUS gateway) as its own process, or hands files and bytes to the loaders
and decoders the commands reach, and counts inputs tried, crashes and unauthorised effects.
The floods (:func:`tools.attack.flood_trial`) add the driver's telemetry and video share
against the same run without a flood. The same seed tries the same inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tools.attack._cockpit import attack_cockpit_server
from tools.attack._files import attack_decoders, attack_files
from tools.attack._flood import Payload, Target, flood_trial
from tools.attack._forged import attack_forged_sources
from tools.attack._jaus import attack_jaus
from tools.attack._judp import attack_judp
from tools.attack._keys import attack_keys
from tools.attack._link import attack_robot_serial, attack_robot_udp
from tools.attack._memory import attack_memory
from tools.attack._ros2 import attack_ros2
from tools.attack._tally import Tally
from tools.attack._video import attack_video
from tools.attack._web import attack_web
from tools.attack._zenoh import attack_zenoh

__all__ = ["PROBES", "CampaignOptions", "campaign_lines", "run_campaign"]


@dataclass(frozen=True)
class Flood:
    target: Target
    payload: Payload
    sockets: int

    @property
    def name(self) -> str:
        source = "one socket" if self.sockets == 1 else f"{self.sockets} sockets"
        return f"flood: {self.payload.replace('_', '-')} at the {self.target}, {source}"


FLOODS = (
    Flood("robot", "wrong_key", 1),
    Flood("robot", "garbage", 64),
    Flood("station", "wrong_key", 1),
    Flood("station", "garbage", 64),
)
THOROUGH_FLOODS = (
    *FLOODS,
    Flood("robot", "wrong_key", 64),
    Flood("robot", "garbage", 1),
    Flood("station", "wrong_key", 64),
    Flood("station", "garbage", 1),
)


@dataclass(frozen=True)
class CampaignOptions:
    seed: int = 0
    count: int = 2000  # hostile inputs per interface (files and decoders: per kind, a tenth)
    flood_pps: float = 100_000.0
    flood_seconds: float = 3.0
    floods: tuple[Flood, ...] = FLOODS
    only: frozenset[str] = frozenset()  # probe names; empty: all
    memory_seconds: float = 20.0  # s the memory probe samples a robot's memory
    video_seconds: float = 3.0  # s of each hostile video attack at the station
    ros2_seconds: float = 3.0  # s of each hostile ROS 2 attack

    @classmethod
    def thorough(cls, seed: int = 0) -> CampaignOptions:
        return cls(
            seed,
            count=20_000,
            flood_seconds=5.0,
            floods=THOROUGH_FLOODS,
            memory_seconds=180.0,
            video_seconds=10.0,
            ros2_seconds=10.0,
        )


def _udp(o: CampaignOptions) -> list[Tally]:
    return [attack_robot_udp(o.count, o.seed)]


def _serial(o: CampaignOptions) -> list[Tally]:
    return [attack_robot_serial(max(100, o.count // 4), o.seed)]


def _web(o: CampaignOptions) -> list[Tally]:
    return list(attack_web(max(50, o.count // 4), o.seed))


def _cockpit(o: CampaignOptions) -> list[Tally]:
    return [attack_cockpit_server(max(8, min(o.count // 50, 120)), o.seed)]


def _keys(o: CampaignOptions) -> list[Tally]:
    return [attack_keys(max(20, o.count // 10), o.seed)]


def _jaus(o: CampaignOptions) -> list[Tally]:
    return [attack_jaus(o.count, o.seed)]


def _judp(o: CampaignOptions) -> list[Tally]:
    return [attack_judp(o.seed, max(100, o.count // 5))]


def _zenoh(o: CampaignOptions) -> list[Tally]:
    return [attack_zenoh(o.count, o.seed)]


def _files(o: CampaignOptions) -> list[Tally]:
    return [attack_files(max(20, o.count // 10), o.seed)]


def _decoders(o: CampaignOptions) -> list[Tally]:
    return [attack_decoders(max(100, o.count // 2), o.seed)]


def _memory(o: CampaignOptions) -> list[Tally]:
    return [attack_memory(o.memory_seconds, o.seed)]


def _video(o: CampaignOptions) -> list[Tally]:
    return [attack_video(o.video_seconds, o.seed)]


def _forged(o: CampaignOptions) -> list[Tally]:
    return [attack_forged_sources(2 * o.video_seconds, o.seed)]


def _ros2(o: CampaignOptions) -> list[Tally]:
    return [attack_ros2(o.ros2_seconds, o.seed)]


def _floods(o: CampaignOptions) -> list[Tally]:
    tallies = []
    for flood in o.floods:
        tally = Tally(flood.name)
        try:
            result = flood_trial(
                o.flood_pps,
                o.flood_seconds,
                target=flood.target,
                payload=flood.payload,
                sockets=flood.sockets,
            )
        except Exception as err:  # a flood that ends the robot or the station
            tally.crash(f"{type(err).__name__}: {err}"[:200])
            tallies.append(tally)
            continue
        tally.tried(flood.payload, round(result.flood_pps * o.flood_seconds))
        tally.telemetry_share = result.telemetry_hz / max(result.telemetry_hz_quiet, 1e-9)
        tally.video_share = result.video_fps / max(result.video_fps_quiet, 1e-9)
        if result.watchdog_stops:
            tally.effect(f"{result.watchdog_stops} watchdog stops while the driver drove")
        if result.driving_share < 0.9:
            tally.effect(f"the robot turned as commanded in {result.driving_share:.0%} only")
        tally.notes.append(
            f"{result.flood_pps:,.0f} packets/s; telemetry {result.telemetry_hz:.1f} Hz "
            f"(quiet {result.telemetry_hz_quiet:.1f}), video {result.video_fps:.1f} fps "
            f"(quiet {result.video_fps_quiet:.1f}); {result.refused:,} refused or dropped; "
            f"turning as commanded in {result.driving_share:.0%} of the telemetry"
        )
        tallies.append(tally)
    return tallies


PROBES: dict[str, Callable[[CampaignOptions], list[Tally]]] = {
    "udp": _udp,
    "serial": _serial,
    "web": _web,
    "cockpit": _cockpit,
    "jaus": _jaus,
    "judp": _judp,
    "ros2": _ros2,
    "zenoh": _zenoh,
    "files": _files,
    "decoders": _decoders,
    "keys": _keys,
    "memory": _memory,
    "video": _video,
    "forged": _forged,
    "floods": _floods,
}


def run_campaign(
    options: CampaignOptions, progress: Callable[[str], None] = lambda line: None
) -> list[Tally]:
    """Every probe (or those ``options.only`` names) in turn; a probe that cannot run (a
    process that does not start) is a crash of its interface, with the reason."""
    tallies: list[Tally] = []
    for name, probe in PROBES.items():
        if options.only and name not in options.only:
            continue
        progress(f"attacking: {name}")
        try:
            found = probe(options)
        except Exception as err:  # reported; the campaign goes on
            failed = Tally(name)
            failed.crash(f"the probe could not run: {type(err).__name__}: {err}"[:300])
            found = [failed]
        tallies.extend(found)
        for tally in found:
            progress("  " + _line(tally))
    return tallies


def _share(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f} %"


def _line(t: Tally, width: int = 44) -> str:
    return (
        f"{t.interface:<{width}} {t.inputs:>9,} {t.crashes:>7} {t.unauthorised:>12} "
        f"{_share(t.telemetry_share):>9} {_share(t.video_share):>7}"
    )


def campaign_lines(tallies: list[Tally]) -> list[str]:
    """The figures as a table, its first column as wide as the longest interface's name,
    then each interface's notes."""
    width = max([44, *(len(t.interface) for t in tallies)])
    header = (
        f"{'interface':<{width}} {'inputs':>9} {'crashes':>7} {'unauthorised':>12} "
        f"{'telemetry':>9} {'video':>7}"
    )
    lines = [header, "-" * len(header)]
    lines += [_line(t, width) for t in tallies]
    total = sum(t.inputs for t in tallies)
    crashes = sum(t.crashes for t in tallies)
    effects = sum(t.unauthorised for t in tallies)
    lines.append(f"{'total':<{width}} {total:>9,} {crashes:>7} {effects:>12}")
    lines.append("")
    for t in tallies:
        for note in t.notes:
            lines.append(f"{t.interface}: {note}")
    return lines

"""A small run of the attack campaign (``python -m tools.attack``): every interface attacked,
nothing crashes, nothing unauthorised happens, and each probe's own control (the driver drives
again afterwards, the authorised cockpit drives) shows the watch would have seen a motion."""

from __future__ import annotations

import pytest

from tools.attack import PROBES, CampaignOptions, Tally, campaign_lines, run_campaign
from tools.attack._campaign import Flood

pytestmark = pytest.mark.slow


#: the probes in four parts, each a test of its own, so test workers run them side by side
#: (the whole campaign took 156 s in one test); each part names the interfaces it must attack
PARTS: dict[tuple[str, ...], set[str]] = {
    ("udp", "serial", "forged", "floods"): {
        "robot UDP",
        "robot serial (pty)",
        "flood: wrong-key at the robot, one socket",
    },
    ("web", "cockpit", "keys", "memory"): {"cockpit WebSocket", "Foxglove bridge"},
    ("jaus", "judp", "ros2", "zenoh"): {"JAUS gateway (JUDP)", "Zenoh (peer, access control)"},
    ("files", "decoders", "video"): {"files", "decoders"},
}


def test_the_parts_hold_every_probe_once() -> None:
    probes = [name for part in PARTS for name in part]
    assert sorted(probes) == sorted(PROBES)


@pytest.mark.parametrize("part", list(PARTS), ids=lambda part: "-".join(part))
def test_a_small_campaign_finds_no_crash_and_no_unauthorised_effect(part: tuple[str, ...]) -> None:
    options = CampaignOptions(
        seed=5,
        count=200,
        flood_pps=2000.0,
        flood_seconds=1.0,
        floods=(Flood("robot", "wrong_key", 1),),
        only=frozenset(part),
    )
    tallies = run_campaign(options)
    table = "\n".join(campaign_lines(tallies))
    by_name = {t.interface: t for t in tallies}
    assert set(by_name) >= PARTS[part], table
    for tally in tallies:
        assert tally.inputs >= 25, table  # the web probes try a quarter of the count
        assert tally.crashes == 0, table
        assert tally.unauthorised == 0, table
    notes = "\n".join(n for t in tallies for n in t.notes)
    for name in ("robot UDP", "JAUS gateway (JUDP)", "Zenoh (peer, access control)"):
        if name in PARTS[part]:
            assert "the driver drove after the attack (the watch saw it)" in by_name[name].notes
    if "cockpit" in part:
        assert "the authorised cockpit drove after the attack" in notes
    if "udp" in part:
        udp = by_name["robot UDP"]
        for kind in (
            "garbage",
            "wrong key",
            "forged session open",
            "capture replay",
            "capture flip",
        ):
            assert udp.kinds[kind] > 0, kind
        flood = by_name["flood: wrong-key at the robot, one socket"]
        assert flood.telemetry_share is not None
        assert flood.video_share is not None


def test_the_table_counts_a_crash_and_an_effect() -> None:
    tally = Tally("made up")
    tally.tried("garbage", 10)
    tally.crash("robot: exited with 1")
    tally.effect("the robot moved 0.5 m")
    lines = campaign_lines([tally])
    assert lines[2].split()[-5:] == ["10", "1", "1", "-", "-"]
    assert "made up: crash: robot: exited with 1" in lines
    long = Tally("forged sources: the robot's address at the station, and more")
    long.tried("forged", 544)
    header, _, *rows = campaign_lines([tally, long])
    ends = {len(line) for line in [header, rows[0], rows[1]]}  # right-aligned figures end alike
    assert len(ends) == 1, [header, *rows[:2]]
    assert rows[2].split() == ["total", "554", "1", "1"]
    assert set(PROBES) == {
        "udp",
        "serial",
        "web",
        "cockpit",
        "jaus",
        "judp",
        "ros2",
        "zenoh",
        "files",
        "decoders",
        "keys",
        "memory",
        "video",
        "forged",
        "floods",
    }

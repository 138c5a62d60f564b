"""``freelook bench link.relay`` measures what it says: round trips through a real relay
process and over direct UDP in the same run, the relay's own CPU, and the robot program's VP9
video at a station through the relay and direct, the robot told its link carries 250 kbit/s."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.timeout(480)
def test_the_relay_bench_times_round_trips_through_a_relay_and_direct_udp(
    tmp_path: Path,
) -> None:
    out = tmp_path / "bench.json"
    done = subprocess.run(
        [sys.executable, "-m", "freelook.cli", "bench", "link.relay", "--min-time", "0.2",
         "--json", str(out)],
        capture_output=True, text=True, timeout=420,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads(out.read_text())
    rows = results if isinstance(results, list) else results["results"]
    (row,) = [r for r in rows if r["name"] == "link.relay"]
    extra = row["extra"]
    for name in ("relay_p50_ms", "udp_p50_ms", "relay_cpu_per_s", "relay_cpu_us_per_round_trip"):
        assert math.isfinite(extra[name]), extra
        assert extra[name] > 0, extra
    # a relay is one more hop each way through another process: never faster than direct UDP
    assert extra["relay_p50_ms"] > extra["udp_p50_ms"], extra
    assert extra["pairs"] >= 1, extra
    # video reached the station both ways, and the relay did not lose most of it (a bound on
    # behaviour: the figures themselves are the bench's)
    assert extra["video_link_bps"] == 250e3, extra
    assert extra["video_direct_fps"] > 1.0, extra
    assert extra["video_relay_fps"] > 0.5 * extra["video_direct_fps"], extra

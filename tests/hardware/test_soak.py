"""The memory soak prints one RSS sample per sampling interval of simulated time."""

from __future__ import annotations

import json
import os

import pytest

from freelook.hardware.sim._soak import rss_mb, soak


def test_soak_samples_the_robot_program_s_rss(capsys: pytest.CaptureFixture[str]) -> None:
    soak(minutes=2.0 / 60, sample_s=1.0)
    samples = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [s["t"] for s in samples] == [0.0, 1.0, 2.0]
    assert all(s["rss_mb"] > 0 for s in samples)
    assert samples[-1]["wall"] >= samples[0]["wall"]


def test_rss_of_this_process_and_a_missing_one() -> None:
    assert rss_mb() == pytest.approx(rss_mb(os.getpid()), rel=0.1)
    with pytest.raises(FileNotFoundError):
        rss_mb(2**22 + 12345)

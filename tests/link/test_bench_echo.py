"""The benchmarks' compiled echo on loopback: socat's and the C one, each echoing back."""

from __future__ import annotations

import shutil

import pytest

from freelook.link._bench_echo import compiled_echo


@pytest.mark.parametrize("which", ["socat", "cc"])
def test_the_compiled_echo_answers_every_round_trip(which: str) -> None:
    if which == "socat" and shutil.which("socat") is None:
        pytest.skip("socat is not installed")
    if which == "cc" and not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler")
    round_trips, name = compiled_echo(20, which)
    samples = round_trips()  # a lost echo would raise TimeoutError after 1 s
    assert name == which
    assert len(samples) == 20
    assert all(0.0 < s < 1.0 for s in samples)


def test_no_compiled_echo_says_which_was_missing() -> None:
    with pytest.raises(RuntimeError, match="no compiled echo: no nothing"):
        compiled_echo(1, "nothing")

"""Runtimes: exact periodic firing in lock-step, the same jobs in real time."""

from __future__ import annotations

import asyncio
import logging
import socket
import time

import pytest

from freelook.runtime import LockstepRuntime, RealtimeRuntime


def test_lockstep_fires_on_period_in_registration_order() -> None:
    runtime = LockstepRuntime()
    log: list[tuple[str, float]] = []
    runtime.add_periodic("a", 0.005, lambda t: log.append(("a", t)))
    runtime.add_periodic("b", 1 / 75, lambda t: log.append(("b", t)), phase=1 / 75)
    runtime.add_periodic("c", 0.01, lambda t: log.append(("c", t)))
    runtime.run_until(1.0)
    a = [t for n, t in log if n == "a"]
    b = [t for n, t in log if n == "b"]
    assert len(a) == 201
    assert a[-1] == pytest.approx(1.0)
    assert len(b) == 75
    assert b[0] == pytest.approx(1 / 75, abs=1e-6)
    # at t = 0 both a and c are due: a was registered first
    assert log[0] == ("a", 0.0)
    assert log[1] == ("c", 0.0)
    assert runtime.now() == 1.0
    assert runtime.clock.now() == 1.0
    runtime.remove("a")
    runtime.run_for(0.1)
    assert len([n for n, _ in log if n == "a"]) == 201


def test_lockstep_rejects_bad_jobs() -> None:
    runtime = LockstepRuntime()
    with pytest.raises(ValueError, match="period"):
        runtime.add_periodic("x", 0.0, lambda t: None)
    runtime.add_periodic("x", 0.1, lambda t: None)
    with pytest.raises(ValueError, match="already registered"):
        runtime.add_periodic("x", 0.1, lambda t: None)
    for phase in (-0.01, float("nan")):
        with pytest.raises(ValueError, match="phase of 'y'"):
            runtime.add_periodic("y", 0.1, lambda t: None, phase=phase)


def test_lockstep_job_added_by_a_callback_fires_after_it() -> None:
    """A job registered from inside a callback, due at that very instant, fires after the
    running one, and neither is lost or fired twice."""
    runtime = LockstepRuntime()
    log: list[tuple[str, float]] = []

    def a(t: float) -> None:
        log.append(("a", t))
        if t == 0.2:
            runtime.add_periodic("late", 0.1, lambda t: log.append(("late", t)))
            runtime.remove("b")

    runtime.add_periodic("a", 0.1, a)
    runtime.add_periodic("b", 0.1, lambda t: log.append(("b", t)))
    runtime.run_until(0.4)
    names = [n for n, _ in log]
    assert names == ["a", "b", "a", "b", "a", "late", "a", "late", "a", "late"]
    assert [t for n, t in log if n == "late"] == pytest.approx([0.2, 0.3, 0.4])


def test_realtime_runtime_fires_the_same_jobs() -> None:
    runtime = RealtimeRuntime()
    seen: list[float] = []
    runtime.add_periodic("tick", 0.02, seen.append)
    asyncio.run(runtime.run(duration=0.3))
    assert 5 <= runtime.fired["tick"] <= 17
    assert seen == sorted(seen)

    async def stop_soon() -> None:
        other = RealtimeRuntime()
        other.add_periodic("slow", 10.0, lambda t: None, phase=10.0)
        task = asyncio.create_task(other.run())
        await asyncio.sleep(0.05)  # run() idle, its next job 10 s away (nothing shows that state)
        other.stop()
        await asyncio.wait_for(task, 1.0)  # stops promptly though the next job is 10 s away

    asyncio.run(stop_soon())


def test_a_stalled_realtime_loop_says_which_job_fired_late_and_by_how_much(
    caplog: pytest.LogCaptureFixture,
) -> None:
    runtime = RealtimeRuntime()
    runtime.add_periodic("control", 0.02, lambda t: None)

    def stall(now: float) -> None:
        if runtime.fired["stall"] == 2:
            time.sleep(0.25)  # the process stalls: nothing else runs meanwhile

    runtime.add_periodic("stall", 0.02, stall)
    with caplog.at_level(logging.WARNING, logger="freelook.runtime"):
        asyncio.run(runtime.run(duration=0.5))
    assert runtime.stalls["control"] >= 1
    assert runtime.worst_late["control"] >= 0.2  # a bound the sleep itself sets
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("control ")]
    assert said, caplog.text
    assert "the process stalled" in said[0]


class _Heard(asyncio.DatagramProtocol):
    def __init__(self) -> None:
        self.datagrams: list[bytes] = []

    def datagram_received(self, data: bytes, addr: tuple[str | int, ...]) -> None:
        self.datagrams.append(data)


def test_a_late_firing_reads_what_arrived_while_the_process_was_busy() -> None:
    """A command that reached the socket while a job overran is read before the next job
    fires (late by more than its period): a watchdog judging the link then sees it, so a
    stalled process does not take its own stall for a silent link."""

    async def scenario() -> list[int]:
        loop = asyncio.get_running_loop()
        transport, heard = await loop.create_datagram_endpoint(_Heard, local_addr=("127.0.0.1", 0))
        address = transport.get_extra_info("sockname")
        runtime = RealtimeRuntime()
        seen_by_watchdog: list[int] = []
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as operator:

            def overrun(now: float) -> None:
                operator.sendto(b"command", address)  # in the kernel's buffer from here on
                time.sleep(0.05)  # the job overruns: the process reads no socket meanwhile

            def watchdog(now: float) -> None:
                seen_by_watchdog.append(len(heard.datagrams))
                runtime.stop()

            runtime.add_periodic("overrun", 10.0, overrun)
            runtime.add_periodic("watchdog", 0.01, watchdog)  # due with it, 50 ms late
            await asyncio.wait_for(runtime.run(), 5.0)
        transport.close()
        return seen_by_watchdog

    assert asyncio.run(scenario()) == [1]

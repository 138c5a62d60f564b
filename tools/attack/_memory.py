"""The campaign's memory probe: a real ``freelook robot`` process on the one-key shorthand
(``--key``: any station id is admitted with the key) while key holders open sessions under
ever new station ids, for a bounded time; its resident memory is sampled from ``/proc`` and
its growth per minute fitted. An unauthorised effect is growth beyond :data:`GROWTH_BOUND`
per minute after the warm-up (memory that grows with the stations seen); a crash is the
process ending or printing a traceback. The figures: sessions opened, distinct ids, the
resident memory at the start and the end, the fitted growth.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from pathlib import Path

from tools.attack._tally import ProcessUnderAttack, Tally

__all__ = [
    "GROWTH_BOUND",
    "attack_memory",
    "growth_per_minute",
    "judge",
    "resident_bytes",
    "sample",
]

START = 120.0  # s: a bound for a robot process to start (numba compiles on a first run)
#: bytes a minute of resident memory growth counted as an effect (a session's state is a few
#: kilobytes: thousands of stations a minute kept for ever would pass it)
GROWTH_BOUND = 8 << 20
WARM_UP = 3.0  # s of sessions before the first sample counts (caches, first allocations)


def resident_bytes(pid: int) -> int | None:
    """The resident set of process ``pid`` (``/proc/PID/status``'s VmRSS), None when gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return None


def growth_per_minute(samples: list[tuple[float, int]]) -> float:
    """The least-squares slope of (seconds, bytes) samples, in bytes a minute."""
    if len(samples) < 2:
        return 0.0
    n = len(samples)
    mean_t = sum(t for t, _ in samples) / n
    mean_b = sum(b for _, b in samples) / n
    var = sum((t - mean_t) ** 2 for t, _ in samples)
    if var == 0:
        return 0.0
    cov = sum((t - mean_t) * (b - mean_b) for t, b in samples)
    return 60.0 * cov / var


def judge(samples: list[tuple[float, int]], tally: Tally) -> float:
    """The growth of ``samples`` into ``tally`` (an effect beyond :data:`GROWTH_BOUND`)."""
    growth = growth_per_minute(samples)
    if growth > GROWTH_BOUND:
        tally.effect(f"resident memory grew {growth / 2**20:.1f} MiB a minute")
    if samples:
        tally.notes.append(
            f"resident memory {samples[0][1] / 2**20:.1f} → {samples[-1][1] / 2**20:.1f} MiB "
            f"over {samples[-1][0] - samples[0][0]:.0f} s; fitted growth "
            f"{growth / 2**20:+.2f} MiB a minute (bound {GROWTH_BOUND / 2**20:.0f})"
        )
    return growth


async def sample(pid: int, seconds: float, every: float = 0.5) -> list[tuple[float, int]]:
    """Resident memory of ``pid`` every ``every`` s for ``seconds`` (until it ends)."""
    samples: list[tuple[float, int]] = []
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        found = resident_bytes(pid)
        if found is None:
            break
        samples.append((time.monotonic() - started, found))
        await asyncio.sleep(every)
    return samples


class _Inbox(asyncio.DatagramProtocol):
    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes] = asyncio.Queue(maxsize=256)

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        with contextlib.suppress(asyncio.QueueFull):
            self.queue.put_nowait(data)


async def _open_session(key: bytes, station: int, target: tuple[str, int], nonce: bytes) -> bool:
    """One key holder's session under ``station``: the handshake to its end, then gone
    (without a goodbye, as a station that vanishes). True when the session opened."""
    from freelook.link import LinkSession, NativeCodec

    loop = asyncio.get_running_loop()
    inbox = _Inbox()
    transport, _ = await loop.create_datagram_endpoint(lambda: inbox, local_addr=("127.0.0.1", 0))
    session = LinkSession(
        NativeCodec(key, sender=station), spacing=0.05, role="operator", nonce=nonce
    )
    try:
        deadline = loop.time() + 2.0
        while loop.time() < deadline:
            for data in session.poll(time.time()):
                transport.sendto(data, target)
            if session.session_status(time.time()) == "open":
                return True
            with contextlib.suppress(TimeoutError):
                data = await asyncio.wait_for(inbox.queue.get(), 0.1)
                session.receive(data, time.time())
        return False
    finally:
        transport.close()


async def _memory_campaign(seconds: float, rate: float, seed: int, tally: Tally) -> None:
    draw = random.Random(seed)
    key = draw.randbytes(32)
    robot = ProcessUnderAttack(
        *("robot", "--hardware", "sim", "--world", "square", "--map", "none"),
        *("--listen", "udp://127.0.0.1:0", "--key", key.hex(), "--seed", str(seed)),
    )
    stations = draw.sample(range(1, 0x10000), min(0xFFFF, int(seconds * rate) + 64))
    opened = 0
    tried = 0
    try:
        line = await asyncio.to_thread(robot.wait_line, "profile on udp://")
        target = ("127.0.0.1", int(line.rsplit(":", 1)[1]))

        async def opener(until: float, started: float) -> None:
            nonlocal opened, tried
            while loop.time() < until and tried < len(stations):
                station = stations[tried]
                tried += 1
                tally.tried("session under a new station id")
                if await _open_session(key, station, target, draw.randbytes(8)):
                    opened += 1
                await asyncio.sleep(max(0.0, started + tried / rate - loop.time()))

        async def openers(seconds: float) -> None:  # eight key holders at once
            now = loop.time()
            await asyncio.gather(*(opener(now + seconds, now - tried / rate) for _ in range(8)))

        loop = asyncio.get_running_loop()
        await openers(WARM_UP)
        watching = asyncio.create_task(sample(robot.process.pid, seconds))
        await openers(seconds)
        samples = await watching
        judge(samples, tally)
        tally.notes.append(
            f"{opened} of {tried} sessions opened under {tried} distinct station ids "
            f"in {WARM_UP + seconds:.0f} s ({rate:.0f} a second asked)"
        )
        if not opened:
            tally.effect("no session opened: the probe measured nothing")
    finally:
        for problem in robot.problems():
            tally.crash(f"robot: {problem}")
        robot.stop()


def attack_memory(seconds: float, seed: int, rate: float = 40.0) -> Tally:
    """A robot's resident memory for ``seconds`` while key holders open about ``rate``
    sessions a second, each under a station id not used before."""
    tally = Tally("robot memory (one key, many stations)")
    asyncio.run(_memory_campaign(seconds, rate, seed, tally))
    return tally

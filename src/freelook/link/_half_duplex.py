"""The thesis's radio link as it was built: two half-duplex nodes on one channel (sans-I/O).

The thesis ran its teleoperation over two UWASA nodes, IEEE 802.15.4 radios used as
serial devices at 921600 baud (§4.3, §5.1), "programmed to be half-duplex" (§5), the robot
sending its position packet every 31 ms and the station its command every 47 ms (§6.1). It
names the cause of its losses and of its node failures: "the half-duplex nature of devices and
its prone to cause packet collision in the middleware, the whole system had to be restarted"
(§7.2). :class:`HalfDuplexLink` is that link, and the drops and the failures come out of it:

* a frame handed to a node at ``t`` crosses the serial line (``bytes × 10 / baud``), then goes
  on the air for ``(bytes + PHY and MAC overhead) × 8 / 250 kbit/s``, one frame after another
  per node; the receiving node hands it to its host over its serial line after the air ends;
* each host's timer fires on its own Windows tick grid (a send due at ``t`` goes at the first
  tick at or after ``t``, plus a wake-up jitter), each grid with its own phase and clock rate;
* the nodes do not listen before they talk (the thesis names collisions): a node transmitting
  hears nothing, so two frames on the air within a turnaround of each other are both lost;
* each collision locks the node whose frame came second (its middleware asked to transmit in
  the middle of a reception) with probability ``lock_per_collision``; a locked node neither
  sends nor receives until it is restarted, and a restarted one boots for ``boot`` seconds.

The caller owns the clock: :meth:`HalfDuplexLink.send` each frame when its sender's schedule has
it due (the due time, not the loop's time), and before :meth:`HalfDuplexLink.receive` at ``now``
every frame due by ``now`` must have been sent (the frames that could still collide with one
ending by ``now`` are then known). Not modelled: fading, distance, interference, the station's
deferral of its send while it reads a reception (under 1.2 ms, §5.3.3) and any retry.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from freelook.link._radio import RadioNode

__all__ = ["HalfDuplexLink", "HalfDuplexRadio", "LinkCounters", "periodic_link"]

NODES: tuple[RadioNode, RadioNode] = ("station", "robot")


def _other(node: RadioNode) -> RadioNode:
    return "robot" if node == "station" else "station"


@dataclass(frozen=True, slots=True)
class HalfDuplexRadio:
    """The link's constants, each with its source."""

    #: bit/s on each node's serial line: "a serial device with a baud rate of 921600" (§5.1)
    baud: float = 921_600.0
    #: bits a byte takes on the serial line: 8N1 (start, 8 data, stop); the thesis gives only
    #: the baud, 8N1 is the serial default
    serial_bits: int = 10
    #: bit/s on the air: IEEE 802.15.4's 2.4 GHz O-QPSK PHY (the thesis's radio is "IEEE
    #: 802.15.4 digital radio", §4); IEEE 802.15.4-2006 §6.5
    air_bps: float = 250_000.0
    #: bytes a frame adds on the air: preamble 4 + SFD 1 + PHR 1 (IEEE 802.15.4-2006 §6.3) and
    #: a MAC header with short addresses 9 + FCS 2 (§7.2); the node's own framing is not given
    overhead: int = 17
    #: bytes of a packet one frame carries: aMaxPHYPacketSize 127 less the MAC header and FCS
    #: (11); a longer packet goes as several frames back to back (the thesis's 107 B fit one)
    frame_payload: int = 116
    #: s a node needs between sending and hearing: aTurnaroundTime, 12 symbols × 16 µs
    #: (IEEE 802.15.4-2006 §6.4.1)
    turnaround: float = 192e-6
    #: s between a host's timer ticks: Windows' default 1/64 s (both programs ran on Windows,
    #: §6.1; the shortest spacing the thesis reached was "around 16 ms", §8.1: one tick)
    tick: float = 1 / 64
    #: s a host's thread wakes after its tick, uniform 0…jitter: an assumption (not given)
    jitter: float = 0.001
    #: each host clock's rate error, uniform within ±ppm: a PC crystal's usual ±50 ppm (an
    #: assumption: the thesis gives none)
    clock_ppm: float = 50.0
    #: probability a collision locks the node whose frame came second: the one constant that
    #: is calibrated (on one trial, by the experiment that uses it)
    lock_per_collision: float = 0.0
    #: s a restarted node takes before it carries frames again
    boot: float = 1.0

    def __post_init__(self) -> None:
        positive = (self.baud, self.air_bps, self.serial_bits, self.frame_payload)
        if not all(math.isfinite(v) and v > 0 for v in positive):
            raise ValueError(f"baud, air rate, serial bits, payload must be > 0: {positive}")
        rest = (self.overhead, self.turnaround, self.tick, self.jitter, self.clock_ppm, self.boot)
        if not all(math.isfinite(v) and v >= 0 for v in rest):
            raise ValueError(f"overhead, turnaround, tick, jitter, ppm, boot must be ≥ 0: {rest}")
        if not 0.0 <= self.lock_per_collision <= 1.0:
            raise ValueError(f"lock_per_collision {self.lock_per_collision} outside 0…1")

    def serial_time(self, size: int) -> float:
        """s a frame of ``size`` bytes takes on a node's serial line."""
        return size * self.serial_bits / self.baud

    def airtime(self, size: int) -> float:
        """s a packet of ``size`` bytes takes on the air, in as many frames as it needs."""
        frames = max(1, math.ceil(size / self.frame_payload))
        return (size + frames * self.overhead) * 8 / self.air_bps


@dataclass
class LinkCounters:
    """One direction's frames: handed to the sending node, delivered to the receiving host,
    lost in a collision, lost to a locked node (sender or receiver)."""

    sent: int = 0
    delivered: int = 0
    collided: int = 0
    silenced: int = 0

    @property
    def drop(self) -> float:
        """% of the frames sent not delivered (in flight ones count as not yet delivered)."""
        return 100.0 * (self.sent - self.delivered) / self.sent if self.sent else 0.0


@dataclass(eq=False)
class _Frame:
    sender: RadioNode
    data: bytes
    start: float  # on the air
    end: float
    delivered_at: float
    collided: bool = False
    silenced: bool = False


class _HostClock:
    """When a host's timer fires for a send due at ``t``: its next tick, plus a wake-up."""

    def __init__(self, radio: HalfDuplexRadio, rng: np.random.Generator) -> None:
        self.radio, self.rng = radio, rng
        self.phase = float(rng.uniform(0.0, radio.tick)) if radio.tick else 0.0
        self.period = radio.tick * (1.0 + float(rng.uniform(-1, 1)) * radio.clock_ppm * 1e-6)

    def fire(self, due: float) -> float:
        at = due
        if self.period > 0:
            k = math.ceil((due - self.phase) / self.period - 1e-12)
            at = self.phase + k * self.period
        return at + (float(self.rng.uniform(0.0, self.radio.jitter)) if self.radio.jitter else 0.0)


@dataclass
class _Node:
    clock: _HostClock
    free_at: float = -math.inf  # its radio's transmitter
    recent: deque[_Frame] = field(default_factory=deque)  # its frames still on or near the air
    #: [from, until) it is locked (until inf: not restarted yet)
    locks: list[list[float]] = field(default_factory=list)

    def locked_between(self, a: float, b: float) -> bool:
        return any(start <= b and a < until for start, until in self.locks)


class HalfDuplexLink:
    """The station's and the robot's node on one half-duplex channel. ``up`` is station →
    robot, ``down`` robot → station."""

    def __init__(self, radio: HalfDuplexRadio | None = None, seed: int = 0) -> None:
        self.radio = radio or HalfDuplexRadio()
        rng = np.random.default_rng([seed, 0x4D0])
        self._lock_rng = np.random.default_rng([seed, 0x10C4])
        self.nodes = {n: _Node(_HostClock(self.radio, rng)) for n in NODES}
        self.counters = {"up": LinkCounters(), "down": LinkCounters()}
        self._pending: dict[RadioNode, deque[_Frame]] = {n: deque() for n in NODES}  # by receiver
        self._arrived: dict[RadioNode, deque[_Frame]] = {n: deque() for n in NODES}
        self.collisions = 0
        #: (time, node) of every lock-up, in the order they were decided
        self.lockups: list[tuple[float, RadioNode]] = []
        #: (time, node) of every restart asked for
        self.restarts: list[tuple[float, RadioNode]] = []

    @staticmethod
    def direction(sender: RadioNode) -> str:
        return "up" if sender == "station" else "down"

    def send(self, sender: RadioNode, data: bytes, due: float) -> float:
        """``sender``'s host hands ``data`` to its node when its schedule has it due at
        ``due``; returns when the frame goes on the air."""
        radio, node = self.radio, self.nodes[sender]
        start = max(node.clock.fire(due) + radio.serial_time(len(data)), node.free_at)
        end = start + radio.airtime(len(data))
        node.free_at = end
        frame = _Frame(sender, data, start, end, end + radio.serial_time(len(data)))
        self.counters[self.direction(sender)].sent += 1
        frame.silenced = node.locked_between(start, start)
        if not frame.silenced:
            self._collide(frame)
        while node.recent and node.recent[0].end < start - 1.0:
            node.recent.popleft()
        node.recent.append(frame)
        self._pending[_other(sender)].append(frame)
        return start

    def _collide(self, frame: _Frame) -> None:
        """Both frames are lost where the other node's frames overlap ``frame`` on the air
        (within a turnaround); each collision may lock the node whose frame came second."""
        ta = self.radio.turnaround
        for other in self.nodes[_other(frame.sender)].recent:
            if other.silenced or other.start >= frame.end + ta or other.end + ta <= frame.start:
                continue
            frame.collided = other.collided = True
            self.collisions += 1
            second, at = (
                (frame.sender, frame.start)
                if frame.start >= other.start
                else (other.sender, other.start)
            )
            p = self.radio.lock_per_collision
            if p > 0 and self._lock_rng.random() < p and not self.locked(second, at):
                self._lock(second, at)

    def _lock(self, node: RadioNode, at: float) -> None:
        self.nodes[node].locks.append([at, math.inf])
        self.lockups.append((at, node))
        for frame in self.nodes[node].recent:
            if frame.start >= at:
                frame.silenced = True

    def restart(self, node: RadioNode, now: float) -> None:
        """Power-cycle ``node`` at ``now``: a lock-up of it already begun ends ``boot`` s later
        (a restart mid-boot starts the boot again); restarting a working node changes nothing."""
        self.restarts.append((now, node))
        for lock in self.nodes[node].locks:
            if lock[0] <= now < lock[1]:
                lock[1] = now + self.radio.boot

    def locked(self, node: RadioNode, now: float) -> bool:
        """Whether ``node`` is locked (or booting) at ``now``."""
        return self.nodes[node].locked_between(now, now)

    def silent(self, now: float) -> bool:
        """Whether the link carries nothing at ``now`` (a node locked)."""
        return any(self.locked(n, now) for n in NODES)

    def first_lockup(self, now: float) -> tuple[float, RadioNode] | None:
        """The first lock-up begun by ``now`` (None: none)."""
        begun = [x for x in self.lockups if x[0] <= now]
        return min(begun) if begun else None

    def receive(self, receiver: RadioNode, now: float) -> list[bytes]:
        """The frames ``receiver``'s host has read off its serial line by ``now``."""
        pending, arrived = self._pending[receiver], self._arrived[receiver]
        while pending and pending[0].end <= now:
            frame = pending.popleft()
            counters = self.counters[self.direction(frame.sender)]
            if frame.silenced or self.nodes[receiver].locked_between(frame.start, frame.end):
                counters.silenced += 1
            elif frame.collided:
                counters.collided += 1
            else:
                arrived.append(frame)
        out = []
        while arrived and arrived[0].delivered_at <= now:
            out.append(arrived.popleft().data)
        self.counters["down" if receiver == "station" else "up"].delivered += len(out)
        return out


def periodic_link(
    radio: HalfDuplexRadio,
    seed: int,
    seconds: float,
    up: tuple[int, float] | None,
    down: tuple[int, float] | None,
    step: float = 0.01,
) -> HalfDuplexLink:
    """The link after ``seconds`` of each side sending a frame of ``(bytes, every s)``: the
    station ``up``, the robot ``down`` (None: that side sends nothing)."""
    link = HalfDuplexLink(radio, seed)
    due = {"station": 0.0, "robot": 0.0}
    sides: dict[RadioNode, tuple[int, float] | None] = {"station": up, "robot": down}
    frames = {node: side for node, side in sides.items() if side is not None}
    now = 0.0
    while now < seconds:
        for node, (size, spacing) in frames.items():
            while due[node] <= now:
                link.send(node, bytes(size), due[node])
                due[node] += spacing
        link.receive("robot", now)
        link.receive("station", now)
        now += step
    return link

"""The simulator on a jittery clock: the wheels travel for the time that passed."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from freelook.config import load_robot
from freelook.maps import load_world
from freelook.sim import Simulator


def test_encoder_speed_follows_the_clock_when_physics_fires_late_early_or_after_them() -> None:
    config = load_robot("pioneer3dx")
    sim = Simulator(config, load_world("lab"), seed=3)
    sim.set_wheel_speeds(0.24, 0.24)
    rng = np.random.default_rng(7)
    now, samples = 0.0, []
    for i in range(4000):
        # a loaded event loop: firings late by up to three periods, sometimes in a burst
        now += float(rng.choice([0.0005, 0.005, 0.009, 0.015]))
        # and the encoders fired before the physics of the same moment as often as after
        first_encoders = bool(i % 2) and rng.random() < 0.5
        if first_encoders:
            sim.sample_encoders(now)
        sim.physics(now)
        if i % 2:
            if not first_encoders:
                sim.sample_encoders(now)
            assert sim.latest_encoders is not None
            samples.append(sim.latest_encoders)
    stamps, left, _ = np.array(samples[len(samples) // 2 :], dtype=np.float64).T
    speed = np.diff(left) * sim.encoders.metres_per_count / np.diff(stamps)
    # the wheel turns at 0.24 m/s; what remains is the counter's quantisation over each interval
    quantum = sim.encoders.metres_per_count / np.diff(stamps).min()
    assert np.max(np.abs(speed - 0.24)) <= quantum + 1e-9


def test_on_schedule_physics_steps_exactly_one_period() -> None:
    config = load_robot("pioneer3dx")
    a = Simulator(config, load_world("lab"), seed=1)
    b = Simulator(config, load_world("lab"), seed=1)
    for sim in (a, b):
        sim.set_wheel_speeds(0.2, 0.3)
    for k in range(1, 401):
        a.physics(k * 0.005)
        b.vehicle.step(0.005)
    assert a.vehicle.state() == b.vehicle.state()


def test_a_scan_is_the_same_read_at_once_late_or_after_others_went_unread() -> None:
    """Scans are cast when read: of two simulators driving alike, one is read at every scan,
    the other at every third, two physics steps late; each scan read is the same."""
    config = load_robot("pioneer3dx")
    eager, lazy = (Simulator(config, load_world("lab"), seed=4, pose=(3.0, 3.0, 0.3)) for _ in "ab")
    heard: list[float] = []
    lazy.on_laser.append(heard.append)
    scans: dict[float, npt.NDArray[np.float64]] = {}
    for k in range(1, 301):
        now = k * 0.005
        for sim in (eager, lazy):
            sim.set_wheel_speeds(0.4, 0.6 if k < 150 else 0.2)
            sim.physics(now)
        if k % 3 == 0:  # a scan every 15 ms
            for sim in (eager, lazy):
                sim.sample_laser(now)
            assert eager.latest_laser is not None
            scans[now] = eager.latest_laser.ranges
        if k % 9 == 2 and k > 9:  # the scan of two steps ago, after two went unread
            frame = lazy.latest_laser
            assert frame is not None
            assert frame.stamp == heard[-1] == (k - 2) * 0.005
            np.testing.assert_array_equal(frame.ranges, scans[frame.stamp])
            assert lazy.latest_laser is frame  # read again: the same frame
    assert len(heard) == len(scans) == 100

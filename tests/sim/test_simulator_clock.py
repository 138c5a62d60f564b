"""The simulator on a jittery clock: the wheels travel for the time that passed."""

from __future__ import annotations

import numpy as np

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

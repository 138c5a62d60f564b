"""The simulator's HAL adapters: a reading is the simulator's newest, one object per reading."""

from __future__ import annotations

from freelook.config import load_robot
from freelook.hal import BumperState, EncoderSample, GyroSample, PanTiltState, RangeScan
from freelook.hardware.sim import simulated_hardware
from freelook.maps import load_world
from freelook.sim import Simulator


def test_readings_are_the_newest_frames_and_kept_while_they_stand() -> None:
    sim = Simulator(load_robot("pioneer3dx"), load_world("lab"), seed=4, pose=(8.0, 8.0, 0.2))
    hw = simulated_hardware(sim, camera=False)
    assert hw.laser is not None
    assert hw.sonar is not None
    assert hw.gyro is not None
    assert hw.encoders is not None
    assert hw.bumpers is not None
    assert hw.pan_tilt is not None
    assert hw.laser.latest() is None
    assert hw.gyro.latest() is None
    sim.set_wheel_speeds(0.3, 0.2)
    sim.set_pan_tilt_rates(0.1, 0.05)
    sim.run_for(0.04)  # a first sonar reading
    seen: list[tuple[object, ...]] = []
    for _ in range(40):
        sim.run_for(0.005 * 3)
        laser, sonar = hw.laser.latest(), hw.sonar.latest()
        gyro, encoders = hw.gyro.latest(), hw.encoders.latest()
        bumpers, pan_tilt = hw.bumpers.latest(), hw.pan_tilt.state()
        assert laser is not None
        assert sonar is not None
        assert gyro is not None
        assert encoders is not None
        # what the simulator holds now, as a new object would carry it
        frame, echo = sim.latest_laser, sim.latest_sonar
        assert frame is not None
        assert echo is not None
        assert sim.latest_gyro is not None
        assert laser == RangeScan(
            frame.stamp,
            frame.ranges,
            laser.bearings,
            laser.origin_x,
            laser.origin_y,
            laser.range_max,
        )
        assert laser.ranges is frame.ranges
        assert sonar.ranges is echo.ranges
        assert sonar.stamp == echo.stamp
        assert gyro == GyroSample(*sim.latest_gyro, sim.gyro_angle)
        assert sim.latest_encoders is not None
        assert encoders == EncoderSample(*sim.latest_encoders)
        v = sim.vehicle
        assert bumpers == BumperState(sim.now, v.bumper_front, v.bumper_rear)
        assert pan_tilt == PanTiltState(sim.now, v.pan, v.tilt)
        # read again with nothing new: the same objects
        assert hw.laser.latest() is laser
        assert hw.sonar.latest() is sonar
        assert hw.gyro.latest() is gyro
        assert hw.encoders.latest() is encoders
        assert hw.bumpers.latest() is bumpers
        seen.append((laser, sonar, gyro, encoders, bumpers))
    # a new reading is a new object: every kind changed over the run
    for kind in zip(*seen, strict=True):
        assert len({id(reading) for reading in kind}) > 1


def test_a_gyro_angle_set_anew_is_a_new_sample() -> None:
    sim = Simulator(load_robot("pioneer3dx"), load_world("lab"), seed=4, pose=(8.0, 8.0, 0.2))
    hw = simulated_hardware(sim, camera=False)
    assert hw.gyro is not None
    sim.run_for(0.05)
    first = hw.gyro.latest()
    sim.gyro_angle = 1.25
    second = hw.gyro.latest()
    assert first is not None
    assert second is not None
    assert second.angle == 1.25
    assert (second.stamp, second.rate) == (first.stamp, first.rate)

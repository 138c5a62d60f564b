"""The simulator's fast paths held to the plain forms to the bit: the vehicle's one-read
accessors."""

from __future__ import annotations

from freelook.config import load_robot
from freelook.maps import load_world
from freelook.sim import Simulator
from freelook.sim.vehicle import _physics as ph


def test_one_read_accessors_are_the_attributes() -> None:
    sim = Simulator(load_robot("pioneer3dx"), load_world("lab"), seed=2, pose=(8.0, 8.0, 0.4))
    sim.set_wheel_speeds(0.3, 0.1)
    sim.set_pan_tilt_rates(0.2, -0.1)
    sim.run_for(0.7)
    v = sim.vehicle
    row = v.state_array[0]
    assert (
        v.pose()
        == (v.x, v.y, v.theta)
        == (float(row[ph.X]), float(row[ph.Y]), float(row[ph.THETA]))
    )
    assert v.wheel_distances() == (v.left_distance, v.right_distance)
    assert v.wheel_distances() == (float(row[ph.LEFT_DISTANCE]), float(row[ph.RIGHT_DISTANCE]))
    assert v.pan_tilt() == (v.pan, v.tilt) != (0.0, 0.0)
    assert v.bumpers() == (v.bumper_front, v.bumper_rear)
    assert all(type(value) is float for value in (*v.pose(), *v.wheel_distances(), v.rotation))
    v.x = 7.5
    assert row[ph.X] == 7.5
    assert v.pose()[0] == 7.5

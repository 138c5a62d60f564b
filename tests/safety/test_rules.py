"""The rules as the configuration lists them: their order, the ones that cannot be left out,
and what the decision says of them."""

from __future__ import annotations

import numpy as np
import pytest

from freelook.config import load_robot
from freelook.errors import ConfigError
from freelook.link import SafetyFlags
from freelook.safety import SafetyFilter

ROBOT = load_robot("pioneer3dx")
NONE = np.zeros((0, 2))
DEFAULT = ROBOT.safety.rules


def make(*rules: str) -> SafetyFilter:
    safety = ROBOT.safety.model_copy(update={"rules": rules})
    return SafetyFilter(safety, ROBOT.footprint, ROBOT.drive)


def test_the_configuration_orders_the_rules() -> None:
    assert [r.name for r in make(*DEFAULT).rules] == list(DEFAULT)
    assert DEFAULT == ("hardware", "estop", "watchdog", "bumper", "zone", "approach")
    # the rules the configuration switches off are not built
    off = ROBOT.safety.model_copy(update={"approach_check": False})
    names = [r.name for r in SafetyFilter(off, ROBOT.footprint, ROBOT.drive).rules]
    assert names == ["hardware", "estop", "watchdog", "bumper", "zone"]


@pytest.mark.parametrize(
    ("rules", "says"),
    [
        (("estop", "watchdog", "bumper"), "must name hardware"),
        (("hardware", "watchdog", "zone"), "must name estop"),
        (("hardware", "estop", "watchdog", "zone", "zone"), "twice"),
        (("hardware", "estop", "watchdog", "zones"), "unknown safety rule 'zones'"),
    ],
)
def test_a_list_that_could_not_stop_the_robot_is_refused(rules: tuple[str, ...], says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        make(*rules)


def test_the_decision_names_the_rules_that_acted_in_their_order() -> None:
    f = make(*DEFAULT)
    f.command_received(0.0)
    # a wall in the inner zone, within the approach margin already
    front = ROBOT.footprint.center_forward + ROBOT.footprint.length / 2
    wall = np.column_stack((np.full(40, front + 0.03), np.linspace(-1.0, 1.0, 40)))
    d = f.filter(1.0, 0.0, wall, 0.0)
    assert d.rules == ("zone", "approach")
    assert d.flags == SafetyFlags.ZONE | SafetyFlags.APPROACH
    # the telemetry's flags say the same by name
    assert [flag.name.lower() for flag in SafetyFlags if flag and flag in d.flags] == list(d.rules)

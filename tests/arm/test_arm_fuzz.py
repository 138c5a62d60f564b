"""arm-fuzz on a few seeds: with the check the boxes never meet and no stop wedges the arm;
without it, the same jogs drive the arm into the body."""

from __future__ import annotations

import pytest

from freelook.experiments._arm_fuzz import arm_fuzz


@pytest.mark.parametrize(("robot", "trials"), [("taros", 3), ("m2p2", 3)])
def test_arm_fuzz_meets_its_targets(robot: str, trials: int) -> None:
    seen: list[tuple[int, int]] = []
    result = arm_fuzz(trials, 7, lambda done, total: seen.append((done, total)), robot)
    assert seen[-1] == (trials, trials)
    assert result.details["intersecting_trials_on"] == 0
    assert result.details["wedged_trials"] == 0
    assert result.details["intersecting_trials_off"] > 0
    assert result.details["stops"] > 0  # the check did act: the jogs went for the body
    assert all(row.ok for row in result.rows if row.ok is not None)


def test_a_robot_without_an_arm_is_refused() -> None:
    with pytest.raises(ValueError, match="'pioneer3dx' has no arm"):
        arm_fuzz(1, 0, lambda done, total: None, "pioneer3dx")

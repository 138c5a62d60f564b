"""arm-fuzz on a few seeds: with the check no checked pair comes into contact (judged on the
URDF's visual geometry with python-fcl, apart from the check's boxes) and no stop wedges the
arm; without it, the same jogs drive the arm into the body; with the check broken on purpose
the row says so. The judge itself against hand-made poses."""

from __future__ import annotations

import numpy as np
import pytest

from freelook.arm import ArmModel, load_arm, pair_separations
from freelook.config import load_robot
from freelook.experiments._arm_contact import DEPTH, ContactJudge
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
    assert result.rows[0].ok is True
    assert result.rows[2].ok is True  # no wedged arm
    assert result.rows[3].ok is True  # the control does hit
    judged = result.details["judged_pairs"]
    assert judged["checked"] == result.details["pairs"]  # every pair the check is given
    assert judged["unchecked"] > 0  # and the ones it is not
    loose = result.details["unchecked_contact_trials_on"]
    assert result.rows[1].ok is None  # reported, not judged: adjacent links meet at joints
    assert (loose == 0) is (result.rows[1].ours.startswith("0 "))
    assert bool(result.details["unchecked_pairs_in_contact"]) is (
        loose + result.details["unchecked_contact_trials_off"] > 0
    )


@pytest.mark.parametrize("robot", ["taros", "m2p2"])
def test_with_the_check_off_the_check_on_row_is_not_met(robot: str) -> None:
    """Broken on purpose: the check-on sessions run without the check."""
    result = arm_fuzz(2, 7, lambda done, total: None, robot, guard_off=True)
    assert result.details["intersecting_trials_on"] > 0
    assert result.rows[0].ok is False
    assert "broken on purpose" in result.rows[0].conditions


def _judge(robot: str) -> tuple[ContactJudge, ArmModel]:
    arm = load_robot(robot).arm
    assert arm is not None
    model = load_arm(arm.urdf, arm.srdf)
    return ContactJudge(arm.urdf, model), model


def test_the_judge_agrees_with_the_boxes_on_checked_pairs_and_sees_the_others() -> None:
    """TAROS's visual shapes are its collision boxes: on the checked pairs the judge and the
    boxes (unpadded) agree at random poses, away from grazing ties."""
    judge, model = _judge("taros")
    assert len(judge.checked_pairs) == model.n_pairs
    assert set(judge.checked_pairs) == {tuple(sorted(p)) for p in model.pair_names}
    assert ("pedestal", "turret") not in judge.unchecked_pairs  # a link and its parent
    assert ("hull", "mast") not in judge.unchecked_pairs  # one rigid body
    q = np.random.default_rng(5).uniform(model.lower, model.upper, (60, model.n_joints))
    seps = pair_separations(model, q, 0.0, 0.0)
    for k in range(len(q)):
        found = set(judge.contacts(q[k]).checked)
        for (a, b), sep in zip(model.pair_names, seps[k], strict=True):
            if abs(sep) > 2 * DEPTH:
                assert (tuple(sorted((a, b))) in found) == bool(sep < 0), (a, b, sep)


def test_the_judge_sees_a_contact_on_a_pair_the_check_is_not_given() -> None:
    """The elbow folded onto the upper arm: the forearm reaches into the actuator on the upper
    arm, a pair the SRDF disables as adjacent; the judge counts it as unchecked."""
    judge, model = _judge("taros")
    assert ("forearm", "upper_arm_actuator") in judge.unchecked_pairs
    ready = judge.contacts(model.ready)
    assert ready.checked == ready.unchecked == ()
    folded = model.ready.copy()
    elbow = model.joint_names.index("elbow_pitch")
    folded[elbow] = model.lower[elbow]
    contacts = judge.contacts(folded)
    assert ("forearm", "upper_arm_actuator") in contacts.unchecked


def test_a_robot_without_an_arm_is_refused() -> None:
    with pytest.raises(ValueError, match="'pioneer3dx' has no arm"):
        arm_fuzz(1, 0, lambda done, total: None, "pioneer3dx")

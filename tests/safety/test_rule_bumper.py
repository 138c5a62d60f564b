"""The bumper rule: a pressed bumper blocks motion towards its side, only that."""

from __future__ import annotations

import numpy as np
import pytest

from freelook.safety import Cycle, Judgement
from freelook.safety._rule_bumper import BumperRule

NONE = np.zeros((0, 2))


@pytest.mark.parametrize(
    ("front", "rear", "v", "blocked"),
    [
        (True, False, 0.4, True),
        (True, False, -0.4, False),
        (False, True, -0.4, True),
        (False, True, 0.4, False),
        (True, True, 0.0, False),  # turning in place pushes neither bumper further
        (False, False, 0.4, False),
    ],
)
def test_a_pressed_bumper_blocks_its_side(front: bool, rear: bool, v: float, blocked: bool) -> None:
    judgement = Judgement(v, 0.3)
    state = BumperRule().judge(Cycle(v, 0.3, 0.0, NONE, None, front, rear), judgement)
    assert state == int(blocked)
    assert judgement.v == (0.0 if blocked else v)
    assert judgement.omega == 0.3  # the turn is left as it was

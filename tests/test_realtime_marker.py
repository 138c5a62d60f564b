"""A test marked ``realtime`` runs with the objects from before it frozen (see conftest.py);
the others collect everything, so garbage an earlier test left still shows."""

from __future__ import annotations

import gc

import pytest


@pytest.mark.realtime
def test_a_realtime_test_runs_with_earlier_objects_left_out_of_collections() -> None:
    assert gc.get_freeze_count() > 1000


def test_other_tests_collect_every_object() -> None:
    assert gc.get_freeze_count() == 0

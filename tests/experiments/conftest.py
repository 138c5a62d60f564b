"""What the experiment tests share."""

from __future__ import annotations

import os

import pytest


@pytest.fixture
def trial_jobs() -> int:
    """Worker processes a test's experiment may spread its trials over: every core when the
    suite runs in one process, one under pytest-xdist (its workers fill the cores already).
    The figures are the same either way (each trial is a function of its seed)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return 1
    return os.cpu_count() or 1

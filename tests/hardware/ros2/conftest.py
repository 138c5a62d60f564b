"""Each ROS 2 test in a DDS domain of its own, discovery kept on this machine."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dds_domains import next_domain

sys.path.insert(0, str(Path(__file__).parent))  # the tests' own base node


@pytest.fixture
def ros_domain(monkeypatch: pytest.MonkeyPatch) -> int:
    """A DDS domain for this test alone, also for the processes it starts."""
    domain = next_domain()  # of this worker's own share (tests/dds_domains.py)
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain))
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    return domain

"""Each ROS 2 test in a DDS domain of its own, discovery kept on this machine."""

from __future__ import annotations

import itertools
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the tests' own base node

#: domains 1…100 (those whose ports every platform allows), each test the next one, starting
#: where this process's id puts it so two test runs at once rarely meet
_DOMAINS = (1 + (os.getpid() + i) % 100 for i in itertools.count())


@pytest.fixture
def ros_domain(monkeypatch: pytest.MonkeyPatch) -> int:
    """A DDS domain for this test alone, also for the processes it starts."""
    domain = next(_DOMAINS)
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain))
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    return domain

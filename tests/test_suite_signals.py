"""A process the suite starts hears SIGINT, however the suite itself was started (see
tests/conftest.py: a background job of a shell without job control starts with it ignored)."""

from __future__ import annotations

import signal
import subprocess
import sys

# "ready" is said inside the try: a signal that comes as soon as it is read lands in it
SLEEPER = """
import sys, time
try:
    print("ready", flush=True)
    time.sleep(30)
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


def test_a_child_of_the_suite_is_interrupted_by_sigint() -> None:
    child = subprocess.Popen([sys.executable, "-c", SLEEPER], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=10)
    assert out.strip() == "interrupted"

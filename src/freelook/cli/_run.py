"""How a long-running command runs: until it ends, or until Ctrl-C or a service manager's
stop (SIGTERM) ends it cleanly.

Either stop cancels the command's coroutine, so its clean-up (a zero velocity to the base, a
closed recording, a ROS node taken down in order) runs at an ``await``, never from an exception
a signal handler throws into the middle of a statement, where it can leave a lock taken or a
thread half-stopped. A second stop while the first is being handled ends the process at once.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from typing import Any

from freelook.runtime import run_event_loop

__all__ = ["run_until_stopped"]


def run_until_stopped(main: Coroutine[Any, Any, None]) -> bool:
    """Run ``main`` to its end or until Ctrl-C or SIGTERM cancels it; True when stopped."""
    stopped = False

    async def guarded() -> None:
        nonlocal stopped
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None

        def stop() -> None:
            nonlocal stopped
            stopped = True
            loop.remove_signal_handler(signal.SIGTERM)  # a second stop: the default, at once
            task.cancel()

        loop.add_signal_handler(signal.SIGTERM, stop)
        try:
            await main
        except asyncio.CancelledError:
            if not stopped:
                raise

    try:
        run_event_loop(guarded())  # Ctrl-C becomes a cancel of guarded as well
    except KeyboardInterrupt:
        return True
    return stopped

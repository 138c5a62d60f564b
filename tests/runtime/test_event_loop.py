"""The programs' event loop: uvloop's, which the link's round trip bench is judged on."""

from __future__ import annotations

import asyncio
import sys

import pytest

from freelook.runtime import loop_name, run_event_loop


@pytest.mark.skipif(sys.platform == "win32", reason="uvloop does not build on Windows")
def test_programs_run_on_uvloop() -> None:
    import uvloop

    async def main() -> type:
        return type(asyncio.get_running_loop())

    assert loop_name() == "uvloop"
    assert run_event_loop(main()) is uvloop.Loop


def test_a_coroutine_result_and_error_come_back() -> None:
    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    async def fail() -> None:
        raise ValueError("from the loop")

    assert run_event_loop(answer()) == 42
    with pytest.raises(ValueError, match="from the loop"):
        run_event_loop(fail())

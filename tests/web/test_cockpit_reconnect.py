"""After its socket closes and the page connects again, the cockpit sends on the new socket:
the e-stop key and the drive keys reach the robot (they once went to the closed socket, and
nothing, not even the e-stop, arrived while the page said the link was up)."""

from __future__ import annotations

from typing import Any

from test_cockpit import open_cockpit, state, wait_until


def test_a_reconnected_cockpit_still_stops_and_drives_the_robot(browser: Any, sim: Any) -> None:
    page, errors = open_cockpit(browser, sim)
    page.click("[data-mode=free_look]")
    page.evaluate("window.freelook.ws.close()")  # the station or the network dropped it
    assert wait_until(lambda: not page.evaluate("window.freelook.connected"), 3)
    assert wait_until(lambda: page.evaluate("window.freelook.connected"), 5)
    assert page.evaluate("window.freelook.ws.readyState") == 1  # the new socket, open
    # drive on the new socket
    page.keyboard.down("KeyW")
    assert wait_until(lambda: state(page)["cmd"]["v"] > 0.05, 3), state(page)["cmd"]
    page.keyboard.up("KeyW")
    # and the e-stop key stops the robot
    page.keyboard.press("Space")
    assert wait_until(lambda: state(page)["estop"], 3), "the e-stop never reached the robot"
    assert wait_until(lambda: abs(state(page)["cmd"]["v"]) < 1e-6, 3)
    page.click("#estop")  # the deliberate release
    assert wait_until(lambda: not state(page)["estop"], 3)
    assert errors == []
    page.close()

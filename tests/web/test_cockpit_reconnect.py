"""After its socket closes and the page connects again, the cockpit sends on the new socket:
the e-stop key and the drive keys reach the robot (they once went to the closed socket, and
nothing, not even the e-stop, arrived while the page said the link was up)."""

from __future__ import annotations

from typing import Any

from test_cockpit import open_cockpit, state

from waiting import wait_until


def test_a_reconnected_cockpit_still_stops_and_drives_the_robot(browser: Any, sim: Any) -> None:
    page, errors = open_cockpit(browser, sim)
    page.click("[data-mode=free_look]")
    page.evaluate("window.freelook.ws.close()")  # the station or the network dropped it
    wait_until(
        lambda: not page.evaluate("window.freelook.connected"),
        3,
        "the page to see the socket close",
    )
    wait_until(lambda: page.evaluate("window.freelook.connected"), 5, "the page to reconnect")
    assert page.evaluate("window.freelook.ws.readyState") == 1  # the new socket, open
    # drive on the new socket
    page.keyboard.down("KeyW")
    wait_until(lambda: state(page)["cmd"]["v"] > 0.05, 3, "W to drive", show=lambda: state(page))
    page.keyboard.up("KeyW")
    # and the e-stop key stops the robot
    page.keyboard.press("Space")
    wait_until(lambda: state(page)["estop"], 3, "the e-stop to reach the robot")
    wait_until(lambda: abs(state(page)["cmd"]["v"]) < 1e-6, 3, "the robot's command to stop")
    page.click("#estop")  # the deliberate release
    wait_until(lambda: not state(page)["estop"], 3, "the e-stop to be released")
    assert errors == []
    page.close()

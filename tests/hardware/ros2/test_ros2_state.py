"""freelook's state on ROS, and an external e-stop, read and pressed by an rclpy node of the
tests' own: ``/diagnostics`` and ``freelook/…`` say the mode, the safety zone and scale, the
link's health and the e-stop as they change; a ``true`` on ``estop`` stops the robot, latched:
neither a ``false`` nor the cockpit's release while the button is pressed lets it move again,
only the cockpit's release after the button is let go. In this process: the robot server over
the ROS 2 backend, a native-profile operator over loopback UDP."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Any

import pytest
from ros2_base import RoomBase

from freelook.config import load_robot
from freelook.hardware.ros2 import NodeThread, open_ros2_server, ros
from freelook.link import ControlRequest, EStop, NativeCodec, TankCommand, Telemetry, UdpEndpoint
from freelook.robot import ServerOptions
from freelook.types import SafetyFlags
from loopback import OPENS, alive
from waiting import wait_until_async

pytestmark = pytest.mark.realtime


class Watcher:
    """A ROS tool's view of freelook: its diagnostics and state topics as they come, and an
    e-stop button it presses on ``estop``."""

    def __init__(self, domain_id: int) -> None:
        r = ros()
        self._ros = NodeThread("test_watcher", domain_id=domain_id)
        node = self._ros.node
        self.lock = threading.Lock()
        self.diagnostics: list[Any] = []
        self.state: dict[str, Any] = {}
        node.create_subscription(r.DiagnosticArray, "/diagnostics", self._on_diagnostics, 10)
        for key, kind in (
            ("mode", r.String),
            ("estop", r.Bool),
            ("safety_zone", r.Int32),
            ("safety_scale", r.Float64),
            ("link_ok", r.Bool),
        ):
            node.create_subscription(
                kind, f"freelook/{key}", lambda msg, key=key: self._on_state(key, msg), 10
            )
        self.button = node.create_publisher(r.Bool, "estop", 10)
        self._r = r
        self._ros.start()

    def _on_diagnostics(self, msg: Any) -> None:
        with self.lock:
            self.diagnostics.append(msg)

    def _on_state(self, key: str, msg: Any) -> None:
        with self.lock:
            self.state[key] = msg.data

    def status(self) -> tuple[int, str, dict[str, str]] | None:
        """The newest diagnostic of freelook: level, message and values."""
        with self.lock:
            if not self.diagnostics:
                return None
            status = self.diagnostics[-1].status[0]
        return status.level[0], status.message, {v.key: v.value for v in status.values}

    def press(self, pressed: bool) -> None:
        self.button.publish(self._r.Bool(data=pressed))

    def close(self) -> None:
        self._ros.close()


def test_the_state_goes_on_ros_and_an_external_estop_latches_until_the_cockpit_releases_it(
    ros_domain: int, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="freelook.hardware.ros2")
    config = load_robot("pioneer3dx")
    topics = config.ros2.topics.model_copy(update={"estop": "estop"})
    config = config.model_copy(
        update={"ros2": config.ros2.model_copy(update={"topics": topics, "state_period": 0.05})}
    )

    async def run() -> None:
        base = RoomBase(ros_domain).start()
        watcher = Watcher(ros_domain)
        options = ServerOptions(
            listen="udp://127.0.0.1:0", wire="native", allow_unauthenticated=True, camera=False
        )
        server, _ = await open_ros2_server(config, "ros2", options, domain_id=ros_domain)
        serving = asyncio.create_task(server.run())
        await wait_until_async(
            lambda: alive(serving) and server.ready.is_set(), OPENS, "the robot server to listen"
        )
        assert server.local_address is not None
        operator = await UdpEndpoint.open(("127.0.0.1", 0), remote=server.local_address)
        codec = NativeCodec(None, sender=1, allow_unauthenticated=True)
        telemetry: list[Telemetry] = []

        async def listen() -> None:
            while True:
                data = await operator.recv(timeout=0.5)
                if data is not None:
                    message = codec.decode(data).message
                    if isinstance(message, Telemetry):
                        telemetry.append(message)

        def send(message: Any) -> None:
            operator.send(codec.encode(message, time.time()))

        async def drive(seconds: float, v: float = 0.3) -> float:
            """Commands at the operator's 47 ms spacing for ``seconds``: their rate (/s), as
            this loop managed on a busy machine."""
            start = time.monotonic()
            end, sent = start + seconds, 0
            while time.monotonic() < end:
                send(TankCommand(v, 0.0, 0.0, 0.0))
                sent += 1
                await asyncio.sleep(0.047)
            return sent / (time.monotonic() - start)

        async def moving() -> bool:
            """Whether the base is commanded to move while the operator backs it (away from
            the wall ahead)."""
            await drive(0.3, v=-0.2)
            return base.received[-1].v < -0.05

        listener = asyncio.create_task(listen())
        try:
            # the program loads its compiled loops first; then it hears the base
            def hears_the_base() -> bool:
                if telemetry and not telemetry[-1].safety_flags & SafetyFlags.HARDWARE:
                    return True
                send(ControlRequest(1, 10))
                return False

            await wait_until_async(hears_the_base, 60.0, "the program to hear the base", every=0.05)
            # standing, the station in control sending nothing yet: the watchdog holds it (once
            # its timeout has run from the last of the requests above, and the state says so)
            await wait_until_async(
                lambda: (status := watcher.status()) is not None and status[0] == 1,
                5.0,
                "freelook's diagnostics: the watchdog holding the robot",
                show=watcher.status,
            )
            level, message, values = watcher.status()  # type: ignore[misc]
            assert (level, values["mode"], values["estop"]) == (1, "idle", "false")
            assert "watchdog" in message
            assert watcher.state["link_ok"] is False
            # driving towards the wall 4 m ahead: mode tank, the link healthy, all well; then
            # slowed by the zones as it nears the wall
            rate = await drive(1.0)
            await wait_until_async(
                lambda: watcher.state.get("mode") == "tank" and watcher.state.get("link_ok"),
                2.0,
                "mode tank and the link healthy on ROS",
                show=lambda: watcher.state,
            )
            level, message, values = watcher.status()  # type: ignore[misc]
            assert level == 0, message
            # the operator's commands, 21 a second on a quiet machine: the robot counts them
            assert float(values["link_rx_hz"]) > 0.5 * rate
            await drive(10.0, v=0.5)
            assert watcher.state["safety_scale"] < 1.0
            assert watcher.state["safety_zone"] >= 0
            level, message, values = watcher.status()  # type: ignore[misc]
            assert values["safety_zone"] == str(watcher.state["safety_zone"])
            assert "safety lets" in message
            # backing away from the wall, the robot moves
            assert await moving()
            # the link goes quiet: the watchdog's stop, a warning, the link not ok
            await wait_until_async(
                lambda: watcher.state.get("link_ok") is False, 2.0, "the quiet link on ROS"
            )
            level, message, _ = watcher.status()  # type: ignore[misc]
            assert level == 1
            assert "watchdog" in message
            # the external e-stop: engaged at once, on ROS too
            watcher.press(True)
            await wait_until_async(
                lambda: watcher.state.get("estop") is True, 2.0, "the e-stop on ROS"
            )
            level, message, _ = watcher.status()  # type: ignore[misc]
            assert level == 2
            assert "e-stop" in message
            assert not await moving()
            # the cockpit's release while the button is pressed: still stopped
            send(EStop(engaged=False))
            assert not await moving()
            # the button let go (false): still stopped, latched
            watcher.press(False)
            await wait_until_async(  # the robot heard it (its warning), before the release below
                lambda: any("let go" in r.getMessage() for r in caplog.records),
                5.0,
                "the robot to hear the button let go",
            )
            assert not await moving()
            assert telemetry[-1].estop
            # the cockpit's release now, a deliberate act after the button: it moves again
            send(EStop(engaged=False))
            await wait_until_async(moving, 3.0, "the robot to move again")
            await wait_until_async(
                lambda: watcher.state.get("estop") is False, 2.0, "the release on ROS"
            )
            # a false alone, with the e-stop engaged from the cockpit, releases nothing
            send(EStop(engaged=True))
            watcher.press(False)
            await asyncio.sleep(0.2)
            assert not await moving()
        finally:
            listener.cancel()
            operator.close()
            serving.cancel()
            await asyncio.gather(serving, listener, return_exceptions=True)
            watcher.close()
            base.close()

    asyncio.run(run())

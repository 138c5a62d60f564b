"""A station for a fleet: every robot on a Zenoh bus, one driven, the others watched.

:class:`FleetStation` keeps one :class:`OperatorStation` per robot it found on the bus (by
discovery, ``freelook/*/info``), each with its own authenticated link session. The robot the
operator picked is driven (its station asks for control; the robot grants it, or refuses while
another station holds it: arbitration stays on each robot). The others are watched: their
telemetry comes in, and a heartbeat now and then keeps their sessions open. The browsers see
the picked robot's cockpit and a fleet list (``{"type": "fleet", ...}`` twice a second): each
robot's mode, pose and speed and who controls it. ``{"type": "fleet_select", "robot": NAME}``
from a browser switches: the old robot is stopped and let go, the new one asked for.

With a recorder, every robot the station follows is recorded into one file, its topics under
``/NAME`` and its frames as ``NAME/…`` (the world frame ``map`` shared).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import re
from collections.abc import Callable
from typing import Any

from freelook.config import RobotConfig, load_robot
from freelook.errors import FreelookError
from freelook.link import RobotInfo, TransportUrl, ZenohBus, check_robot_name
from freelook.maps import World
from freelook.operator._station import OperatorStation
from freelook.record import BackgroundRecorder, RecorderView
from freelook.web import BrowserSlot, encode_json

__all__ = ["MAX_ROBOTS", "FleetStation"]

log = logging.getLogger(__name__)
DISCOVERY_PERIOD = 2.0  # s between looks for robots that joined the bus
FLEET_PERIOD = 0.5  # s between fleet lists to the browsers
MAX_ROBOTS = 64  # robots one station follows at most (a flood of names is not followed)


def _natural(name: str) -> list[tuple[int, int | str]]:
    """A sort key that puts robot-2 before robot-10."""
    return [(0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", name)]


class FleetStation:
    """One operator station for every robot on a Zenoh bus."""

    def __init__(
        self,
        config: RobotConfig,
        world: World | None,
        bus: ZenohBus,
        *,
        key: bytes,
        station: int,
        first: str,
        authority: int = 10,
        recorder: BackgroundRecorder | None = None,
        configs: Callable[[str], RobotConfig] | None = None,
        discovery_period: float = DISCOVERY_PERIOD,
        on_status: Callable[[str], None] | None = None,
        video_note: str | None = None,
        url: TransportUrl | None = None,
    ) -> None:
        """``first``: the robot to drive at the start; ``url``: the URL the robots were named
        by (its relays and ``?direct``, each robot's name put in); ``configs(model)``: a robot
        description by the model name a robot announces (default: built-in robots, else
        ``config``); ``on_status``: told when a robot's session changes state (a line);
        ``video_note``: why the robots send no video, when that is known (the cockpit says it
        in place of the camera)."""
        self.config = config
        self.world = world
        self.bus = bus
        self.key = key
        self.station = station
        self.authority = authority
        self.recorder = recorder
        self.discovery_period = discovery_period
        self.video_note = video_note
        self.url = url
        self._configs = configs or self._builtin_config
        self.on_status = on_status
        self.stations: dict[str, OperatorStation] = {}
        self.models: dict[str, str] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._slots: set[BrowserSlot] = set()
        self.selected = check_robot_name(first)
        self._add(RobotInfo(first, config.name), driving=True)
        self.refused_browser_messages = 0

    def _builtin_config(self, model: str) -> RobotConfig:
        if model == self.config.name or not model:
            return self.config
        try:
            return load_robot(model)
        except FreelookError:
            return self.config

    def _add(self, info: RobotInfo, driving: bool = False) -> OperatorStation:
        found = self.stations.get(info.name)
        if found is not None:
            return found
        station = OperatorStation(
            self._configs(info.model),
            self.world,
            TransportUrl("zenoh", robot=info.name)
            if self.url is None
            else dataclasses.replace(self.url, robot=info.name),
            key=self.key,
            station=self.station,
            authority=self.authority,
            recorder=RecorderView(self.recorder, info.name) if self.recorder else None,
            bus=self.bus,
            driving=driving,
        )
        station.on_status = self.on_status
        self.stations[info.name] = station
        self.models[info.name] = info.model
        with contextlib.suppress(RuntimeError):  # no running loop yet: run() starts it
            self._start(info.name)
        return station

    def _start(self, name: str) -> None:
        if name not in self._tasks:
            self._tasks[name] = asyncio.get_running_loop().create_task(
                self.stations[name].run(), name=f"station {name}"
            )

    @property
    def current(self) -> OperatorStation:
        """The station of the robot being driven."""
        return self.stations[self.selected]

    # -- the fleet ---------------------------------------------------------------------------

    async def run(self) -> None:
        """Follow the robots on the bus and feed the browsers until cancelled."""
        for name in self.stations:
            self._start(name)
        publish = asyncio.create_task(self._publish())
        try:
            while True:
                try:
                    found = await asyncio.to_thread(self.bus.discover, 0.5)
                except Exception:  # the bus closing under a look: try again later
                    log.exception("robot discovery failed")
                    found = []
                for info in found:
                    if len(self.stations) >= MAX_ROBOTS:
                        break
                    self._add(info)
                await asyncio.sleep(self.discovery_period)
        finally:
            publish.cancel()
            tasks = [publish, *self._tasks.values()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def select(self, name: str) -> str | None:
        """Drive ``name`` from now on (stop and let go of the robot driven before); the
        reason when there is no such robot."""
        if name not in self.stations:
            return f"refused: no robot {name!r} on the bus"
        if name == self.selected:
            return None
        old, new = self.current, self.stations[name]
        for slot in self._slots:
            old.detach(slot)
        old.send(old.core.watch())
        old.session.transmitting = True  # watching: heartbeats keep the session open
        self.selected = name
        new.send(new.core.drive())
        hello = encode_json(self.hello())
        for slot in self._slots:
            new.attach(slot)
            slot.offer_reply(hello)
        return None

    def summary(self) -> dict[str, Any]:
        """The fleet list the browsers show."""
        robots = []
        for name in sorted(self.stations, key=_natural):
            station = self.stations[name]
            t = station.telemetry
            last = station.core.last_rx
            robots.append(
                {
                    "name": name,
                    "model": self.models.get(name, ""),
                    "driving": name == self.selected,
                    "in_control": station.in_control,
                    "refused": station.core.refused_control,
                    "controller": t.controller if t is not None else None,
                    "mode": t.mode.name.lower() if t is not None else None,
                    "pose": [round(v, 3) for v in t.pose] if t is not None else None,
                    "v": round(t.v, 3) if t is not None else None,
                    "estop": t.estop if t is not None else False,
                    "age": None if last is None else round(station.clock() - last, 2),
                }
            )
        return {
            "type": "fleet",
            "station": self.station,
            "selected": self.selected,
            "robots": robots,
        }

    async def _publish(self) -> None:
        while True:
            await asyncio.sleep(FLEET_PERIOD)
            if self._slots:
                payload = encode_json(self.summary())
                for slot in list(self._slots):
                    slot.offer_reply(payload)

    # -- the cockpit backend -----------------------------------------------------------------

    def hello(self) -> dict[str, Any]:
        hello = {**self.current.hello(), "fleet": self.summary()}
        if self.video_note is not None:
            hello["video_note"] = self.video_note
        return hello

    def attach(self, slot: BrowserSlot) -> None:
        self._slots.add(slot)
        self.current.attach(slot)

    def detach(self, slot: BrowserSlot) -> None:
        self._slots.discard(slot)
        self.current.detach(slot)

    async def handle_browser(self, message: dict[str, Any], slot: BrowserSlot) -> str | None:
        if isinstance(message, dict) and message.get("type") == "fleet_select":
            name = message.get("robot")
            if not isinstance(name, str) or len(name) > 64:
                self.refused_browser_messages += 1
                return "refused: fleet_select needs a robot name"
            return self.select(name)
        return await self.current.handle_browser(message, slot)

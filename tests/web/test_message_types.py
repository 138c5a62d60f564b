"""The pages' JSDoc types of the station's messages (static/messages.js) against what the
station sends: the hello and state messages built for robots with and without an arm, a map,
a laser, sonars, an autonomous task, on the native and the thesis profiles, each as the page
receives it (JSON through the server's encoder). Every field sent is a property of its type,
of the kind the type says; every property without [brackets] is sent each time; and every
property is sent in one case or another, so a type never keeps a field the station dropped.
The fleet list, which needs a bus of robots, is held to FleetStation.summary's own source."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import freelook.operator._fleet as fleet_module
from freelook.config import RobotConfig, load_robot
from freelook.link import (
    ArmTelemetry,
    AutonomyTelemetry,
    LinkSession,
    LinkStatsReport,
    NativeCodec,
    PositionReport,
    Telemetry,
    ThesisCodec,
    parse_transport_url,
)
from freelook.maps import World, load_world
from freelook.operator import StationCore, parse_browser_message
from freelook.operator._view import hello_message, link_path, map_png, state_message
from freelook.types import Mode, SafetyFlags, TaskPhase
from freelook.web._app import encode_json

MESSAGES_JS = Path(__file__).parents[2] / "src/freelook/web/static/messages.js"
KEY = bytes(range(32))

# an ARIA map with a goal, a dock, a keep-out area and a keep-out line
OFFICE = """2D-Map
LineMinPos: 0 0
LineMaxPos: 9000 6000
Cairn: Goal 7000 4500 0.000000 "" ICON "Printer"
Cairn: DockWithHeading 1000 5000 90 "" ICON "Charger"
Cairn: ForbiddenArea 0 0 0.000000 "" ICON "Stairs" 6000 500 8500 2000
Cairn: ForbiddenLine 4000 0 0.000000 "" ICON "" 4500 3500 4500 6000
LINES
0 0 9000 0
9000 0 9000 6000
9000 6000 0 6000
0 6000 0 0
"""


@dataclass
class Prop:
    type: str
    optional: bool


@dataclass
class Types:
    """The typedefs of messages.js: each its properties, and which of them a message sent."""

    defs: dict[str, dict[str, Prop]]
    seen: set[tuple[str, str]] = field(default_factory=set)

    def check(self, value: Any, type_name: str, where: str) -> None:
        props = self.defs[type_name]
        assert isinstance(value, dict), f"{where}: {type_name} is an object, got {value!r}"
        unknown = set(value) - set(props)
        assert not unknown, f"{where}: sent but not in {type_name}: {sorted(unknown)}"
        missing = {k for k, p in props.items() if not p.optional} - set(value)
        assert not missing, f"{where}: {type_name} always has {sorted(missing)}, not sent"
        for key, item in value.items():
            self.seen.add((type_name, key))
            self.match(item, props[key].type, f"{where}.{key}")

    def match(self, value: Any, type_text: str, where: str) -> None:
        """``value`` is of one of the union's kinds (checked in turn when a typedef)."""
        failures = []
        for alternative in _union(type_text):
            try:
                self.kind(value, alternative, where)
                return
            except AssertionError as e:
                failures.append(str(e))
        shown = repr(value) if len(repr(value)) < 60 else repr(value)[:56] + " ..."
        raise AssertionError(f"{where}: {shown} is not {type_text} ({'; '.join(failures)})")

    def kind(self, value: Any, t: str, where: str) -> None:
        if t == "null":
            assert value is None, "not null"
        elif t == "number":
            assert isinstance(value, int | float), "not a number"
            assert not isinstance(value, bool), "a boolean, not a number"
        elif t == "string":
            assert isinstance(value, str), "not a string"
        elif t == "boolean":
            assert isinstance(value, bool), "not a boolean"
        elif t.startswith('"'):
            assert value == json.loads(t), f"not {t}"
        elif t.endswith("[]"):
            assert isinstance(value, list), "not an array"
            for k, item in enumerate(value):
                self.match(item, t[:-2], f"{where}[{k}]")
        elif t.startswith("["):
            parts = [p.strip() for p in t[1:-1].split(",")]
            assert isinstance(value, list), f"not a {t}"
            assert len(value) == len(parts), f"not a {t}"
            for k, (item, part) in enumerate(zip(value, parts, strict=True)):
                self.match(item, part, f"{where}[{k}]")
        elif (record := re.fullmatch(r"Record<string, (\w+)>", t)) is not None:
            assert isinstance(value, dict), "not a record"
            for key, item in value.items():
                self.match(item, record[1], f"{where}[{key!r}]")
        else:
            assert t in self.defs, f"{where}: {t} is no type messages.js names"
            self.check(value, t, where)


def _union(type_text: str) -> list[str]:
    return [t.strip() for t in type_text.split("|")]


def read_types() -> Types:
    """Each ``@typedef {object} Name`` of messages.js with its ``@property`` lines."""
    defs: dict[str, dict[str, Prop]] = {}
    for block in re.findall(r"/\*\*(.*?)\*/", MESSAGES_JS.read_text(encoding="utf-8"), re.S):
        name = re.search(r"@typedef \{object\} (\w+)", block)
        if name is None:
            continue
        props = re.findall(r"@property \{([^}]*)\} (\[?)(\w+)\]?", block)
        defs[name[1]] = {key: Prop(t, bool(bracket)) for t, bracket, key in props}
    assert defs, f"no typedef in {MESSAGES_JS}"
    return Types(defs)


def wire(message: dict[str, Any]) -> Any:
    """The message as the page receives it: the server's encoding, parsed."""
    return json.loads(encode_json(message)[1:])


def station(config: RobotConfig, native: bool = True) -> StationCore:
    codec = NativeCodec(KEY, sender=1) if native else ThesisCodec()
    session = LinkSession(codec, spacing=config.link.operator_tx_spacing)
    core = StationCore(config, None, session, native=native)
    session.periodic = core.periodic
    return core


def telemetry(config: RobotConfig, **fields: Any) -> Telemetry:
    """A report with a pose, the robot's laser and sonar readings, a zone acting."""
    laser = config.laser
    sonar = config.sonar
    return Telemetry(
        1.5, (0.1, 0.2, 0.3), (1.0, 2.0, 0.5), 0.2, 0.1, 0.25, 0.1, 0.2, -0.1,
        laser_angle_min=-1.5, laser_angle_increment=0.5, laser_range_max=8.0,
        laser=(1.0, 2.0, 8.0, 3.0, 4.0, 5.0, 6.0) if laser is not None else (),
        sonar=tuple(2.0 for _ in sonar.front_deg + sonar.rear_deg) if sonar is not None else (),
        safety_zone=0, safety_scale=0.5, safety_flags=SafetyFlags.ZONE | SafetyFlags.APPROACH,
        mode=Mode.FREE_LOOK, controller=1,
        link=LinkStatsReport(packets_received=90, packets_lost=10, rx_rate_hz=21.0),
        **fields,
    )  # fmt: skip


def refused(core: StationCore) -> StationCore:
    """The core with a refusal to show: the Arm mode asked of a robot without an arm."""
    request = parse_browser_message({"type": "mode", "mode": "arm"}, core.scales)
    assert request is not None
    list(core.handle(request, 0.0, wall_time=1.8e9))
    return core


def office(tmp_path: Path) -> World:
    path = tmp_path / "office.map"
    path.write_text(OFFICE)
    return load_world(path)


def hellos(tmp_path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    pioneer, taros = load_robot("pioneer3dx"), load_robot("taros")
    world = office(tmp_path)
    yield (
        "pioneer3dx on a map",
        hello_message(pioneer, world, map_png(world), station(pioneer), "native"),
    )
    yield (
        "pioneer3dx refused",
        hello_message(pioneer, None, None, refused(station(pioneer)), "native"),
    )
    yield "taros", hello_message(taros, None, None, station(taros), "native")
    thesis = station(pioneer, native=False)
    yield "thesis", hello_message(pioneer, None, None, thesis, "thesis")


def states() -> Iterator[tuple[str, dict[str, Any]]]:
    pioneer, taros, m2p2 = load_robot("pioneer3dx"), load_robot("taros"), load_robot("m2p2")
    yield "thesis, nothing heard", state_message(pioneer, station(pioneer, native=False), 1.0)
    thesis = station(pioneer, native=False)
    thesis.on_link_message(PositionReport(1.0, 2.0, 0.1, 0.2, 0.0, (3.0,) * 35, (2.0,) * 8), 1.0)
    yield "thesis, a position", state_message(pioneer, thesis, 1.2)
    native = refused(station(pioneer))
    native.on_link_message(telemetry(pioneer), 2.0)
    yield "pioneer3dx reporting", state_message(pioneer, native, 2.1)
    arm = station(taros)
    assert arm.arm is not None
    joints = len(arm.arm.describe()["joints"])
    report = ArmTelemetry((0.1,) * joints, (0.0,) * joints, 0.02, True, 1, (0,), ())
    arm.on_link_message(telemetry(taros, arm=report), 3.0)
    yield "taros reporting", state_message(taros, arm, 3.1)
    task = station(m2p2)
    progress = AutonomyTelemetry(TaskPhase.APPROACH_RECEPTACLE, 0.7, True, 2)
    task.on_link_message(telemetry(m2p2, autonomy=progress), 4.0)
    yield "m2p2 on its task", state_message(m2p2, task, 4.05)
    capped = station(pioneer)
    capped.on_link_message(telemetry(pioneer, speed_cap=(0.42, 0.8)), 5.0)
    yield "pioneer3dx with its speed capped to the delay", state_message(pioneer, capped, 5.05)
    timed = station(pioneer)  # the robot's clock known (one exchange): the prediction is sent
    timed.session.clock.add(3.0, 0.5, 0.5, 4.0)  # the robot's clock 3 s behind: sent at 4.5
    timed.on_link_message(telemetry(pioneer), 5.0)
    yield "pioneer3dx with its clock known", state_message(pioneer, timed, 5.05)
    going = station(pioneer)  # click-to-go: a goal sent
    request = parse_browser_message({"type": "goal", "x": 2.0, "y": 1.0}, going.scales)
    assert request is not None
    list(going.handle(request, 5.0, wall_time=1.8e9))
    yield "pioneer3dx sent a goal", state_message(pioneer, going, 5.1)
    relay = parse_transport_url("zenoh+tls://relay-a.example:7447,relay-b.example:7447/r1")
    yield "pioneer3dx through a relay", state_message(pioneer, native, 2.2, link_path(relay, None))


@pytest.fixture(scope="module")
def types() -> Types:
    return read_types()


def test_every_hello_sent_is_of_the_pages_hello_type(types: Types, tmp_path: Path) -> None:
    for case, message in hellos(tmp_path):
        types.check(wire(message), "Hello", case)


def test_every_state_sent_is_of_the_pages_state_type(types: Types) -> None:
    for case, message in states():
        types.check(wire(message), "State", case)


def _dict_keys(function: ast.FunctionDef) -> list[set[str]]:
    return [
        {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
        for node in ast.walk(function)
        if isinstance(node, ast.Dict)
    ]


def fleet_source() -> dict[str, list[set[str]]]:
    """The keys of the dictionaries FleetStation's summary and hello build."""
    tree = ast.parse(Path(fleet_module.__file__).read_text(encoding="utf-8"))
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "FleetStation"]
    methods = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}
    return {name: _dict_keys(methods[name]) for name in ("summary", "hello")}


def test_the_fleet_list_is_of_the_pages_fleet_types(types: Types) -> None:
    source = fleet_source()
    message = next(keys for keys in source["summary"] if "type" in keys)
    robot = next(keys for keys in source["summary"] if "name" in keys)
    assert message == set(types.defs["FleetMessage"])
    assert robot == set(types.defs["FleetRobot"])
    assert any("fleet" in keys for keys in source["hello"])  # the hello carries it
    assert "fleet" in types.defs["Hello"]


def test_every_property_of_the_types_is_sent_by_the_station(tmp_path: Path) -> None:
    types = read_types()
    for case, message in hellos(tmp_path):
        types.check(wire(message), "Hello", case)
    for case, message in states():
        types.check(wire(message), "State", case)
    fleet = {("Hello", "fleet")} | {
        (name, key) for name in ("FleetMessage", "FleetRobot") for key in types.defs[name]
    }
    named = {(name, key) for name, props in types.defs.items() for key in props}
    assert named - types.seen - fleet == set()


def test_the_types_are_read_whole() -> None:
    # the check above is only as good as the reading: each typedef with its properties
    types = read_types()
    assert {"Hello", "State", "HelloRobot", "MapInfo", "ArmView", "LinkStats"} <= set(types.defs)
    assert types.defs["Hello"]["map"] == Prop("MapInfo", True)
    assert types.defs["State"]["link"] == Prop("LinkState", False)
    assert types.defs["LinkState"]["up"] == Prop("LinkStats | null", False)
    with pytest.raises(AssertionError, match="not in Pose"):
        types.check({"x": 0.0, "y": 0.0, "theta": 0.0, "z": 0.0}, "Pose", "a pose")
    with pytest.raises(AssertionError, match="always has"):
        types.check({"x": 0.0, "y": 0.0}, "Pose", "a pose")
    with pytest.raises(AssertionError, match="is not number"):
        types.check({"x": "0", "y": 0.0, "theta": 0.0}, "Pose", "a pose")

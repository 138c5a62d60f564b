"""The campaign's web probes: a real ``freelook sim`` process (the cockpit's WebSocket and the
live Foxglove bridge) attacked while an authorised cockpit socket watches the robot's state.

Cockpit: sockets from a foreign Origin, without the token or with a guessed one, each trying
to drive; then, on the authorised socket, malformed JSON and every message type with
non-finite, huge and wrongly typed values. Foxglove: clients that never presented the token
advertising and publishing Twists, wrong tokens, and garbage frames. An unauthorised effect is
a socket served without the right to it, the robot commanded or displaced by someone without
the token, or a command beyond the robot's configured speed or turn rate; a crash is the
process ending or printing a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import random
import re
import secrets
import struct
from dataclasses import dataclass, field
from typing import Any

from tools.attack._tally import ProcessUnderAttack, Tally

__all__ = ["attack_web"]

START = 120.0  # s: a bound for the sim to start (numba compiles on a first run)
MOVED = 0.03  # m: at rest, localization trims the pose by up to a centimetre
FOXGLOVE = "foxglove.sdk.v1"
_URL = re.compile(r"open (https?://\S+)")
_FOX = re.compile(r"Foxglove: wss?://[^:]+:(\d+)")
_HOSTILE_NUMBERS: tuple[Any, ...] = (
    math.nan,
    math.inf,
    -math.inf,
    1e308,
    -1e308,
    2**64,
    "1",
    None,
    True,
    [],
    {},
)


@dataclass
class _State:
    """What the authorised cockpit socket sees of the robot."""

    poses: list[tuple[float, float]] = field(default_factory=list)
    commands: list[tuple[float, float]] = field(default_factory=list)
    closed: bool = False

    def mark(self) -> tuple[int, int]:
        return len(self.poses), len(self.commands)


async def _watch(ws: Any, state: _State) -> None:
    try:
        async for frame in ws:
            if not isinstance(frame, bytes) or frame[:1] != b"\x01":
                continue
            message = json.loads(frame[1:])
            if message.get("type") != "state":
                continue
            pose, cmd = message.get("pose"), message.get("cmd")
            if pose:
                state.poses.append((float(pose["x"]), float(pose["y"])))
            if cmd:
                state.commands.append((float(cmd["v"]), float(cmd["omega"])))
    except Exception:  # the socket closed: recorded, judged by the caller
        state.closed = True


def _valid_messages() -> list[dict[str, Any]]:
    """One message of each type the cockpit sends."""
    return [
        {"type": "axes", "mode": "free_look", "forward": 0.2, "left": 0.0, "turn": 0.1},
        {"type": "axes", "mode": "tank", "forward": 1.0, "left": 0.0, "turn": 1.0, "pan": 0.0},
        {"type": "key", "key": "w"},
        {"type": "mode", "mode": "free_look"},
        {"type": "estop", "engaged": False},  # (its values are not mutated: see below)
        {"type": "relocalize"},
        {"type": "linear", "action": "start", "x0": 1.0, "x1": 1.0},
        {"type": "trajectory", "action": "start", "points": [[0, 0], [1, 1]]},
        {"type": "transmission", "enabled": False},
        {"type": "arm", "cartesian": [0.1, 0.0, 0.0]},
        {"type": "gripper", "open": 0.5},
        {"type": "keyframe", "stream": 0},
        {"type": "video", "decoder": True},
        {"type": "painted", "stamp": 1.0},
        {"type": "ping", "stamp": 1.0},
    ]


def _hostile_messages(draw: random.Random, count: int) -> list[tuple[str, str | bytes]]:
    """Malformed JSON, non-finite and absurd values in every field, and binary frames."""
    from freelook.link import Mutator

    valid = _valid_messages()
    mutator = Mutator([json.dumps(m).encode() for m in valid], draw.randrange(2**32))
    out: list[tuple[str, str | bytes]] = []
    while len(out) < count:
        pick = draw.random()
        if pick < 0.4:
            # every field of every type but the e-stop's, which any value may engage: the
            # token holder's own stop, latched, is no attack (and would still the limits check)
            message = dict(draw.choice([m for m in valid if m["type"] != "estop"]))
            fields = [k for k in message if k != "type"] or ["stamp"]
            for name in draw.sample(fields, draw.randint(1, len(fields))):
                message[name] = draw.choice(_HOSTILE_NUMBERS)
            out.append(("non-finite or absurd value", json.dumps(message)))
        elif pick < 0.8:
            how, data = mutator.one()
            out.append((f"malformed JSON ({how})", data.decode("latin-1")))
        elif pick < 0.9:
            out.append(("binary frame", mutator.random_bytes()))
        else:
            out.append(("huge message", json.dumps({"type": "axes", "pad": "x" * 200_000})))
    return out


async def _unauthorised_cockpit(
    port: int, token: str, draw: random.Random, attempts: int, tally: Tally
) -> None:
    import websockets

    base = f"ws://127.0.0.1:{port}/ws"
    foreign = {"Origin": "http://evil.example"}
    drive = {"type": "axes", "mode": "tank", "forward": 1.0, "left": 0.0, "turn": 1.0}
    tries = [
        ("foreign Origin, no token", base, foreign),
        ("foreign Origin, the stolen token", f"{base}?token={token}", foreign),
        ("no token", base, None),
    ]
    for i in range(attempts):
        if i < len(tries):
            kind, url, headers = tries[i]
        else:
            guess = secrets.token_urlsafe(draw.choice((8, 24, 32)))
            kind, url, headers = "guessed token", f"{base}?token={guess}", None
        tally.tried(kind)
        try:
            async with websockets.connect(url, additional_headers=headers) as ws:
                served = False
                with contextlib.suppress(TimeoutError):
                    frame = await asyncio.wait_for(ws.recv(), 1.0)
                    served = isinstance(frame, bytes) and b'"hello"' in frame[:40]
                for _ in range(3):
                    await ws.send(json.dumps(drive))
                if served:
                    tally.effect(f"{kind}: the socket was served")
        except Exception:  # refused: closed, or a refused handshake
            pass


async def _hostile_values(ws: Any, draw: random.Random, count: int, tally: Tally) -> None:
    await ws.send(json.dumps({"type": "mode", "mode": "free_look"}))  # values that could drive
    for kind, frame in _hostile_messages(draw, count):
        tally.tried(kind)
        try:
            await ws.send(frame)
        except Exception:  # the server closed it: judged by the caller
            return
        if tally.inputs % 50 == 0:
            await asyncio.sleep(0.01)  # let the state stream flow


async def _foxglove(port: int, draw: random.Random, count: int, tally: Tally) -> None:
    import websockets

    from freelook.link import Mutator

    twist = {"linear": {"x": 1.0, "y": 0.0, "z": 0.0}, "angular": {"x": 0, "y": 0, "z": 1.0}}
    advertise = {
        "op": "advertise",
        "channels": [
            {"id": 1, "topic": "/cmd_vel", "encoding": "json", "schemaName": "geometry_msgs/Twist"},
            {
                "id": 2,
                "topic": "/freelook/auth",
                "encoding": "json",
                "schemaName": "std_msgs/String",
            },
        ],
    }
    frames = [
        struct.pack("<BI", 1, 1) + json.dumps(twist).encode(),
        struct.pack("<BI", 1, 2) + json.dumps({"token": "guess"}).encode(),
    ]
    mutator = Mutator([*frames, json.dumps(advertise).encode()], draw.randrange(2**32))
    try:
        async with websockets.connect(
            f"ws://127.0.0.1:{port}",
            subprotocols=[FOXGLOVE],  # type: ignore[list-item]
        ) as ws:
            await ws.send(json.dumps(advertise))
            for i in range(count):
                pick = i % 4
                if pick == 0:
                    tally.tried("Twist without the token")
                    await ws.send(frames[0])
                elif pick == 1:
                    guess = {"token": secrets.token_urlsafe(24)}
                    tally.tried("guessed token")
                    await ws.send(struct.pack("<BI", 1, 2) + json.dumps(guess).encode())
                else:
                    how, data = mutator.one()
                    tally.tried(f"mutated frame ({how})")
                    text = data[:1] == b"{"
                    await ws.send(data.decode("latin-1") if text else data)
                if i % 50 == 0:
                    await asyncio.sleep(0.01)
    except Exception as err:  # the bridge may close a client that sent garbage
        tally.notes.append(f"the bridge closed the hostile client: {type(err).__name__}")


def _moved(state: _State, since: tuple[int, int]) -> float:
    poses = state.poses[since[0] :]
    if not poses:
        return 0.0
    x0, y0 = poses[0]
    return max(math.hypot(x - x0, y - y0) for x, y in poses)


def _commanded(state: _State, since: tuple[int, int]) -> int:
    return sum(1 for v, w in state.commands[since[1] :] if abs(v) > 1e-3 or abs(w) > 1e-3)


async def _campaign(count: int, seed: int, cockpit: Tally, foxglove: Tally) -> None:
    import websockets

    from freelook.config import load_robot

    config = load_robot("pioneer3dx")
    top_speed = config.limits.max_speed
    top_turn = math.radians(config.limits.max_turn_rate_deg)
    draw = random.Random(seed)
    sim = ProcessUnderAttack(
        *("sim", "--no-browser", "--no-record", "--port", "0", "--world", "square"),
        *("--foxglove", "0", "--seed", str(seed)),
    )
    watcher: asyncio.Task[None] | None = None
    try:
        await asyncio.to_thread(sim.wait_line, "open http")
        announced = "".join(sim.lines)
        found, fox = _URL.search(announced), _FOX.search(announced)
        assert found is not None
        assert fox is not None
        url = found.group(1)
        port = int(url.split(":")[2].split("/")[0])
        token = url.split("token=")[1]
        state = _State()
        async with websockets.connect(
            f"ws://127.0.0.1:{port}/ws?token={token}", max_size=None
        ) as ws:
            watcher = asyncio.create_task(_watch(ws, state))
            loop = asyncio.get_running_loop()
            deadline = loop.time() + START
            while len(state.poses) < 5:
                if loop.time() > deadline or state.closed:
                    raise RuntimeError("campaign: no state on the cockpit socket")
                await asyncio.sleep(0.1)
            since = state.mark()
            await _unauthorised_cockpit(port, token, draw, max(4, count // 50), cockpit)
            await _foxglove(int(fox.group(1)), draw, count // 2, foxglove)
            await asyncio.sleep(1.0)  # what was sent last has been judged
            moved, commanded = _moved(state, since), _commanded(state, since)
            if moved > MOVED or commanded:
                what = f"the robot moved {moved:.3f} m, {commanded} commanded states"
                foxglove.effect(f"while strangers tried to drive: {what}")
            foxglove.notes.append(f"moved {moved:.3f} m, {commanded} commanded states")
            since = state.mark()
            await _hostile_values(ws, draw, count, cockpit)
            await asyncio.sleep(1.0)
            over = [
                (v, w)
                for v, w in state.commands[since[1] :]
                if not (abs(v) <= top_speed * 1.001 and abs(w) <= top_turn * 1.001)
            ]
            if over:
                cockpit.effect(f"{len(over)} states commanded beyond the limits, e.g. {over[0]}")
            if state.closed:
                cockpit.notes.append("the authorised socket was closed by hostile values")
            else:  # the driver still drives (and the watch sees a drive when there is one)
                since = state.mark()
                # a malformed message may have engaged the e-stop (a JSON mutation): the
                # operator releases it, a deliberate act, before driving again
                await ws.send(json.dumps({"type": "estop", "engaged": False}))
                await ws.send(json.dumps({"type": "mode", "mode": "free_look"}))
                for _ in range(20):
                    await ws.send(json.dumps(_valid_messages()[0]))
                    await asyncio.sleep(0.05)
                if not _commanded(state, since):
                    cockpit.effect("the authorised cockpit could not drive after the attack")
                else:
                    cockpit.notes.append("the authorised cockpit drove after the attack")
            cockpit.notes.append(
                f"{len(state.commands) - since[1]} states watched under hostile values; "
                f"fastest |v| {max((abs(v) for v, _ in state.commands), default=0):.2f} m/s "
                f"(limit {top_speed:.2f})"
            )
    finally:
        if watcher is not None:
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
        for problem in sim.problems():
            cockpit.crash(f"sim: {problem}")
        sim.stop()


def attack_web(count: int, seed: int) -> tuple[Tally, Tally]:
    """The cockpit's WebSocket and the Foxglove bridge of one ``freelook sim`` process."""
    cockpit, foxglove = Tally("cockpit WebSocket"), Tally("Foxglove bridge")
    asyncio.run(_campaign(count, seed, cockpit, foxglove))
    return cockpit, foxglove

"""The campaign's file and decoder probes: valid files and packets mutated by the link's
seeded generator, handed to the loaders and decoders the commands reach.

A crash is any exception but the project's own errors (a command turns those into one line
and exit code 2; anything else is a traceback). The slowest load or decode of each kind is
reported as a figure, not judged (a time depends on the machine). An unauthorised effect is
a forgery accepted: a mutated native packet that verifies under the receiver's key.
"""

from __future__ import annotations

import functools
import io
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tools.attack._tally import Tally

__all__ = ["attack_decoders", "attack_files"]


_ARIA = """2D-Map
LineMinPos: 0 0
LineMaxPos: 6000 4000
NumLines: 5
Cairn: RobotHome 1000 1000 0.0 "" ICON "start"
LINES
0 0 6000 0
6000 0 6000 4000
6000 4000 0 4000
0 4000 0 0
3000 0 3000 2500
DATA
"""


def _keys_text() -> bytes:
    return (
        b'[stations.1]\nkey = "' + bytes(range(32)).hex().encode() + b'"\nauthority = 10\n'
        b'modes = ["free_look", "tank"]\n\n[stations.2]\n'
        b'key = "' + bytes(range(1, 33)).hex().encode() + b'"\nobserver = true\n'
    )


def _recording() -> bytes:
    """A small recording as the recorder writes it (an MCAP file with the robot's topics)."""
    from freelook.record import Recorder

    stream = io.BytesIO()
    recorder = Recorder(stream, metadata={"robot": "pioneer3dx"}, clock=lambda: 1.0)
    for i in range(20):
        stamp = 1.0 + 0.1 * i
        recorder.cmd_vel(stamp, 0.1, 0.0)
        recorder.mode(stamp, "free_look", False, "1")
    recorder.close()
    return stream.getvalue()


def _files() -> dict[str, tuple[str, bytes, Callable[[Path], object]]]:
    """Each kind of file a command reads: its suffix, a valid example and its loader."""
    from freelook.config import load_robot
    from freelook.config import robots as robots_package
    from freelook.link import KeyRing
    from freelook.maps import load_world
    from freelook.record import recording_info

    robot = Path(str(robots_package.__path__[0])) / "pioneer3dx.toml"
    world = Path(load_world.__code__.co_filename).parent / "builtin" / "square.toml"
    return {
        "robot config": (".toml", robot.read_bytes(), load_robot),
        "keys file": (".toml", _keys_text(), KeyRing.load),
        "world (TOML)": (".toml", world.read_bytes(), load_world),
        "map (ARIA)": (".map", _ARIA.encode(), load_world),
        "recording (MCAP)": (".mcap", _recording(), recording_info),
    }


def _judge(
    tally: Tally,
    what: str,
    call: Callable[[], object],
    slowest: dict[str, float],
    refusals: tuple[type[Exception], ...] = (),
) -> bool:
    """Run one load or decode: True if it was accepted; counts a crash if it raised anything
    but the project's errors (or the decoder's declared ``refusals``, which its callers
    catch); keeps the slowest time of its kind in ``slowest``."""
    from freelook.errors import FreelookError

    refused: tuple[type[Exception], ...] = (FreelookError, *refusals)
    start = time.perf_counter()
    try:
        call()
        accepted = True
    except refused:
        accepted = False
    except Exception as err:  # what the campaign is here to find
        tally.crash(f"{what}: {type(err).__name__}: {err}"[:200])
        return False
    kind = what.split(" (")[0]
    slowest[kind] = max(slowest.get(kind, 0.0), time.perf_counter() - start)
    return accepted


def _slowest(tally: Tally, slowest: dict[str, float]) -> None:
    tally.notes.append(
        "slowest: " + ", ".join(f"{kind} {1000 * t:.0f} ms" for kind, t in slowest.items())
    )


def attack_files(count: int, seed: int) -> Tally:
    """``count`` mutated files of each kind through its loader."""
    from freelook.link import Mutator

    tally = Tally("files")
    slowest: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="freelook-attack-") as folder:
        for number, (kind, (suffix, valid, load)) in enumerate(_files().items()):
            mutator = Mutator([valid], seed + number, max_size=len(valid) + 64)
            for i in range(count):
                how, data = mutator.one()
                path = Path(folder) / f"{i % 8}{suffix}"
                path.write_bytes(data)
                path.chmod(0o600)  # as a keys file must be, or it is refused before it is read
                tally.tried(f"{kind} {how}")
                _judge(tally, f"{kind} ({how})", functools.partial(load, path), slowest)
    _slowest(tally, slowest)
    return tally


def attack_decoders(count: int, seed: int) -> Tally:
    """``count`` hostile inputs to each decoder a public entry point reaches."""
    from freelook.hardware.arcos import PacketDecoder, parse_sip
    from freelook.judp import JausId, JudpError, JudpMessage, pack_judp, parse_judp
    from freelook.link import (
        EStop,
        FreeLookCommand,
        Message,
        Mutator,
        NativeCodec,
        StreamDecoder,
        Telemetry,
        ThesisCodec,
        VelocityCommand,
        decode_map,
        encode_map,
        parse_transport_url,
    )
    from freelook.maps import load_world

    tally = Tally("decoders")
    key = bytes(range(32))
    sender, receiver = NativeCodec(key, sender=9), NativeCodec(key, sender=2)
    thesis = ThesisCodec()
    telemetry = Telemetry(1.0, (0, 0, 0), (1, 2, 3), 0.1, 0.2, 0.1, 0.2, 0, 0, laser=(1.0,) * 181)
    messages: list[Message] = [
        VelocityCommand(0.1, 0.0),
        FreeLookCommand(0.2, 0.1, 0.3),
        EStop(True),
        telemetry,
    ]
    native = [sender.encode(m, 1.0 + i) for i, m in enumerate(messages)]
    maps = [encode_map(load_world("square"))]
    gateway, client = JausId(1, 1, 1), JausId(7, 1, 1)
    judp = [
        pack_judp([JudpMessage(gateway, client, code.to_bytes(2, "little") + body, sequence=i)])
        for i, (code, body) in enumerate(
            (
                (0x000D, bytes([50])),
                (0x2B00, bytes([2])),
                (0x0415, bytes(16)),
                (0x2403, b"\x43\x00"),
            )
        )
    ]
    urls = [b"udp://127.0.0.1:47001", b"serial:///dev/ttyUSB0?baud=115200", b"zenoh://h:7447/r"]
    Case = tuple[str, list[bytes], Callable[[bytes], object]]
    cases: list[Case] = [
        ("native packet", native, receiver.decode),
        (
            "thesis packet",
            [thesis.encode(m, 1.0) for m in (messages[0], messages[3])],
            thesis.decode,
        ),
        ("native stream", native, lambda d: StreamDecoder(NativeCodec(key, sender=2)).feed(d)),
        ("map transfer", maps, decode_map),
        ("JUDP datagram", judp, parse_judp),
        ("ARCOS SIP", [bytes(64)], parse_sip),
        ("ARCOS stream", [b"\xfa\xfb\x03\x00\x00\x00"], lambda d: PacketDecoder().feed(d)),
        ("transport URL", urls, lambda d: parse_transport_url(d.decode("latin-1"))),
    ]
    slowest: dict[str, float] = {}
    for number, (kind, valid, decode) in enumerate(cases):
        mutator = Mutator(valid, seed + number)
        refusals: tuple[type[Exception], ...] = (JudpError,) if kind == "JUDP datagram" else ()
        forged = 0
        for _ in range(count):
            how, data = mutator.one()
            tally.tried(f"{kind} {how}")
            accepted = _judge(
                tally, f"{kind} ({how})", functools.partial(decode, data), slowest, refusals
            )
            if accepted and data not in valid and kind == "native packet":
                forged += 1
        if forged:
            tally.effect(f"{forged} mutated {kind}s accepted")
            tally.unauthorised += forged - 1
    _slowest(tally, slowest)
    return tally

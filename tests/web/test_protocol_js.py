"""The pages' protocol (web/static/protocol.js) agrees with the server's: the frame kinds and
header offsets the pages read are where :func:`freelook.web.encode_frame` and
:func:`freelook.web.encode_json` put them, the layout byte means what the link's
:class:`~freelook.link.FrameLayout` says, and the JSON message kinds each side names are ones
the other side knows."""

from __future__ import annotations

import inspect
import re
import struct
from pathlib import Path

import pytest

from freelook.link import FrameLayout, VideoCodec
from freelook.operator import parse_browser_message
from freelook.web import encode_frame, encode_json, encode_video_frame

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "src" / "freelook" / "web" / "static"
SOURCE = ROOT / "src" / "freelook"
PROTOCOL = (STATIC / "protocol.js").read_text(encoding="utf-8")
PAGES = {p.name: p.read_text(encoding="utf-8") for p in sorted(STATIC.glob("*.js"))}


def _table(name: str) -> dict[str, int]:
    """``export const NAME = Object.freeze({ KEY: number, ... })`` from protocol.js."""
    found = re.search(
        rf"export const {name} = Object\.freeze\((?:/\*\*[^*]*\*/ )?\(?\{{(.*?)\}}", PROTOCOL, re.S
    )
    if found is None:
        pytest.fail(f"protocol.js has no frozen table {name}")
    body = re.sub(r"//[^\n]*", "", found.group(1))
    pairs = {key: int(value) for key, value in re.findall(r"(\w+):\s*(\d+)", body)}
    assert pairs, f"protocol.js's {name} has no entries"
    return pairs


def _list(name: str) -> set[str]:
    """``export const NAME = Object.freeze([ "a", "b", ... ])`` from protocol.js."""
    found = re.search(rf"export const {name} = Object\.freeze\(\[(.*?)\]\)", PROTOCOL, re.S)
    if found is None:
        pytest.fail(f"protocol.js has no frozen list {name}")
    return set(re.findall(r'"(\w+)"', found.group(1)))


def _python_sources() -> str:
    """The server's Python sources (the attack campaign's browser client reads the server's
    kinds the other way round, so it is not among them)."""
    return "\n".join(
        p.read_text(encoding="utf-8")
        for p in sorted(SOURCE.rglob("*.py"))
        if not p.name.startswith("_attack")
    )


def test_the_frame_kinds_are_the_servers_first_byte() -> None:
    kinds = _table("FRAME")
    assert set(kinds) == {"JSON", "DRIVING", "STREAM", "VIDEO"}
    assert encode_json({"type": "state"})[0] == kinds["JSON"]
    assert encode_frame(1.0, 1, b"jpeg")[0] == kinds["DRIVING"]
    assert encode_frame(1.0, 1, b"jpeg", stream=1, layout=0)[0] == kinds["STREAM"]
    video = encode_video_frame(
        1.0, 1, b"vp8", stream=0, layout=0, codec=1, keyframe=True, width=2, height=2
    )
    assert video[0] == kinds["VIDEO"]
    assert len(set(kinds.values())) == len(kinds)


def test_the_driving_header_offsets_are_where_the_server_packs() -> None:
    h = _table("DRIVING_HEADER")
    jpeg = b"\xff\xd8 a jpeg \xff\xd9"
    data = encode_frame(1764201600.125, 0xDEADBEEF, jpeg)
    assert struct.unpack_from("<d", data, h["stamp"])[0] == 1764201600.125
    assert struct.unpack_from("<I", data, h["frameId"])[0] == 0xDEADBEEF
    assert data[h["size"] :] == jpeg


def test_the_stream_header_offsets_are_where_the_server_packs() -> None:
    h = _table("STREAM_HEADER")
    jpeg = b"\xff\xd8 another \xff\xd9"
    data = encode_frame(-2.5, 7, jpeg, stream=3, layout=int(FrameLayout.SIDE_BY_SIDE))
    assert data[h["stream"]] == 3
    assert data[h["layout"]] == FrameLayout.SIDE_BY_SIDE
    assert struct.unpack_from("<d", data, h["stamp"])[0] == -2.5
    assert struct.unpack_from("<I", data, h["frameId"])[0] == 7
    assert data[h["size"] :] == jpeg


def test_the_video_header_offsets_are_where_the_server_packs() -> None:
    h = _table("VIDEO_HEADER")
    chunk = b"\x90\x2c\x00 a vp8 chunk"
    data = encode_video_frame(
        1764201600.5,
        2**32 + 9,
        chunk,
        stream=2,
        layout=int(FrameLayout.SIDE_BY_SIDE),
        codec=int(VideoCodec.H264),
        keyframe=True,
        width=640,
        height=480,
    )
    assert data[h["stream"]] == 2
    assert data[h["layout"]] == FrameLayout.SIDE_BY_SIDE
    assert data[h["codec"]] == VideoCodec.H264
    assert data[h["flags"]] == 1
    assert struct.unpack_from("<d", data, h["stamp"])[0] == 1764201600.5
    assert struct.unpack_from("<I", data, h["frameId"])[0] == 9
    assert struct.unpack_from("<HH", data, h["width"]) == (640, 480)
    assert h["height"] == h["width"] + 2
    assert data[h["size"] :] == chunk
    delta = encode_video_frame(
        0.0, 1, b"", stream=0, layout=0, codec=1, keyframe=False, width=2, height=2
    )
    assert delta[h["flags"]] == 0


def test_the_codec_byte_means_what_the_link_says() -> None:
    assert _table("CODEC") == {c.name: int(c) for c in VideoCodec}


def test_the_layout_byte_means_what_the_link_says() -> None:
    layout = _table("LAYOUT")
    assert layout == {"MONO": FrameLayout.MONO, "STEREO": FrameLayout.SIDE_BY_SIDE}


def test_the_page_kinds_are_the_ones_the_server_takes() -> None:
    taken = set(re.findall(r'kind == "(\w+)"', inspect.getsource(parse_browser_message)))
    # handled before parsing: the ping (web) and the fleet pick (operator's fleet station)
    taken |= set(re.findall(r'get\("type"\) [!=]= "(\w+)"', _python_sources()))
    assert _list("PAGE_MESSAGES") == taken


def test_the_pages_send_only_the_page_kinds() -> None:
    sent = {
        (name, kind) for name, text in PAGES.items() for kind in re.findall(r'type: "(\w+)"', text)
    }
    assert sent, "no message kinds found in the pages' sources"
    kinds = _list("PAGE_MESSAGES")
    assert {pair for pair in sent if pair[1] not in kinds} == set()


def test_the_server_kinds_are_sent_by_the_server_and_the_only_ones_the_pages_read() -> None:
    kinds = _list("SERVER_MESSAGES")
    sent = set(re.findall(r'"type": "(\w+)"', _python_sources()))
    assert kinds <= sent, f"protocol.js names kinds the server never sends: {kinds - sent}"
    read = {kind for text in PAGES.values() for kind in re.findall(r'msg\.type === "(\w+)"', text)}
    assert read, "no message kinds read in the pages' sources"
    assert read <= kinds

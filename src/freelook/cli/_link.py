"""``freelook link``: inspect packets from a radio capture or a hex dump."""

from __future__ import annotations

import math
from dataclasses import fields, is_dataclass
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from freelook.files import read_regular

__all__ = ["describe", "register"]

link_app = typer.Typer(help="Inspect link traffic.", no_args_is_help=True)

MAX_CAPTURE_BYTES = 256 << 20  # a capture of a radio, read whole
_SPEED_FIELDS = {"v", "v1", "v2", "left", "right", "cmd_v", "x_start", "x_end", "max_speed"}
_RATE_FIELDS = {"omega", "cmd_omega", "pan_rate", "tilt_rate"}
_ANGLE_FIELDS = {"theta", "pan", "tilt", "laser_angle_min", "laser_angle_increment"}


def _value(name: str, value: Any) -> str:
    if isinstance(value, Enum):
        return value.name
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    if isinstance(value, tuple) and len(value) > 8:
        return f"[{len(value)} values: {', '.join(f'{v:.3f}' for v in value[:4])}, …]"
    if isinstance(value, float):
        if name in _SPEED_FIELDS:
            return f"{value:.3f} m/s ({value * 1000:.0f} mm/s)"
        if name in _RATE_FIELDS:
            return f"{value:.4f} rad/s ({math.degrees(value):.1f} °/s)"
        if name in _ANGLE_FIELDS:
            return f"{value:.4f} rad ({math.degrees(value):.1f}°)"
        if name == "spacing":
            return f"{value * 1000:.0f} ms"
        return f"{value:.4g}"
    return str(value)


def describe(message: Any) -> str:
    """One line per field, in real units."""
    if not is_dataclass(message):
        return str(message)
    parts = [f"{f.name}={_value(f.name, getattr(message, f.name))}" for f in fields(message)]
    return f"{type(message).__name__}(" + ", ".join(parts) + ")"


@link_app.command("decode")
def decode(
    hex_input: Annotated[
        list[str] | None, typer.Argument(help="Packet bytes as hex (spaces allowed).")
    ] = None,
    file: Annotated[
        Path | None,
        typer.Option(
            "--file",
            help="Raw capture (serial log): read packet by packet from its start, "
            "resynchronising on the next header after garbage.",
        ),
    ] = None,
    wire: Annotated[str, typer.Option(help="Profile: thesis or native.")] = "thesis",
    key: Annotated[
        str | None,
        typer.Option(
            help="Native: the station key (hex or passphrase; else FREELOOK_LINK_KEY). "
            "Session packets decode when the capture holds their session's handshake."
        ),
    ] = None,
) -> None:
    """Decode packets: fields in real units, CRC/authentication status, undecodable bytes."""
    from freelook.link import CaptureCodec, StreamDecoder, ThesisCodec, link_key

    data = _packet_bytes(hex_input, file)
    codec: ThesisCodec | CaptureCodec
    if wire == "thesis":
        codec = ThesisCodec()
    elif wire == "native":
        # reading a capture: the key it was made with, and the sessions its handshakes open
        codec = CaptureCodec(link_key(key, allow_weak=True))
    else:
        typer.echo(f"unknown wire profile {wire!r} (thesis or native)", err=True)
        raise typer.Exit(2)
    decoder = StreamDecoder(codec)
    for event in decoder.feed(data) + decoder.finish():
        where = f"@{event.offset:06d}"
        if event.kind == "packet" and event.decoded is not None:
            d = event.decoded
            check = codec.checked(event.data) if isinstance(codec, CaptureCodec) else "CRC ok"
            seq = (
                ""
                if d.sequence is None
                else f" station={d.sender} stream={d.stream} seq={d.sequence}"
            )
            typer.echo(
                f"{where} {d.size:4d} B  t={d.stamp:.3f} s{seq}  {check}  {describe(d.message)}"
            )
        elif event.kind == "rejected":
            typer.echo(f"{where} {len(event.data):4d} B  REJECTED: {event.reason}")
        else:
            what = event.reason or "undecodable"
            typer.echo(
                f"{where} {len(event.data):4d} B  {what}: {event.data[:32].hex(' ')}"
                + (" …" if len(event.data) > 32 else "")
            )
    stats = decoder.stats
    typer.echo(
        f"{stats.packets} packets, {stats.crc_failures} CRC failures, "
        f"{stats.auth_failures} authentication failures, {stats.garbage_bytes} bytes "
        f"of garbage"
    )
    if isinstance(codec, CaptureCodec) and codec.key is not None:
        typer.echo(
            f"{len(codec.sessions)} handshakes in the capture, "
            f"{codec.keys_derived} session keys derived from them"
        )


def _packet_bytes(hex_input: list[str] | None, file: Path | None) -> bytes:
    """The bytes to decode: the hex given, or the capture file's (exit 2 on neither or both,
    a file that cannot be read, or text that is not hex)."""
    if (hex_input is None) == (file is None):
        typer.echo("give packet hex or --file CAPTURE (one of them)", err=True)
        raise typer.Exit(2)
    if file is not None:
        try:
            return read_regular(file, MAX_CAPTURE_BYTES)
        except OSError as err:
            typer.echo(f"{file}: cannot read: {err.strerror}", err=True)
            raise typer.Exit(2) from None
    text = "".join(hex_input or []).replace(" ", "").replace(":", "")
    try:
        return bytes.fromhex(text)
    except ValueError:
        typer.echo(f"not hex: {text[:40]!r}", err=True)
        raise typer.Exit(2) from None


def register(app: typer.Typer) -> None:
    """Add the ``link`` group to ``app``."""
    app.add_typer(link_app, name="link")

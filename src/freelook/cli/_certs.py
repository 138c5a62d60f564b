"""``freelook certs``: a local certificate authority for the cockpit's HTTPS (phones and
tablets need a secure page for the Gamepad API and WebXR off loopback)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

__all__ = ["register"]

certs_app = typer.Typer(
    help="Certificates for serving the cockpit over HTTPS to phones and tablets.",
    no_args_is_help=True,
)

#: the files ``certs new`` writes, and their modes: keys readable by their owner only
FILES = (
    ("ca.pem", 0o644),
    ("ca-key.pem", 0o600),
    ("server.pem", 0o644),
    ("server-key.pem", 0o600),
)

_TRUST = """\
Trust the CA on each phone or tablet once (send it {ca} by mail, AirDrop or a file share):
  iOS/iPadOS: open the file, then Settings > General > VPN & Device Management > the
    downloaded profile > Install; then Settings > General > About > Certificate Trust
    Settings > turn on full trust for "{name}".
  Android: Settings > Security & privacy > More security settings > Encryption &
    credentials > Install a certificate > CA certificate > choose the file (Chrome trusts
    it for web pages).
Keep {ca_key} private: whoever holds it can make certificates every such phone trusts."""


@certs_app.command("new")
def new_command(
    directory: Annotated[
        Path, typer.Argument(help="Where to write the files (made if missing; none overwritten).")
    ],
    host: Annotated[
        list[str] | None,
        typer.Option(
            "--host",
            help="A name or IP address the cockpit is reached by (repeat; default: localhost, "
            "127.0.0.1 and this machine's host name).",
        ),
    ] = None,
    days: Annotated[
        int, typer.Option(help="Days the server certificate is valid (at most 825).")
    ] = 397,
    name: Annotated[str, typer.Option(help="The CA's name, as phones show it.")] = "",
) -> None:
    """Make a local certificate authority and a server certificate it signs for the cockpit:
    ca.pem (install it on the phones), ca-key.pem, server.pem and server-key.pem (for
    --certfile and --keyfile), the keys readable by you only."""
    import socket

    from freelook.web import default_hosts, make_certificates

    hosts = list(host) if host else default_hosts()
    ca_name = name or f"freelook local CA ({socket.gethostname() or 'this machine'})"
    paths = [directory / file for file, _ in FILES]
    existing = [str(p) for p in paths if p.exists()]
    if existing:
        typer.echo(f"{', '.join(existing)}: exists; nothing written", err=True)
        raise typer.Exit(2)
    try:
        made = make_certificates(hosts, ca_name=ca_name, days=days)
    except ValueError as err:
        typer.echo(f"freelook certs new: {err}", err=True)
        raise typer.Exit(2) from None
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for (path, (_, mode)), data in zip(zip(paths, FILES, strict=True), made, strict=True):
            _write(path, data, mode)
    except OSError as err:
        typer.echo(f"{err.filename}: cannot write: {err.strerror}", err=True)
        raise typer.Exit(2) from None
    ca, ca_key, cert, key = paths
    typer.echo(f"{directory}: a CA ({ca_name}) and a server certificate for {', '.join(hosts)}")
    typer.echo(
        f"serve: freelook operator --host 0.0.0.0 --certfile {cert} --keyfile {key} "
        f"(or freelook sim), then open https://{hosts[-1]}:8080/ on the phone"
    )
    typer.echo(_TRUST.format(ca=ca, ca_key=ca_key, name=ca_name))


def _write(path: Path, data: bytes, mode: int) -> None:
    """A new file of ``data`` with ``mode`` from its first byte (never an existing one)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "wb") as stream:
        stream.write(data)
    os.chmod(path, mode)  # whatever the umask took away or left


def register(app: typer.Typer) -> None:
    """Add ``certs`` to the ``freelook`` command."""
    app.add_typer(certs_app, name="certs")

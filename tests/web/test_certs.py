"""``freelook certs new``: a CA and a server certificate, the keys readable by their owner only;
the cockpit served over real TLS on loopback with them, verified against that CA by Python's
ssl; and over HTTPS a page from another origin still cannot drive."""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import websockets
from test_access import TOKEN, _Backend, _free_port  # type: ignore[import-not-found]
from typer.testing import CliRunner
from websockets.exceptions import ConnectionClosed

from freelook.cli import app
from freelook.web import REFUSED_CLOSE_CODE, cockpit_server, create_app, make_certificates
from loopback import alive
from waiting import wait_until_async


def _new(directory: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["certs", "new", str(directory), *args])
    return result.exit_code, result.output


def test_certs_new_writes_a_ca_and_a_server_certificate_keys_private(tmp_path: Path) -> None:
    out = tmp_path / "certs"
    code, said = _new(out, "--host", "localhost", "--host", "127.0.0.1", "--host", "robot.lan")
    assert code == 0, said
    for name, mode in [
        ("ca.pem", 0o644),
        ("ca-key.pem", 0o600),
        ("server.pem", 0o644),
        ("server-key.pem", 0o600),
    ]:
        assert stat.S_IMODE((out / name).stat().st_mode) == mode, name
    assert "iOS" in said
    assert "Certificate Trust" in said
    assert "Android" in said
    assert "CA certificate" in said
    assert f"--certfile {out / 'server.pem'} --keyfile {out / 'server-key.pem'}" in said
    assert b"PRIVATE KEY" in (out / "server-key.pem").read_bytes()
    # the server certificate names each host, and is followed by its CA (the chain)
    from cryptography import x509

    chain = x509.load_pem_x509_certificates((out / "server.pem").read_bytes())
    assert len(chain) == 2
    names = chain[0].extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["localhost", "robot.lan"]
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    assert chain[1].public_bytes(serialization_pem()) == (out / "ca.pem").read_bytes()
    # never over what is there
    before = (out / "ca-key.pem").read_bytes()
    code, said = _new(out)
    assert code == 2
    assert "exists; nothing written" in said
    assert (out / "ca-key.pem").read_bytes() == before


def serialization_pem() -> object:
    from cryptography.hazmat.primitives import serialization

    return serialization.Encoding.PEM


def test_the_defaults_are_loopback_and_this_machine(tmp_path: Path) -> None:
    code, said = _new(tmp_path / "c")
    assert code == 0, said
    assert f"localhost, 127.0.0.1, {socket.gethostname()}" in said


@pytest.mark.parametrize(
    ("hosts", "days", "says"),
    [([], 397, "no host"), (["a b"], 397, "neither"), (["localhost"], 900, "825")],
)
def test_what_cannot_be_certified_is_refused(hosts: list[str], days: int, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        make_certificates(hosts, days=days)


@asynccontextmanager
async def _https(directory: Path) -> AsyncIterator[int]:
    port = _free_port()
    server = cockpit_server(
        create_app(_Backend(), TOKEN),
        "127.0.0.1",
        port,
        certfile=directory / "server.pem",
        keyfile=directory / "server-key.pem",
    )
    task = asyncio.create_task(server.serve())
    await wait_until_async(lambda: alive(task) and server.started, 20, "the web server to start")
    try:
        yield port
    finally:
        server.should_exit = True
        await task


def _get(port: int, context: ssl.SSLContext, name: str) -> tuple[str, dict[str, object]]:
    """GET / over TLS as ``name`` (the name checked against the certificate): its status
    line, and the certificate the server showed."""
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        context.wrap_socket(raw, server_hostname=name) as tls,
    ):
        request = f"GET /?token={TOKEN} HTTP/1.1\r\nHost: {name}:{port}\r\n"
        tls.sendall((request + "Connection: close\r\n\r\n").encode())
        head = tls.recv(4096).decode("latin-1")
        return head.split("\r\n", 1)[0], dict(tls.getpeercert() or {})


async def _drives(url: str, origin: str, context: ssl.SSLContext) -> int | None:
    """Connect from a page of ``origin`` and try to drive: the close code, or None when the
    socket was served (its hello came)."""
    async with websockets.connect(url, ssl=context, additional_headers={"Origin": origin}) as ws:
        try:
            await ws.send(json.dumps({"type": "axes", "forward": 1.0}))
            reply = await asyncio.wait_for(ws.recv(), 5)
        except ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd is not None else None
    assert isinstance(reply, bytes)
    assert b"hello" in reply
    return None


def test_the_cockpit_over_https_with_those_files_verifies_and_keeps_other_origins_out(
    tmp_path: Path,
) -> None:
    out = tmp_path / "certs"
    code, said = _new(out, "--host", "localhost", "--host", "127.0.0.1")
    assert code == 0, said
    trusting = ssl.create_default_context(cafile=out / "ca.pem")
    assert trusting.verify_mode == ssl.CERT_REQUIRED
    assert trusting.check_hostname
    stranger = ssl.create_default_context()  # the system's CAs only

    async def main() -> None:
        async with _https(out) as port:
            for name in ("127.0.0.1", "localhost"):  # the IP and the DNS name alike
                status, cert = await asyncio.to_thread(_get, port, trusting, name)
                assert status == "HTTP/1.1 200 OK", status
                assert cert["subjectAltName"] == (
                    ("DNS", "localhost"),
                    ("IP Address", "127.0.0.1"),
                )
            # a name it does not carry, and a client that does not trust the CA: refused
            with pytest.raises(ssl.SSLCertVerificationError, match=r"mismatch|match"):
                await asyncio.to_thread(_get, port, trusting, "robot.lan")
            with pytest.raises(ssl.SSLCertVerificationError, match=r"self.signed|local issuer"):
                await asyncio.to_thread(_get, port, stranger, "localhost")
            url = f"wss://127.0.0.1:{port}/ws?token={TOKEN}"
            assert await _drives(url, f"https://127.0.0.1:{port}", trusting) is None
            for foreign in (
                "https://evil.example",
                f"https://evil.example:{port}",
                f"http://127.0.0.1:{port}",  # the same address without TLS is another origin
                f"https://127.0.0.1:{port + 1}",
            ):
                assert await _drives(url, foreign, trusting) == REFUSED_CLOSE_CODE, foreign
            # the token still counts over TLS
            bare = f"wss://127.0.0.1:{port}/ws?token=wrong"
            assert await _drives(bare, f"https://127.0.0.1:{port}", trusting) == (
                REFUSED_CLOSE_CODE
            )

    asyncio.run(main())

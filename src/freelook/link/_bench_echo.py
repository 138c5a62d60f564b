"""A compiled UDP echo on loopback for the benchmarks: the limit a userspace echo sets.

``socat`` where it is installed (its UDP listener bound to 127.0.0.1, piping what it reads
back), else a C echo of a dozen lines built with the system's C compiler. Either runs in a
process of its own, started once per run, stopped (by its process) when the run ends, and
gone by itself after a minute without a datagram should this process die first.
"""

from __future__ import annotations

import atexit
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["compiled_echo"]

IDLE_S = 60  # the echo exits after this long without a datagram
PAYLOAD = 54  # bytes a round trip carries (the raw echo's)

_ECHO_C = r"""
#include <arpa/inet.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/time.h>

int main(void) {
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {0};
    socklen_t n = sizeof a;
    struct timeval idle = {IDLE_S, 0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (s < 0 || bind(s, (struct sockaddr *)&a, n) || getsockname(s, (struct sockaddr *)&a, &n)
        || setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof idle))
        return 1;
    printf("%d\n", ntohs(a.sin_port));
    fflush(stdout);
    for (;;) {
        char buf[2048];
        struct sockaddr_in from;
        socklen_t len = sizeof from;
        ssize_t got = recvfrom(s, buf, sizeof buf, 0, (struct sockaddr *)&from, &len);
        if (got < 0)
            return 0;
        sendto(s, buf, (size_t)got, 0, (struct sockaddr *)&from, len);
    }
}
"""


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _answers(
    client: socket.socket, address: tuple[str, int], process: subprocess.Popen[bytes]
) -> bool:
    """Whether the echo at ``address`` sends a probe back within 5 s (False: it exited)."""
    client.settimeout(0.05)
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline and process.poll() is None:
        client.sendto(bytes(PAYLOAD), address)
        try:
            client.recvfrom(2048)
        except TimeoutError:
            continue
        client.settimeout(1.0)
        return True
    return False


def _start_socat(socat: str, client: socket.socket) -> tuple[tuple[str, int], str]:
    for _ in range(3):  # the port picked may be taken before socat binds it
        address = ("127.0.0.1", _free_port())
        listen = f"UDP4-LISTEN:{address[1]},bind=127.0.0.1"
        process = subprocess.Popen(
            [socat, f"-T{IDLE_S}", listen, "PIPE"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        atexit.register(_stop, process)
        if _answers(client, address, process):
            return address, "socat"
        _stop(process)
    raise RuntimeError("socat did not echo on 127.0.0.1")


def _start_c(cc: str, client: socket.socket) -> tuple[tuple[str, int], str]:
    folder = Path(tempfile.mkdtemp(prefix="freelook-echo-"))
    atexit.register(shutil.rmtree, folder, True)
    (folder / "echo.c").write_text(_ECHO_C)
    binary = folder / "echo"
    build = [cc, "-O2", f"-DIDLE_S={IDLE_S}", "-o", str(binary), str(folder / "echo.c")]
    subprocess.run(build, check=True, capture_output=True)
    process = subprocess.Popen([str(binary)], stdout=subprocess.PIPE)
    atexit.register(_stop, process)
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    address = ("127.0.0.1", int(line or 0))
    if not line or not _answers(client, address, process):
        _stop(process)
        raise RuntimeError(f"the C echo did not start ({line!r})")
    return address, "cc"


def compiled_echo(n: int, which: str | None = None) -> tuple[Callable[[], list[float]], str]:
    """``n`` round trips of a blocking socket to a compiled echo on loopback, per call (each
    one's time in seconds), and which echo it is: ``socat``, else ``cc`` (or the one
    ``which`` names). The echo starts now; RuntimeError when none can."""
    socat = shutil.which("socat") if which in (None, "socat") else None
    cc = shutil.which("cc") or shutil.which("gcc") if which in (None, "cc") else None
    if socat is None and cc is None:
        raise RuntimeError(f"no compiled echo: no {which or 'socat nor C compiler (cc, gcc)'}")
    client = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    client.bind(("127.0.0.1", 0))
    atexit.register(client.close)
    try:
        if socat is not None:
            address, name = _start_socat(socat, client)
        else:
            assert cc is not None
            address, name = _start_c(cc, client)
    except BaseException:
        client.close()
        raise
    payload = bytes(PAYLOAD)

    def round_trips() -> list[float]:
        samples = []
        for _ in range(n):
            t0 = time.perf_counter()
            client.sendto(payload, address)
            client.recvfrom(2048)
            samples.append(time.perf_counter() - t0)
        return samples

    return round_trips, name

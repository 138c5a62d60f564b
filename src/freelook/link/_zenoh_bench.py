"""``link.relay``: a command's round trip through a relay on this machine against direct UDP.

The relay is ``freelook relay`` started as a user starts it (its users file written by
``freelook keys relay``), on TLS when ``openssl`` is here to make it a certificate and on plain
TCP otherwise (the ``tls`` figure says which). The robot's end and a station's end are Zenoh
clients of it, each logged in with its own credentials, through the transport table as the
robot server and the station open them; the station sends a signed command, the robot's end
verifies it and answers, the station verifies the answer. The same exchange runs over two
asyncio UDP endpoints in the same run, call by call in turn (the load weighs on both alike).
The relay process is stopped, by its pid, when the benchmarking process exits."""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from freelook.bench import Case, added_figures, benchmark, stop_process
from freelook.link._bench import _native_pair, _udp_exchange
from freelook.link._messages import VelocityCommand
from freelook.link._zenoh_acl import TLS_CA_ENV

_STATION_KEY = "5b1e0c8b7d2f4a6e9c3b1d0f8e7a6c5b4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a"
_ROBOT_KEY = "a9f0e1d2c3b4a5f6e7d8c9b0a1f2e3d4c5b6a7f8e9d0c1b2a3f4e5d6c7b8a9f0"


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _private(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o600)
    return path


def _start_relay(folder: Path) -> tuple[str, bool, subprocess.Popen[str]]:
    """``freelook relay`` on 127.0.0.1 (TLS when openssl can make its certificate): the
    robot's URL, whether it is TLS, and the relay's process."""
    tls = shutil.which("openssl") is not None
    zenoh = ""
    if tls:
        ca, ca_key, cert, key = (folder / n for n in ("ca.pem", "ca.key", "cert.pem", "key.pem"))
        (folder / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n")
        for args in (
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
             "/CN=freelook bench ca", "-keyout", ca_key, "-out", ca],
            ["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", key,
             "-out", folder / "cert.csr"],
            ["x509", "-req", "-in", folder / "cert.csr", "-CA", ca, "-CAkey", ca_key,
             "-CAcreateserial", "-days", "1", "-extfile", folder / "ext.cnf", "-out", cert],
        ):  # fmt: skip
            subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True)
        zenoh = f'[zenoh]\ntls_root_ca = "{ca}"\n'
        os.environ.setdefault(TLS_CA_ENV, str(ca))  # the station end checks the relay by it
    keys = _private(
        folder / "keys.toml",
        f'[stations.1]\nkey = "{_STATION_KEY}"\n[robots.r1]\nkey = "{_ROBOT_KEY}"\n{zenoh}',
    )
    cli = [sys.executable, "-m", "freelook.cli"]
    users = folder / "relay.toml"
    subprocess.run([*cli, "keys", "relay", str(keys), str(users)], check=True, capture_output=True)
    if tls:
        with users.open("a") as stream:
            stream.write('\n[zenoh]\ntls_certificate = "cert.pem"\ntls_private_key = "key.pem"\n')
    port = _free_port()
    listen = f"{'tls' if tls else 'tcp'}/127.0.0.1:{port}"
    relay = subprocess.Popen(
        [*cli, "relay", "--listen", listen, "--users", str(users)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    atexit.register(stop_process, relay)
    assert relay.stdout is not None
    line = relay.stdout.readline()
    if "listening on" not in line:
        stop_process(relay)
        raise RuntimeError(f"freelook relay did not start: {line}")
    scheme = "zenoh+tls" if tls else "zenoh"
    query = "" if tls else "?mode=client"
    return f"{scheme}://127.0.0.1:{port}/r1{query}", tls, relay


async def _relay_exchange(url: str, keys: Path, n: int) -> list[float]:
    """``n`` command round trips through the relay at ``url``; each one's time in seconds."""
    from freelook.link._auth import derive_key
    from freelook.link._keys import KeyRing
    from freelook.link._transport_table import Side, parse_transport_url

    parsed = parse_transport_url(url)
    robot = await parsed.transport.open(parsed, Side("robot", keys=KeyRing.load(keys)))
    station = await parsed.transport.open(parsed, Side("station", key=derive_key(_STATION_KEY)))
    op_codec, robot_codec = _native_pair()
    robot_codec.sender = 100
    op_codec.replay.max_age = 1e12
    answered = [0]

    async def robot_side() -> None:
        while True:
            item = await robot.recv_from(0.05)
            if item is not None:
                data, source = item
                decoded = robot_codec.decode(data)
                robot.learn_peer(source)
                robot.send_to(robot_codec.encode(decoded.message, time.monotonic()), source)
                answered[0] += 1

    task = asyncio.create_task(robot_side())
    message = VelocityCommand(0.25, 0.17)
    samples: list[float] = []
    try:
        # the first commands wait for both ends' subscriptions to reach each other
        deadline = time.monotonic() + 10.0
        while not answered[0]:
            if time.monotonic() > deadline:
                raise RuntimeError("no answer through the relay in 10 s")
            station.send(op_codec.encode(message, time.monotonic()))
            if (got := await station.recv_from(0.2)) is not None:
                op_codec.decode(got[0])
        for _ in range(n):
            t0 = time.perf_counter()
            station.send(op_codec.encode(message, time.monotonic()))
            got = await station.recv_from(1.0)
            if got is None:
                continue  # lost: not a round trip
            op_codec.decode(got[0])
            samples.append(time.perf_counter() - t0)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        station.close()
        robot.close()
    return samples


def _cpu_s(pid: int) -> float:
    """CPU seconds process ``pid`` has used (user + system; Linux's /proc), or nan."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@benchmark("link.relay")
def relay_round_trip() -> Case:
    """A command's round trip through ``freelook relay`` on this machine (both ends its
    clients) vs direct UDP between asyncio endpoints, call by call in turn; figures: both
    medians, the time the relay adds, the ratio, and the relay's CPU per second of round trips
    (back to back, far more packets than a robot's 50 a second); and the VP9 video's frames a
    second at a station through it and direct, the robot told its link carries 250 kbit/s
    (``freelook.launch``'s figures)."""
    n = 200
    folder = Path(tempfile.mkdtemp(prefix="freelook-bench-relay-"))
    url, tls, relay = _start_relay(folder)
    keys = folder / "keys.toml"
    relay_medians: list[float] = []
    udp_medians: list[float] = []
    every: list[float] = []
    cpu = [0.0, 0.0]  # relay CPU s, wall s of exchanges

    def run() -> None:
        before, t0 = _cpu_s(relay.pid), time.perf_counter()
        samples = asyncio.run(_relay_exchange(url, keys, n))
        cpu[0] += _cpu_s(relay.pid) - before
        cpu[1] += time.perf_counter() - t0
        if len(samples) < n // 2:
            raise RuntimeError(f"only {len(samples)} of {n} round trips through the relay")
        every.extend(samples)
        relay_medians.append(statistics.median(samples))

    def baseline() -> None:
        udp_medians.append(statistics.median(asyncio.run(_udp_exchange(n))))

    def paired_ratio() -> float:
        return statistics.median(a / b for a, b in zip(relay_medians, udp_medians, strict=False))

    def extra() -> dict[str, float]:
        ordered = sorted(every)
        relay_p50, udp_p50 = statistics.median(relay_medians), statistics.median(udp_medians)
        return {
            "relay_p50_ms": relay_p50 * 1e3,
            "relay_p99_ms": ordered[int(0.99 * (len(ordered) - 1))] * 1e3,
            "udp_p50_ms": udp_p50 * 1e3,
            "added_ms": (relay_p50 - udp_p50) * 1e3,
            "p50_ratio": paired_ratio(),
            "relay_cpu_per_s": cpu[0] / cpu[1] if cpu[1] else float("nan"),
            "relay_cpu_us_per_round_trip": cpu[0] / len(every) * 1e6 if every else float("nan"),
            "tls": float(tls),
            "pairs": float(min(len(relay_medians), len(udp_medians))),
            # the robot program's video at 250 kbit/s through this relay and direct, measured
            # where the robot program and the station are known (freelook.launch)
            **added_figures(
                "link.relay",
                {"url": url, "keys": str(keys), "station_key": _STATION_KEY, "folder": str(folder)},
            ),
        }

    return Case(
        run=run,
        ops_per_call=n,
        baseline=baseline,
        unit="round trip",
        extra=extra,
        interleave=True,
        ratio=paired_ratio,
    )

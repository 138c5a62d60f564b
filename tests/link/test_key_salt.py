"""Passphrase keys stretched with each install's own salt: the same passphrase gives every
install its own key, so no dictionary computed ahead covers a captured SessionOpen; the salt
is written beside the key (``SALT:passphrase``, a keys file's ``salt``) and checked as every
field is; hex keys and the unsalted passphrases of earlier installs keep their keys."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from freelook.cli import app
from freelook.config import load_robot
from freelook.errors import ConfigError
from freelook.hardware.sim import simulated_server
from freelook.link import (
    AuthenticationError,
    KeyRing,
    LinkSession,
    NativeCodec,
    Reply,
    derive_key,
    key_bits,
    link_key,
    new_salt,
    split_salt,
    strong_key,
)
from freelook.link._native import FLAG_AUTH
from freelook.maps import load_world
from freelook.operator import OperatorStation
from freelook.robot import ServerOptions
from keys_for_tests import write_keys_file
from loopback import running, serving
from waiting import wait_until_async

PASSPHRASE = "correct horse battery staple"
SALT_A = "00112233445566778899aabbccddeeff"
SALT_B = "ffeeddccbbaa99887766554433221100"


def ring(salt: str | None, passphrase: str = PASSPHRASE) -> KeyRing:
    data: dict[str, object] = {"stations": {1: {"key": passphrase}}}
    if salt is not None:
        data["salt"] = salt
    return KeyRing.from_mapping(data, "keys.toml", allow_weak=True)


def key_of(keys: KeyRing, station: int = 1) -> bytes:
    found = keys.lookup(station)
    assert found is not None
    return found.key


def test_two_installs_with_the_same_passphrase_have_different_keys() -> None:
    a, b, unsalted = key_of(ring(SALT_A)), key_of(ring(SALT_B)), key_of(ring(None))
    assert len({a, b, unsalted}) == 3
    # the key a station derives from SALT:passphrase is its install's
    assert derive_key(f"{SALT_A}:{PASSPHRASE}") == a
    assert derive_key(f"{SALT_B}:{PASSPHRASE}") == b
    # a salt before the passphrase wins over the file's
    assert key_of(ring(SALT_B, f"{SALT_A}:{PASSPHRASE}")) == a


def test_hex_keys_and_unsalted_passphrases_keep_their_keys() -> None:
    hex_key = "ab" * 32
    assert derive_key(hex_key) == bytes.fromhex(hex_key)
    assert key_of(ring(SALT_A, hex_key)) == bytes.fromhex(hex_key)  # no salt for a hex key
    legacy = hashlib.scrypt(
        b"an old passphrase", salt=b"freelook-link-key", n=1 << 14, r=8, p=1, dklen=32
    )
    assert derive_key("an old passphrase") == legacy


def test_a_captured_session_open_does_not_verify_under_the_shared_salt() -> None:
    """What a dictionary computed once for every install would try: the passphrase under the
    one shared salt. The right passphrase under it fails; only the install's salt verifies."""
    station_key = derive_key(f"{SALT_A}:{PASSPHRASE}")
    operator = LinkSession(
        NativeCodec(station_key, sender=1), spacing=0.05, role="operator", nonce=b"op"
    )
    (captured,) = operator.poll(0.0)
    codec = NativeCodec(station_key, sender=100)
    header = codec.parse(captured)
    assert header.flags & FLAG_AUTH
    with pytest.raises(AuthenticationError):
        codec.verify(captured, header, derive_key(PASSPHRASE))  # the precomputed table's
    with pytest.raises(AuthenticationError):
        codec.verify(captured, header, derive_key(f"{SALT_B}:{PASSPHRASE}"))  # another install
    codec.verify(captured, header, derive_key(f"{SALT_A}:{PASSPHRASE}"))
    robot = LinkSession(
        NativeCodec(station_key, sender=100), spacing=0.05, role="robot", keys=ring(SALT_A)
    )
    (reply,) = robot.receive(captured, 0.001)
    assert isinstance(reply, Reply)  # the install's robot answers it


@pytest.mark.parametrize(
    "salt",
    ["0011", SALT_A + "00", "g" * 32, "0" * 31 + " ", "٠" * 32, ""],
    ids=["short", "long", "not hex", "space", "arabic digits", "empty"],
)
def test_a_keys_file_salt_that_is_not_32_hex_digits_is_refused(salt: str) -> None:
    with pytest.raises(ConfigError, match="invalid keys file") as caught:
        ring(salt)
    assert any("salt" in line for line in caught.value.problems)


@given(salt=st.binary(min_size=16, max_size=16), passphrase=st.text(min_size=1, max_size=40))
@settings(max_examples=200)
def test_salt_and_passphrase_split_as_written(salt: bytes, passphrase: str) -> None:
    text = passphrase.strip()
    assert split_salt(f"{salt.hex()}:{passphrase}") == (salt, text)
    # anything without 32 hex digits and a colon in front is a key of its own
    if not re.match(r"[0-9A-Fa-f]{32}:", passphrase.strip()):
        assert split_salt(passphrase) == (None, text)


@given(secret=st.text(max_size=80))
@settings(max_examples=25, deadline=None)  # scrypt: tens of ms a key
def test_any_key_text_derives_a_key_or_is_refused_in_words(secret: str) -> None:
    if not split_salt(secret)[1]:
        with pytest.raises(ConfigError, match="link key is empty"):
            derive_key(secret)
    else:
        assert len(derive_key(secret)) == 32


def test_the_strength_of_a_salted_passphrase_is_the_passphrase_s() -> None:
    assert key_bits(f"{SALT_A}:password") == key_bits("password")
    with pytest.raises(ConfigError, match="bits of entropy"):
        strong_key(f"{SALT_A}:password")


def test_an_unsalted_passphrase_is_said_in_the_log(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="freelook.link")
    strong_key(PASSPHRASE, allow_weak=True, what="--key")
    strong_key(f"{SALT_A}:{PASSPHRASE}", allow_weak=True)
    strong_key("0123456789abcdef" * 4, allow_weak=True)
    (line,) = [r.getMessage() for r in caplog.records]
    assert line.startswith("--key is a passphrase without a salt")


def test_keys_new_writes_a_salt_and_keys_salt_prints_one(tmp_path: Path) -> None:
    path = tmp_path / "stations.toml"
    assert CliRunner().invoke(app, ["keys", "new", str(path)]).exit_code == 0
    (salt,) = re.findall(r'^salt = "([0-9a-f]{32})"$', path.read_text(), re.MULTILINE)
    text = path.read_text().replace('key = "', 'key = "a passphrase added later" # "', 1)
    write_keys_file(path, text)
    keys = KeyRing.load(path, allow_weak=True)
    assert key_of(keys) == derive_key(f"{salt}:a passphrase added later")
    printed = CliRunner().invoke(app, ["keys", "salt"])
    assert printed.exit_code == 0
    assert re.fullmatch(r"[0-9a-f]{32}\n", printed.output)
    assert new_salt() != new_salt()


def test_a_station_with_its_install_s_salted_passphrase_drives_over_udp(tmp_path: Path) -> None:
    write_keys_file(
        tmp_path / "keys.toml", f'salt = "{SALT_A}"\n\n[stations.1]\nkey = "{PASSPHRASE}"\n'
    )
    keys = KeyRing.load(tmp_path / "keys.toml", allow_weak=True)
    config, world = load_robot("pioneer3dx"), load_world("square")

    async def scenario() -> tuple[bool, bool]:
        server, _ = simulated_server(
            config,
            world,
            ServerOptions(listen="udp://127.0.0.1:0", keys=keys, camera=False),
            robot_map=None,
        )
        async with serving(server):
            address = server.local_address
            assert address is not None
            right = link_key(f"{SALT_A}:{PASSPHRASE}", allow_weak=True)
            unsalted = link_key(PASSPHRASE, allow_weak=True)  # what the shared salt gives
            assert right is not None
            assert unsalted is not None
            salted = OperatorStation(config, None, address, key=right, station=1)
            shared = OperatorStation(config, None, address, key=unsalted, station=1)
            async with running(salted, shared):
                await wait_until_async(lambda: salted.telemetry, 15, "the station's telemetry")
                await wait_until_async(
                    lambda: shared.session.unanswered_requests >= 3,
                    15,
                    "three unanswered requests of the unsalted key",
                )
                return bool(salted.telemetry), bool(shared.telemetry)

    assert asyncio.run(scenario()) == (True, False)

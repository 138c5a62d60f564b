"""Discovery, management, access-control and manipulator messages of the JUDP codec: byte
layouts written out by hand, hypothesis round trips, and hostile bodies refused (never a crash)."""

from __future__ import annotations

import contextlib
import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.judp import (
    JOINT_EFFORT,
    REVOLUTE_POSITION,
    ComponentServices,
    JausId,
    JudpError,
    ManagementStatus,
    QueryControl,
    QueryJointPositions,
    QueryServices,
    QueryStatus,
    QueryTimeout,
    ReportControl,
    ReportJointPositions,
    ReportServices,
    ReportStatus,
    ReportTimeout,
    Resume,
    ServiceRecord,
    SetJointEffort,
    Standby,
    decode_message,
    encode_message,
)


def _round_trip(message: object) -> object:
    payload = encode_message(message)  # type: ignore[arg-type]
    code = struct.unpack_from("<H", payload)[0]
    return decode_message(code, payload[2:])


def test_codes_and_layouts_written_out_by_hand() -> None:
    assert encode_message(Standby()) == b"\x03\x00"
    assert encode_message(Resume()) == b"\x04\x00"
    assert encode_message(QueryStatus()) == b"\x02\x20"
    assert encode_message(QueryTimeout()) == b"\x03\x20"
    assert encode_message(QueryControl()) == b"\x0d\x20"
    assert encode_message(QueryJointPositions()) == b"\x02\x26"
    # status READY (1) and the reserved u32
    assert encode_message(ReportStatus(ManagementStatus.READY)) == b"\x02\x40\x01\0\0\0\0"
    assert encode_message(ReportTimeout(3)) == b"\x03\x40\x03"
    # controller 300.2.5 (subsystem u16, node u8, component u8), authority 7
    assert encode_message(ReportControl(JausId(300, 2, 5), 7)) == b"\x0d\x40\x2c\x01\x02\x05\x07"
    # one node (1) with components 1 and 2
    assert encode_message(QueryServices(((1, (1, 2)),))) == b"\x03\x2b\x01\x01\x02\x01\x02"
    report = ReportServices(
        (ComponentServices(1, 4, 0, (ServiceRecord("urn:jaus:jss:core:AccessControl", 1, 1),)),)
    )
    uri = b"urn:jaus:jss:core:AccessControl"
    assert encode_message(report) == (
        b"\x03\x4b\x01\x01\x01\x04\x00\x01" + bytes([len(uri)]) + uri + b"\x01\x01"
    )
    # two efforts: −100 % is 0, +100 % is 0xFFFF
    assert encode_message(SetJointEffort((-100.0, 100.0))) == b"\x01\x06\x02\x00\x00\xff\xff"
    # a revolute joint at 0 rad: tag 0, the middle of −8π … 8π
    middle = REVOLUTE_POSITION.encode(0.0)
    assert encode_message(ReportJointPositions(((True, 0.0),))) == (
        b"\x02\x46\x01\x00" + struct.pack("<I", middle)
    )


_ids = st.builds(
    JausId,
    st.integers(0, 0xFFFF),
    st.integers(0, 0xFF),
    st.integers(0, 0xFF),
)
_uris = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40).filter(
    lambda s: len(s.encode()) <= 255
)
_services = st.builds(ServiceRecord, _uris, st.integers(0, 255), st.integers(0, 255))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 255),
            st.integers(0, 255),
            st.integers(0, 255),
            st.lists(_services, max_size=5),
        ),
        max_size=6,
    )
)
def test_report_services_round_trips(
    entries: list[tuple[int, int, int, list[ServiceRecord]]],
) -> None:
    components = tuple(ComponentServices(n, c, i, tuple(s)) for n, c, i, s in entries)
    decoded = _round_trip(ReportServices(components))
    assert isinstance(decoded, ReportServices)
    # the wire groups components by node (first appearance order); the set is kept exactly
    assert sorted(decoded.components, key=repr) == sorted(components, key=repr)


@settings(max_examples=200, deadline=None)
@given(_ids, st.integers(0, 255), st.integers(0, 255), st.sampled_from(list(ManagementStatus)))
def test_control_and_status_round_trip(
    who: JausId, authority: int, timeout: int, status: ManagementStatus
) -> None:
    assert _round_trip(ReportControl(who, authority)) == ReportControl(who, authority)
    assert _round_trip(ReportTimeout(timeout)) == ReportTimeout(timeout)
    assert _round_trip(ReportStatus(status)) == ReportStatus(status)
    nodes = ((who.node, (who.component, 255)),)
    assert _round_trip(QueryServices(nodes)) == QueryServices(nodes)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(-100.0, 100.0), max_size=8))
def test_joint_efforts_round_trip_within_half_a_step(efforts: list[float]) -> None:
    decoded = _round_trip(SetJointEffort(tuple(efforts)))
    assert isinstance(decoded, SetJointEffort)
    step = 200.0 / JOINT_EFFORT.steps
    assert all(abs(a - b) <= step / 2 + 1e-9 for a, b in zip(decoded.efforts, efforts, strict=True))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just(True), st.floats(-8 * math.pi, 8 * math.pi)),
            st.tuples(st.just(False), st.floats(-10.0, 10.0)),
        ),
        max_size=8,
    )
)
def test_joint_positions_round_trip_within_half_a_step(
    positions: list[tuple[bool, float]],
) -> None:
    decoded = _round_trip(ReportJointPositions(tuple(positions)))
    assert isinstance(decoded, ReportJointPositions)
    for (kind, got), (want_kind, want) in zip(decoded.positions, positions, strict=True):
        assert kind == want_kind
        span = 16 * math.pi if kind else 20.0
        assert abs(got - want) <= span / 0xFFFFFFFF / 2 + 1e-9


def test_bad_bodies_are_refused() -> None:
    with pytest.raises(JudpError, match="ManagementStatus 9"):
        decode_message(0x4002, b"\x09\0\0\0\0")  # status 9 is undefined
    with pytest.raises(JudpError, match="ends inside"):
        decode_message(0x4002, b"\x01\0\0")  # the reserved u32 cut short
    with pytest.raises(JudpError, match="after the last"):
        decode_message(0x2002, b"\x00")  # QueryStatus has no body
    with pytest.raises(JudpError, match="ends inside"):
        decode_message(0x4B03, b"\x01\x01\x01\x04\x00\x01\x10urn")  # a URI cut short
    with pytest.raises(JudpError, match="UTF-8"):
        decode_message(0x4B03, b"\x01\x01\x01\x04\x00\x01\x02\xff\xfe\x01\x00")
    with pytest.raises(JudpError, match="joint position type"):
        decode_message(0x4602, b"\x01\x07\0\0\0\0")
    with pytest.raises(JudpError, match="at most 255"):
        encode_message(SetJointEffort((0.0,) * 256))
    with pytest.raises(JudpError, match="non-finite"):
        encode_message(SetJointEffort((math.nan,)))


@settings(max_examples=500, deadline=None)
@given(
    st.sampled_from(
        [
            0x0003,
            0x0004,
            0x2002,
            0x4002,
            0x2003,
            0x4003,
            0x200D,
            0x400D,
            0x2B03,
            0x4B03,
            0x0601,
            0x2602,
            0x4602,
        ]
    ),
    st.binary(max_size=80),
)
def test_fuzzed_bodies_decode_or_are_refused(code: int, body: bytes) -> None:
    with contextlib.suppress(JudpError):
        message = decode_message(code, body)
        # what decodes re-encodes to the same bytes (no field is read loosely)
        assert encode_message(message)[2:] == body or code == 0x4B03

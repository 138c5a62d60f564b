"""The native profile's telemetry payload: the robot's state, its laser and sonar ranges (u16
millimetres), and the optional autonomy and arm blocks, every count checked before it is read.

    fixed part (TELEMETRY) | laser u16 mm × n | sonar count u8 | sonar u16 mm × n
    [autonomy: phase u8, flags u8, recoveries u16, progress f32] (flag bit 4 of the fixed part)
    [speed cap: cap f32 m/s, round trip f32 s] (flag bit 5)
    [arm: joints u8, positions and velocities f32 × 2n, gripper f32, flags u8, phase u8,
     slow pairs u16 + u16 × n, stop pairs u16 + u16 × n,
     [phases gone through: count u8 (1…8), phase u8 × n]] (each when bytes are left)
"""

from __future__ import annotations

import math
import struct

import numpy as np

from freelook.link._errors import MalformedError
from freelook.link._messages import ArmTelemetry, AutonomyTelemetry, Mode, SafetyFlags, Telemetry
from freelook.link._stats_report import LinkStatsReport
from freelook.link._values import ARM_JOINTS, ARM_PAIRS, ARM_PHASES
from freelook.types import TaskPhase

__all__ = ["decode_telemetry", "encode_telemetry"]

_TELEMETRY = struct.Struct("<d3f3f2f2f2ffbBBBH6I4f3fH")
_B = struct.Struct("<B")
_H = struct.Struct("<H")
_ARM_HEAD = struct.Struct("<fBB")  # gripper opening, flags (1 holding), phase
_AUTONOMY = struct.Struct("<BBHf")  # task phase, flags (1 paused), recoveries, progress
_SPEED_CAP = struct.Struct("<ff")  # the delay rule's cap (m/s) and its round trip (s)
_LASER_UNIT = 1000.0  # ranges as u16 millimetres (1 mm resolution, up to 65.5 m)


def _u16_mm(values: tuple[float, ...]) -> bytes:
    scaled = np.asarray(values, dtype=np.float64) * _LASER_UNIT
    scaled[scaled != scaled] = 0.0  # NaN → 0
    np.rint(scaled, out=scaled)
    np.clip(scaled, 0.0, 65535.0, out=scaled)
    return scaled.astype("<u2").tobytes()


def _from_u16_mm(payload: bytes, offset: int, count: int) -> tuple[float, ...]:
    values = np.frombuffer(payload, dtype="<u2", count=count, offset=offset) / _LASER_UNIT
    return tuple(values.tolist())


def encode_telemetry(m: Telemetry) -> bytes:
    link = m.link
    flags = (
        (1 if m.estop else 0)
        | (2 if m.bumper_front else 0)
        | (4 if m.bumper_rear else 0)
        | (8 if m.localizing else 0)
        | (16 if m.autonomy is not None else 0)
        | (32 if m.speed_cap is not None else 0)
    )
    head = _TELEMETRY.pack(
        m.stamp,
        *m.odom,
        *m.pose,
        m.v,
        m.omega,
        m.cmd_v,
        m.cmd_omega,
        m.pan,
        m.tilt,
        m.safety_scale,
        max(-128, min(127, m.safety_zone)),
        int(m.safety_flags) & 0xFF,
        int(m.mode),
        flags,
        m.controller & 0xFFFF,
        *(
            min(x, 0xFFFFFFFF)
            for x in (
                link.packets_received,
                link.packets_lost,
                link.duplicates,
                link.reordered,
                link.crc_failures,
                link.auth_failures,
            )
        ),
        link.rx_rate_hz,
        link.tx_rate_hz,
        link.drop_percent,
        link.latency_s,
        m.laser_angle_min,
        m.laser_angle_increment,
        m.laser_range_max,
        len(m.laser),
    )
    body = head + _u16_mm(m.laser) + _B.pack(len(m.sonar)) + _u16_mm(m.sonar)
    if m.autonomy is not None:
        a = m.autonomy
        progress = a.progress if math.isfinite(a.progress) else 0.0
        body += _AUTONOMY.pack(
            int(a.phase), 1 if a.paused else 0, min(a.recoveries, 0xFFFF), progress
        )
    if m.speed_cap is not None:
        body += _SPEED_CAP.pack(*m.speed_cap)
    return body if m.arm is None else body + _enc_arm_state(m.arm)


def _enc_arm_state(a: ArmTelemetry) -> bytes:
    n = len(a.positions)
    if n != len(a.velocities) or n > ARM_JOINTS:
        raise MalformedError(f"arm state of {n} positions and {len(a.velocities)} velocities")
    return b"".join(
        (
            _B.pack(n),
            struct.pack(f"<{2 * n}f", *a.positions, *a.velocities),
            _ARM_HEAD.pack(a.gripper_opening, 1 if a.gripper_holding else 0, a.phase),
            _H.pack(len(a.slow_pairs)),
            struct.pack(f"<{len(a.slow_pairs)}H", *a.slow_pairs),
            _H.pack(len(a.stop_pairs)),
            struct.pack(f"<{len(a.stop_pairs)}H", *a.stop_pairs),
            # the phases gone through, only when said: a report without them is as before
            bytes((len(a.phases), *a.phases)) if a.phases else b"",
        )
    )


def _dec_arm_state(p: bytes, offset: int) -> ArmTelemetry:
    """The arm block at the end of a telemetry payload; it must fill the payload exactly and
    every count is checked before anything is read with it."""
    n = p[offset]
    offset += 1
    if n > ARM_JOINTS:
        raise MalformedError(f"telemetry declares {n} arm joints, at most {ARM_JOINTS}")
    if len(p) < offset + 8 * n + _ARM_HEAD.size + 2:
        raise MalformedError(f"telemetry declares {n} arm joints beyond its payload")
    joints = struct.unpack_from(f"<{2 * n}f", p, offset)
    offset += 8 * n
    opening, flags, phase = _ARM_HEAD.unpack_from(p, offset)
    offset += _ARM_HEAD.size
    if flags > 1:
        raise MalformedError(f"arm flags {flags:#04x}")
    pairs: list[tuple[int, ...]] = []
    for _ in range(2):
        if len(p) < offset + 2:
            raise MalformedError("telemetry's arm pairs run beyond its payload")
        (count,) = _H.unpack_from(p, offset)
        offset += 2
        if count > ARM_PAIRS or len(p) < offset + 2 * count:
            raise MalformedError(f"telemetry declares {count} arm pairs beyond its payload")
        pairs.append(struct.unpack_from(f"<{count}H", p, offset))
        offset += 2 * count
    phases: tuple[int, ...] = ()
    if offset < len(p):
        count = p[offset]
        if not 0 < count <= ARM_PHASES or len(p) < offset + 1 + count:
            raise MalformedError(f"telemetry declares {count} arm phases, 1 to {ARM_PHASES}")
        phases = tuple(p[offset + 1 : offset + 1 + count])
        offset += 1 + count
    if offset != len(p):
        raise MalformedError(f"{len(p) - offset} bytes after the telemetry's arm state")
    return ArmTelemetry(
        joints[:n], joints[n:], opening, bool(flags & 1), phase, pairs[0], pairs[1], phases
    )


def decode_telemetry(p: bytes) -> Telemetry:
    if len(p) < _TELEMETRY.size + 1:
        raise MalformedError(f"telemetry payload of {len(p)} bytes is too short")
    v = _TELEMETRY.unpack_from(p)
    n_laser = v[-1]
    offset = _TELEMETRY.size
    if len(p) < offset + 2 * n_laser + 1:
        raise MalformedError(f"telemetry declares {n_laser} laser ranges beyond its payload")
    laser = _from_u16_mm(p, offset, n_laser)
    offset += 2 * n_laser
    n_sonar = p[offset]
    offset += 1
    if len(p) < offset + 2 * n_sonar:
        raise MalformedError(f"telemetry declares {n_sonar} sonar ranges, payload disagrees")
    sonar = _from_u16_mm(p, offset, n_sonar)
    offset += 2 * n_sonar
    autonomy = None
    if v[17] & 16:
        if len(p) < offset + _AUTONOMY.size:
            raise MalformedError("telemetry's autonomy block runs beyond its payload")
        phase, task_flags, recoveries, progress = _AUTONOMY.unpack_from(p, offset)
        offset += _AUTONOMY.size
        if task_flags > 1 or not 0.0 <= progress <= 1.0:
            raise MalformedError(f"autonomy flags {task_flags:#04x}, progress {progress}")
        try:
            autonomy = AutonomyTelemetry(TaskPhase(phase), progress, bool(task_flags), recoveries)
        except ValueError as err:
            raise MalformedError(f"telemetry: {err}") from None
    speed_cap = None
    if v[17] & 32:
        if len(p) < offset + _SPEED_CAP.size:
            raise MalformedError("telemetry's speed cap runs beyond its payload")
        speed_cap = _SPEED_CAP.unpack_from(p, offset)
        offset += _SPEED_CAP.size
        if not all(math.isfinite(x) and x >= 0.0 for x in speed_cap):
            raise MalformedError(f"telemetry's speed cap {speed_cap}")
    arm = _dec_arm_state(p, offset) if len(p) > offset else None
    try:
        mode = Mode(v[16])
        safety = SafetyFlags(v[15])
    except ValueError as err:
        raise MalformedError(f"telemetry: {err}") from None
    flags = v[17]
    link = LinkStatsReport(*v[19:25], *v[25:29])
    return Telemetry(
        stamp=v[0],
        odom=(v[1], v[2], v[3]),
        pose=(v[4], v[5], v[6]),
        v=v[7],
        omega=v[8],
        cmd_v=v[9],
        cmd_omega=v[10],
        pan=v[11],
        tilt=v[12],
        laser_angle_min=v[29],
        laser_angle_increment=v[30],
        laser_range_max=v[31],
        laser=laser,
        sonar=sonar,
        bumper_front=bool(flags & 2),
        bumper_rear=bool(flags & 4),
        safety_zone=v[14],
        safety_scale=v[13],
        safety_flags=safety,
        mode=mode,
        estop=bool(flags & 1),
        localizing=bool(flags & 8),
        controller=v[18],
        link=link,
        arm=arm,
        autonomy=autonomy,
        speed_cap=speed_cap,
    )

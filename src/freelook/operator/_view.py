"""What the cockpit page is shown: the hello (robot, map, settings) and the state messages."""

from __future__ import annotations

import base64
import io
import math
from typing import Any

import numpy as np

from freelook.config import RobotConfig
from freelook.link import DirectZenohEndpoint, LinkSession, LinkStatsReport, TransportUrl
from freelook.maps import World
from freelook.operator._core import StationCore
from freelook.operator._prediction import camera_footprint

__all__ = ["CONNECTED_WITHIN", "hello_message", "state_message"]

CONNECTED_WITHIN = 1.0  # s: the link counts as up while the robot was heard this recently


def map_png(world: World) -> str:
    """The map as a base64 PNG (obstacles dark, free space faint), north up."""
    from PIL import Image

    grid = world.obstacles()
    image = np.where(np.flipud(grid), 30, 235).astype(np.uint8)
    rgba = np.dstack([image, image, image, np.where(np.flipud(grid), 255, 60).astype(np.uint8)])
    buffer = io.BytesIO()
    Image.fromarray(rgba, "RGBA").save(buffer, format="PNG", optimize=True)
    return base64.b64encode(buffer.getvalue()).decode()


def hello_message(
    config: RobotConfig,
    world: World | None,
    png: str | None,
    core: StationCore,
    wire: str,
    now: float = 0.0,
) -> dict[str, Any]:
    """The first message a browser gets: robot description, map, settings, and the modes
    offered (the page starts in one of them)."""
    fp = config.footprint
    pt = config.pan_tilt
    message: dict[str, Any] = {
        "type": "hello",
        "robot": {
            "name": config.name,
            "footprint": {
                "length": fp.length,
                "width": fp.width,
                "center_forward": fp.center_forward,
            },
            "zones": [z.boundary for z in config.safety.zones],
            "camera_mount": [pt.mount_forward, pt.mount_left] if pt else [0.0, 0.0],
            "has_pan": bool(pt and pt.has_pan),
            # the driving camera, for the page to draw the predicted path on its picture
            "camera": {
                "width": config.camera.width,
                "height": config.camera.height,
                "fov_deg": config.camera.fov_deg,
                "mount_height": pt.mount_height if pt else 0.0,
            },
        },
        # the thesis profile carries no arm commands: no Arm mode on its page
        "arm": core.arm.describe() if core.arm is not None and core.native else None,
        # the cameras beyond the driving one (stream 0); the thesis profile carries no video
        "cameras": [
            {
                "stream": c.stream,
                "name": c.name,
                "layout": 1 if c.stereo else 0,
                "width": c.frame_width,
                "height": c.height,
                "fov_deg": c.fov_deg,
                "kind": c.kind,
                "stereo_baseline": c.stereo_baseline,
                "mount": c.mount,  # "pan_tilt" or the arm link it rides on
            }
            for c in (config.cameras if core.native else ())
        ],
        "robot_tx_ms": core.robot_tx_spacing * 1000,
        "operator_tx_ms": core.session.spacing * 1000,
        "wire": wire,
        "modes": _modes(core, now),
        # click-to-go: offered above this round trip (s), reached within this (m)
        "goal": {
            "offer_round_trip": config.goal.offer_round_trip,
            "tolerance": config.goal.tolerance,
        },
    }
    if not core.native:  # said in place of the camera
        message["video_note"] = "no video: the thesis profile carries none"
    if world is not None and png is not None:
        rows, cols = world.shape
        message["map"] = {
            "png": png,
            "origin": list(world.origin),
            "resolution": world.resolution,
            "width": cols,
            "height": rows,
            "places": [{"name": p.name, "kind": p.kind, "x": p.x, "y": p.y} for p in world.places],
            "keep_out": [
                {"name": k.name, "kind": k.kind, "vertices": [list(v) for v in k.vertices]}
                for k in world.keep_out
            ],
        }
    return message


def _modes(core: StationCore, now: float) -> dict[str, Any]:
    """What the page may offer: the modes it may not, each with why; whether robot-side
    tracking is carried; and the newest refusal of what the operator asked for."""
    return {
        "unoffered": core.unoffered(now),
        "robot_side_tracking": core.native,
        "refusal": core.refusal_shown(now),
    }


def _stats(report: LinkStatsReport) -> dict[str, float]:
    return {
        "rx_rate_hz": report.rx_rate_hz,
        "tx_rate_hz": report.tx_rate_hz,
        "drop_percent": report.drop_percent,
        "received": report.packets_received,
        "lost": report.packets_lost,
    }


def link_path(url: TransportUrl, endpoint: object) -> dict[str, str] | None:
    """Which path carries a link on a relay URL (``zenoh+tls://``): "direct" once a hole
    punch found the round trip (``?direct``), else "relay"; the relays by name. None off a
    relay."""
    if not url.tls:
        return None
    names = ", ".join(f"{h}:{p}" for h, p in ((url.host, url.port), *url.more_relays))
    via = endpoint.path_name() if isinstance(endpoint, DirectZenohEndpoint) else "relay"
    return {"via": via, "relay": names}


def _clock(session: LinkSession, now: float) -> dict[str, Any]:
    clock = session.clock
    return {
        "offset": clock.offset,
        "error": clock.error_bound,
        "rtt": clock.round_trip,
        "rtt_min": clock.min_round_trip,
        "up": clock.delay_up,
        "down": clock.delay_down,
    }


def state_message(
    config: RobotConfig, core: StationCore, now: float, path: dict[str, str] | None = None
) -> dict[str, Any]:
    """The periodic state: the robot's own report (mode, pose, safety, sensors) and the link;
    ``path``: which path carries a link through a relay (:func:`link_path`)."""
    t = core.telemetry
    connected = core.last_rx is not None and now - core.last_rx < CONNECTED_WITHIN
    session = core.session
    state: dict[str, Any] = {
        "type": "state",
        # one source of truth: the mode the robot reports (the thesis profile reports none)
        "mode": t.mode.name.lower() if t is not None else None,
        "estop": core.estop,
        # how old the robot's newest report is as this leaves (s); the page adds its own delay
        "age": None if core.report_rx is None else max(0.0, now - core.report_rx),
        # what the robot sends, counted whole: reports per second, driving-camera frames per
        # second (the link's own packet rate counts every fragment of every frame)
        "rates": {
            "telemetry_hz": core.telemetry_rate.rate(now),
            "video_fps": core.video_rate.rate(now),
        },
        # the robot's clock and the link's delays, from the session's own exchanges (NTP
        # style): the robot's clock minus the station's wire clock, round trips and one-way
        # delays (s; None before the first exchange), for the page to age frames by
        "clock": _clock(session, now),
        "link": {
            "connected": connected,
            # the session with the robot: open, opening, or unanswered (a wrong key or station
            # id, or no robot there); None without sessions (the thesis profile)
            "session": session.session_status(now),
            "down": _stats(session.stats.report(now)),
            "up": _stats(t.link) if t is not None else None,
            # through a relay: "direct" after a hole punch or "relay", and the relays given
            "path": path,
        },
        # the session re-opened (the robot restarted, or the link came back): the controls
        # act again only once let go
        "needs_release": core.needs_release,
        "in_control": core.in_control,
        "controller": f"station {t.controller}"
        if t is not None and t.controller
        else ("this station" if core.in_control else "none"),
        "robot_tx": {"enabled": core.robot_tx_enabled, "spacing_ms": core.robot_tx_spacing * 1000},
        "operator_tx": {"enabled": session.transmitting, "spacing_ms": session.spacing * 1000},
        "reference": core.reference_path,
        "modes": _modes(core, now),
        # click-to-go: the newest goal sent, and what became of it (None: none yet)
        "goal": core.goal.view(now),
        # the thesis profile has no stations, so no control to hold: no one is refused it
        "arbitration": core.native,
    }
    if t is not None:
        state.update(_telemetry_fields(config, core))
        state["prediction"] = _prediction(config, core, now)
    elif core.position is not None:
        p = core.position
        state.update({"pose": {"x": p.x, "y": p.y, "theta": p.theta}, "v": p.v, "omega": p.omega})
    return state


def _prediction(config: RobotConfig, core: StationCore, now: float) -> dict[str, Any] | None:
    """Where the robot is now and over the next seconds (``_prediction.py``), for the page's
    ghost and committed path; times on the robot's clock, as the report's stamp (None while
    the robot's clock is unknown)."""
    offset = core.robot_offset
    seen = core.predictor.predict(now)
    if seen is None or offset is None or core.telemetry is None:
        return None
    here, then = seen.now, seen.arrival
    return {
        "t": here.t + offset,  # the moment the ghost stands for (robot clock)
        "lead": here.t - seen.origin,  # s ahead of the report it was worked out from
        "delay": seen.delay,
        "spread": seen.spread,
        "pose": {"x": here.x, "y": here.y, "theta": here.theta},
        "pan": here.pan,
        "footprint": [list(p) for p in camera_footprint(config, here, core.telemetry.tilt)],
        # where it is when a command sent now lands
        "arrival": {"t": then.t + offset, "x": then.x, "y": then.y, "theta": then.theta},
        "arrival_pan": then.pan,
        # from now over the next seconds, the newest command held; the first points committed
        "path": [[round(p.x, 4), round(p.y, 4)] for p in seen.path],
        "radii": [round(r, 4) for r in seen.radii],
        "committed": seen.committed,
    }


def _telemetry_fields(config: RobotConfig, core: StationCore) -> dict[str, Any]:
    t = core.telemetry
    assert t is not None
    fields: dict[str, Any] = {
        "t": t.stamp,
        "pose": {"x": t.pose[0], "y": t.pose[1], "theta": t.pose[2]},
        "odom": {"x": t.odom[0], "y": t.odom[1], "theta": t.odom[2]},
        "v": t.v,
        "omega": t.omega,
        "cmd": {"v": t.cmd_v, "omega": t.cmd_omega},
        "pan": t.pan,
        "tilt": t.tilt,
        "estop": t.estop or core.estop,
        "localizing": t.localizing,
        "safety": {
            "zone": t.safety_zone if t.safety_zone >= 0 else None,
            "scale": t.safety_scale,
            "reasons": [
                f.name.lower() for f in type(t.safety_flags) if f and f in t.safety_flags and f.name
            ],
            # the robot's delay rule: its cap (m/s) and the round trip it measured (s)
            "speed_cap": None
            if t.speed_cap is None
            else {"cap": t.speed_cap[0], "rtt": t.speed_cap[1]},
        },
    }
    if t.arm is not None and core.arm is not None:
        fields["arm"] = core.arm.view(t.arm)
    if t.autonomy is not None:
        task = t.autonomy
        fields["autonomy"] = {
            "phase": task.phase.name.lower(),
            "progress": round(task.progress, 3),
            "paused": task.paused,
            "recoveries": task.recoveries,
        }
    if t.laser:
        mount = config.laser
        fields["laser"] = {
            "angle_min": t.laser_angle_min,
            "angle_increment": t.laser_angle_increment,
            "range_max": t.laser_range_max,
            "ranges": [round(r, 3) for r in t.laser],
            "mount": [mount.mount_forward, mount.mount_left] if mount else [0.0, 0.0],
        }
    if t.sonar and config.sonar is not None:
        sonar = config.sonar
        bearings = [math.radians(b) for b in sonar.front_deg + sonar.rear_deg]
        fields["sonar"] = {
            "ranges": [round(r, 3) for r in t.sonar],
            "bearings": bearings,
            "origins": [
                [sonar.ring_radius * math.cos(b), sonar.ring_radius * math.sin(b)] for b in bearings
            ],
            "cone": math.radians(sonar.cone_deg),
            "range_max": sonar.range_max,
        }
    return fields

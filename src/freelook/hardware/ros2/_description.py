"""The description a watch of a ROS 2 robot writes (sans-I/O): TOML with a comment on each
value it assumed, checked by loading it as any description is loaded.

What the topics cannot say (the drive's geometry and speeds, the footprint, the sensors'
poses, the safety zones) comes from the generic differential base's (``ros2-diff-base``) and
is marked ``assumed``; what they say is written as seen, bounded to what a description takes.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass

from freelook.config import RobotConfig, robot_from_mapping
from freelook.hardware.ros2._describe import (
    BLIND_SECTOR_DEG,
    TopicChoice,
    TopicSeen,
    Watch,
    clean,
    is_frame,
    relative_name,
)
from freelook.hardware.ros2._errors import Ros2Error
from freelook.hardware.ros2._toml_writer import _toml, _Writer

__all__ = ["Description", "describe"]

#: what the description takes (its fields' bounds)
MAX_BEAMS = 8192
LASER_RATE = 200.0
GYRO_RATE = 2000.0
CAMERA_RATE = 120.0
CAMERA_SIDE = 4096
RANGE_MAX = 300.0
RANGE_MIN = 10.0
#: the program's defaults the stamps are held to ([ros2] stamp_age, stamp_lead)
STAMP_AGE = 0.5
STAMP_LEAD = 0.1
#: the assumed base (ros2-diff-base's): m/s per wheel, deg/s
WHEEL_SPEED = 1.0
TURN_RATE_DEG = 180.0


@dataclass(frozen=True, slots=True)
class Description:
    """A written description: its TOML, the description it loads as, and one line for each
    thing found and each assumed."""

    text: str
    config: RobotConfig
    namespace: str  # the robot's (--hardware ros2://NAMESPACE)
    found: tuple[str, ...]
    assumed: tuple[str, ...]


def _hz(rate: float | None) -> str:
    return f"{rate:.3g} Hz" if rate is not None else "too few messages for a rate"


def _bounded_rate(
    one: TopicSeen, limit: float, default: float, what: str, notes: list[str]
) -> float:
    rate = one.rate
    if rate is None or not math.isfinite(rate) or rate < 0.1:
        notes.append(f"{what}: {_hz(None)} in the watch; assumed {default:g} Hz")
        return default
    if rate > limit:
        notes.append(f"{what}: {rate:.4g} Hz seen, beyond the {limit:g} Hz a description takes")
        return limit
    return round(rate, 1) or rate


def _stamps(name: str, one: TopicSeen, notes: list[str]) -> None:
    """Say when the program will refuse this topic's stamps (it holds them to its clock)."""
    if one.unstamped:
        notes.append(f"{name}: {one.unstamped} message(s) with no stamp: the program refuses them")
    lag = one.worst_lag
    if lag > STAMP_AGE:
        notes.append(
            f"{name}: stamped up to {lag:.2f} s behind this computer's clock: the program "
            f"refuses readings older than [ros2] stamp_age = {STAMP_AGE:g} s (synchronise the "
            "clocks; use_sim_time?)"
        )
    elif -lag > STAMP_LEAD:
        notes.append(
            f"{name}: stamped up to {-lag:.2f} s ahead of this computer's clock: the program "
            f"refuses readings ahead by more than stamp_lead = {STAMP_LEAD:g} s"
        )


def _name_of(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")[:64]
    return cleaned or "ros2-robot"


def describe(
    choice: TopicChoice,
    watch: Watch,
    *,
    namespace: str = "",
    name: str = "ros2-robot",
    seconds: float = 0.0,
    published: tuple[str, ...] = (),
) -> Description:
    """The description of a robot whose topics are ``choice`` after ``watch`` (``seconds``
    long); :class:`Ros2Error` when there is no odometry to drive by (``published``: the topics
    there were, for that message)."""
    namespace = choice.namespace or namespace.strip("/")
    if choice.odom is None:
        where = f" in namespace /{namespace}" if namespace else ""
        listing = ", ".join(clean(t) for t in published[:20]) or "none"
        raise Ros2Error(
            f"no nav_msgs/Odometry published{where} (ROS_DOMAIN_ID decides which robots are "
            f"seen); published topics: {listing}"
        )
    found: list[str] = []
    assumed: list[str] = []
    notes: list[str] = list(choice.notes)
    w = _Writer()

    def rel(topic: str) -> str:
        return relative_name(topic, namespace)

    where = f"namespace /{namespace}" if namespace else "no namespace"
    w.comment(
        f"A starting description of the ROS 2 robot seen in {where}, written by",
        f"`freelook ros2 describe` from {seconds:g} s of its topics. What came on them is",
        "written as seen; what they cannot say is marked 'assumed': set those to your",
        "robot's (the footprint and the safety zones above all) before driving near anything.",
    )
    w.key("name", _name_of(name))
    w.key("description", "A ROS 2 robot as its topics showed it (footprint and zones assumed)")

    odom = _drive(w, choice, watch, found, assumed, notes)
    pan, tilt, moving = _pan_tilt_and_camera(w, choice, watch, found, assumed, notes)
    scan_topic = _laser(w, choice, watch, found, assumed, notes, namespace)
    imu = _gyro(w, choice, watch, found, notes)
    _safety_and_limits(w, assumed)

    # -- ros2 -----------------------------------------------------------------------------
    w.section("ros2", f"seen: odometry at {_hz(odom.rate)}")
    _cmd_vel_stamped(w, choice, found, assumed, notes)
    base = watch.base_frame
    if base is not None and not is_frame(base):
        notes.append(f"odometry's child_frame_id {clean(base)!r} is no frame name: base_link")
    w.key("base_frame", base if base is not None and is_frame(base) else "base_link")
    w.key("scan_frame", _steady_frame(choice, watch), "the frame_id its scans carried")
    w.key("sensor_qos", "best_effort", "takes reliable publishers too")
    if choice.pan_tilt_command is not None and moving:
        if pan is not None:
            w.key("pan_joint", pan)
        if tilt is not None:
            w.key("tilt_joint", tilt)
        w.key("pan_tilt_command", "trajectory" if choice.pan_tilt_trajectory else "velocities")
    if choice.pose is not None:
        found.append(f"a pose on {choice.pose}: the robot's own localization (AMCL?)")
        w.comment(f'{choice.pose} is published: localization = "ros" takes the robot\'s own')
        w.lines.append('# localization = "ros"')
    _topics(w, choice, namespace, scan_topic, imu, moving)
    if choice.map is not None:
        found.append(f"a map on {choice.map} (nav_msgs/OccupancyGrid)")
        w.comment(f"the robot's own map, {choice.map}: uncomment to take it (or --map ros:TOPIC)")
        w.lines.append(f"# map = {_toml(rel(choice.map))}")
    if notes:
        w.lines += ["", "# What the watch noticed:"]
        w.comment(*(f"- {n}" for n in notes))
    text = "\n".join(w.lines) + "\n"
    config = robot_from_mapping(tomllib.loads(text), f"the description of {where}")
    return Description(text, config, namespace, tuple(found), tuple(assumed + notes))


def _cmd_vel_stamped(
    w: _Writer, choice: TopicChoice, found: list[str], assumed: list[str], notes: list[str]
) -> None:
    """``[ros2] cmd_vel_stamped``: as the velocity command's subscriber takes it."""
    cmd_vel = choice.cmd_vel
    if cmd_vel is None:
        notes.append("cmd_vel: no node subscribes a Twist or TwistStamped: assumed cmd_vel, Twist")
        assumed.append("commands on cmd_vel as geometry_msgs/Twist (no node took any)")
    else:
        kind = "TwistStamped" if choice.cmd_vel_stamped else "Twist"
        found.append(f"cmd_vel {cmd_vel} taken as {kind}")
    w.key(
        "cmd_vel_stamped",
        choice.cmd_vel_stamped and cmd_vel is not None,
        "seen: its subscriber's type" if cmd_vel is not None else "assumed",
    )


def _drive(
    w: _Writer,
    choice: TopicChoice,
    watch: Watch,
    found: list[str],
    assumed: list[str],
    notes: list[str],
) -> TopicSeen:
    """The ``[drive]`` (assumed but its speeds, bounded by the fastest odometry seen) and the
    ``[footprint]``; the odometry topic as seen."""
    assert choice.odom is not None  # describe refuses a robot without
    odom = watch.seen(choice.odom)
    found.append(f"odometry {choice.odom} at {_hz(odom.rate)}")
    if odom.count == 0:
        notes.append(f"odometry: no usable message on {choice.odom} in the watch ({odom.why})")
    _stamps(choice.odom, odom, notes)
    wheels = [j for j in (watch.joints.names if watch.joints else ()) if "wheel" in j.lower()]
    kind = "skid_steer" if len(wheels) >= 4 else "differential"
    v, omega = watch.fastest
    speed = min(10.0, max(WHEEL_SPEED, math.ceil(v * 12.0) / 10.0))
    turn = min(720.0, max(TURN_RATE_DEG, math.ceil(math.degrees(omega) * 1.2)))
    w.section(
        "drive",
        "assumed, all of it: the topics do not say the wheels (ros2-diff-base's values);",
        "the program takes the base's own odometry, so these bound commands and checks",
    )
    if kind == "skid_steer":
        w.key("kind", kind, f"assumed from its {len(wheels)} wheel joints (tracks: tracked)")
    else:
        w.key("kind", kind, "assumed (skid_steer: 4 wheels that skid to turn; tracked)")
    w.key("track_width", 0.43, "assumed: wheel separation, m")
    w.key("wheel_diameter", 0.2, "assumed")
    w.key("encoder_counts_per_rev", 4096, "unused on ROS: the base reports its own odometry")
    w.key("max_wheel_speed", float(speed), "assumed (at least the fastest odometry seen)")
    w.key("max_turn_rate_deg", float(turn), "assumed")
    w.key("max_acceleration", 1.0, "assumed")
    w.key("max_deceleration", 2.0, "assumed")
    w.key("motor_time_constant", 0.05, "assumed")
    assumed.append(
        f"a {kind.replace('_', '-')} base, track 0.43 m, {speed:g} m/s per wheel, "
        f"{turn:g}°/s ([drive])"
    )
    w.section("footprint", "assumed: a 0.51 × 0.43 m base (the topics say nothing of its size)")
    w.key("length", 0.51)
    w.key("width", 0.43)
    w.key("center_forward", 0.0)
    w.key("swing_radius", 0.34, "m from the centre to the farthest corner")
    assumed.append("a footprint of 0.51 × 0.43 m, swing radius 0.34 m ([footprint])")
    return odom


def _pan_tilt_and_camera(
    w: _Writer,
    choice: TopicChoice,
    watch: Watch,
    found: list[str],
    assumed: list[str],
    notes: list[str],
) -> tuple[str | None, str | None, bool]:
    """The ``[pan_tilt]`` and ``[camera]``; the pan and tilt joints, and whether a node takes
    their commands."""
    joints = watch.joints
    names = joints.names if joints is not None else ()
    pan = next((j for j in names if "pan" in j.lower() and is_frame(j)), None)
    tilt = next((j for j in names if "tilt" in j.lower() and is_frame(j)), None)
    if joints is not None and choice.joint_states is not None:
        shown = ", ".join(clean(j, 40) for j in names[:12])
        more = f" and {joints.count - 12} more" if joints.count > 12 else ""
        found.append(f"joints on {choice.joint_states}: {shown or 'none'}{more}")
    moving = choice.pan_tilt_command is not None and (pan is not None or tilt is not None)
    if (pan or tilt) and choice.pan_tilt_command is None:
        notes.append("a pan or tilt joint, but no node takes pan-tilt commands: taken as fixed")
    camera = choice.camera
    size = watch.images.get(camera) if camera is not None else None
    if camera is not None or moving:
        w.section(
            "pan_tilt",
            "assumed: where the camera sits (mount_forward must not be 0 for Free Look)",
        )
        w.key("mount_forward", 0.2, "assumed, m ahead of the centre")
        w.key("mount_height", 0.35, "assumed")
        w.key("has_pan", moving and pan is not None, f"joint {pan}" if moving and pan else "")
        w.key("has_tilt", moving and tilt is not None, f"joint {tilt}" if moving and tilt else "")
        w.key("max_pan_rate_deg", 60.0, "assumed")
        if moving:
            w.key("pan_limits_deg", [-90.0, 90.0], "assumed")
            w.key("tilt_limits_deg", [-30.0, 30.0], "assumed")
            found.append(
                f"a pan-tilt ({pan or '-'}, {tilt or '-'}) commanded on {choice.pan_tilt_command}"
            )
            assumed.append("pan ±90°, tilt ±30°, 60°/s, mounted 0.2 m ahead ([pan_tilt])")
        else:
            assumed.append("a fixed camera 0.2 m ahead of the centre ([pan_tilt])")
    if camera is not None:
        one = watch.seen(camera)
        fov = watch.fov_deg
        if fov is not None and not 1.0 < fov < 179.0:
            notes.append(f"camera: a field of view of {fov:.4g}° from its camera_info: 60° kept")
            fov = None
        w.section("camera", "" if fov is not None else "fov_deg assumed: no CameraInfo came")
        width, height = size if size is not None else (640, 480)
        if size is None:
            notes.append(f"camera: no picture on {camera} whose size could be read: 640 × 480")
        elif not (0 < width <= CAMERA_SIDE and 0 < height <= CAMERA_SIDE):
            notes.append(f"camera: {width} × {height} beyond {CAMERA_SIDE} a side: 640 × 480")
            width, height = 640, 480
        w.key("width", width, "seen" if size is not None else "assumed")
        w.key("height", height, "seen" if size is not None else "assumed")
        if fov is not None:
            w.key("fov_deg", round(fov, 2), f"seen: {clean(choice.camera_info or '')}")
        else:
            w.key("fov_deg", 60.0, "assumed")
        rate = _bounded_rate(one, CAMERA_RATE, 15.0, "camera", notes)
        w.key("rate_hz", rate, f"seen: {_hz(one.rate)}")
        kind = "JPEG" if choice.camera_compressed else "raw"
        seen_fov = f", {fov:.3g}° wide" if fov is not None else ""
        found.append(f"camera {camera}: {width} × {height} {kind}{seen_fov} at {_hz(one.rate)}")
        if fov is None:
            assumed.append("a camera field of view of 60° ([camera] fov_deg)")
        _stamps(camera, one, notes)
    return pan, tilt, moving


def _gyro(
    w: _Writer, choice: TopicChoice, watch: Watch, found: list[str], notes: list[str]
) -> str | None:
    """The ``[gyro]`` of an IMU that gave angular velocity; its topic (None: no gyro)."""
    imu = choice.imu
    if imu is not None and watch.imu_rate:
        one = watch.seen(imu)
        w.section("gyro", "its noise figures are a typical MEMS part's (assumed)")
        w.key("rate_hz", _bounded_rate(one, GYRO_RATE, 100.0, "imu", notes), _hz(one.rate))
        found.append(f"IMU {imu} at {_hz(one.rate)}")
        _stamps(imu, one, notes)
    elif imu is not None:
        notes.append(f"imu: {imu} gave no angular velocity in the watch: no [gyro]")
        imu = None
    return imu


def _safety_and_limits(w: _Writer, assumed: list[str]) -> None:
    """The ``[safety]`` zones and ``[limits]``, assumed for a 0.5 m base."""
    w.section(
        "safety",
        "assumed: zones for a 0.5 m base (ros2-diff-base's); boundaries are from the centre",
    )
    w.lines += [
        "zones = [",
        "    { boundary = 0.6, max_speed = 0.1, max_turn_rate_deg = 20.0 },",
        "    { boundary = 0.9, max_speed = 0.2, max_turn_rate_deg = 30.0 },",
        "    { boundary = 1.3, max_speed = 0.4, max_turn_rate_deg = 45.0 },",
        "]",
    ]
    w.key("watchdog_timeout", 0.5)
    assumed.append("safety zones at 0.6, 0.9 and 1.3 m ([safety])")
    w.section("limits", "assumed: what the modes allow")
    w.key("max_speed", 0.5)
    w.key("max_turn_rate_deg", 60.0)
    w.key("linear_max_speed", 0.4)


def _topics(
    w: _Writer,
    choice: TopicChoice,
    namespace: str,
    scan_topic: str | None,
    imu: str | None,
    moving: bool,
) -> None:
    """The ``[ros2.topics]``, relative to the namespace."""
    assert choice.odom is not None  # describe refuses a robot without
    cmd_vel, camera = choice.cmd_vel, choice.camera

    def rel(topic: str) -> str:
        return relative_name(topic, namespace)

    w.section("ros2.topics", "relative to the namespace (--hardware ros2://NAMESPACE)")
    w.key("cmd_vel", rel(cmd_vel) if cmd_vel is not None else "cmd_vel")
    w.key("odom", rel(choice.odom))
    w.key("scan", rel(scan_topic) if scan_topic is not None else "")
    w.key("imu", rel(imu) if imu is not None else "")
    w.key("camera", rel(camera) if camera is not None else "")
    w.key("joint_states", rel(choice.joint_states) if choice.joint_states else "")
    w.key("battery", rel(choice.battery) if choice.battery else "")
    if moving and choice.pan_tilt_command is not None:
        w.key("pan_tilt_command", rel(choice.pan_tilt_command))
    if choice.pose is not None:
        w.key("pose", rel(choice.pose), 'with localization = "ros"')


def _steady_frame(choice: TopicChoice, watch: Watch) -> str:
    """The laser's frame_id, when its scans all carried the same one."""
    if not choice.scans:
        return ""
    frames = {s.frame_id for s in watch.scans.get(choice.scans[0], [])}
    frame = next(iter(frames)) if len(frames) == 1 else ""
    return frame if is_frame(frame) else ""


def _laser(
    w: _Writer,
    choice: TopicChoice,
    watch: Watch,
    found: list[str],
    assumed: list[str],
    notes: list[str],
    namespace: str,
) -> str | None:
    """The ``[laser]`` of the first scan topic whose scans had a layout; the others listed."""
    topic = next((t for t in choice.scans if watch.scans.get(t)), None)

    def rel(name: str) -> str:
        return relative_name(name, namespace)

    for other in choice.scans:
        if other != topic:
            seen = watch.topics.get(other)
            why = f" ({seen.why})" if seen is not None and seen.why else ""
            notes.append(
                f"scan {other}{why}: not taken; a [[laser.extra]] with its mount merges it"
            )
    if topic is None:
        return None
    layouts = watch.scans[topic]
    scan = layouts[-1]
    one = watch.seen(topic)
    span = math.degrees(abs(scan.angle_increment) * (scan.beams - 1))
    steady = len(layouts) == 1
    if not steady:
        notes.append(f"scan: {len(layouts)} layouts in the watch: the newest written, none pinned")
    beams, fov = min(scan.beams, MAX_BEAMS), max(0.1, round(min(span, 360.0), 4))
    if fov != round(span, 4):
        notes.append(f"scan: beams over {span:.4g}°, written as {fov:g}° (0.1–360°)")
    # pinned only as the program's check will take it: within a tenth of a step
    close = abs(fov - span) <= 0.1 * math.degrees(abs(scan.angle_increment))
    pin = steady and beams == scan.beams and close
    if scan.beams > MAX_BEAMS:
        notes.append(f"scan: {scan.beams} beams, beyond the {MAX_BEAMS} a description takes")
    low, high = _range_limits(scan.range_min, scan.range_max, notes)
    turn = "clockwise (a negative increment)" if scan.angle_increment < 0 else "counter-clockwise"
    w.section(
        "laser",
        f"seen: {scan.beams} beams from {math.degrees(scan.angle_min):.4g}° every "
        f"{math.degrees(scan.angle_increment):.4g}° ({turn}), over {span:.4g}°;",
        "scans are taken as their messages lay them out. Assumed: the laser at the centre,",
        "its x axis ahead (yaw_deg = 0), upright: set mount_forward, yaw_deg, upside_down",
    )
    w.key("mount_forward", 0.0, "assumed")
    w.key("yaw_deg", 0.0, "assumed")
    w.key("upside_down", False, "assumed")
    w.key("beams", beams)
    w.key("fov_deg", fov, "first beam to last")
    if pin:
        w.key("pinned", ["beams", "fov_deg"], "a scan laid out otherwise is refused")
    else:
        w.key("pinned", [], "none: any layout is taken (the log says a new one)")
    rate = _bounded_rate(one, LASER_RATE, 10.0, "scan", notes)
    w.key("rate_hz", rate, _hz(one.rate))
    w.key("range_min", float(low))
    w.key("range_max", float(high))
    for other in choice.scans[:4]:
        if other != topic and watch.scans.get(other):
            w.comment(f"a further laser on {other}: uncomment and say where it sits to merge it")
            w.lines += [
                "# [[laser.extra]]",
                f"# topic = {_toml(rel(other))}",
                "# mount_forward = 0.0",
                "# yaw_deg = 0.0",
            ]
    found.append(
        f"scan {topic}: {scan.beams} beams from {math.degrees(scan.angle_min):.4g}° every "
        f"{math.degrees(scan.angle_increment):.4g}°, {low:g}–{high:g} m, at {_hz(one.rate)}"
    )
    assumed.append("the laser at the base's centre, facing ahead, upright ([laser])")
    _stamps(topic, one, notes)
    if topic in watch.blind:
        count, start = watch.blind[topic]
        notes.append(_blind_note(count, one.count, start))
    return topic


def _range_limits(low: float, high: float, notes: list[str]) -> tuple[float, float]:
    """A scan's range limits as a description takes them (bounded; none: 0.05–30 m)."""
    if not (math.isfinite(low) and math.isfinite(high) and low >= 0.0 and low + 0.01 <= high):
        notes.append(f"scan: range limits [{low}, {high}] are no range: assumed 0.05–30 m")
        low, high = 0.05, 30.0
    elif high > RANGE_MAX or low > RANGE_MIN:
        notes.append(
            f"scan: range limits [{low:g}, {high:g}] m bounded to ≤{RANGE_MIN:g}/{RANGE_MAX:g}"
        )
        low, high = min(low, RANGE_MIN), min(high, RANGE_MAX)
        low = min(low, high - 0.01)
    return low, high


def _blind_note(count: int, scans: int, start: float) -> str:
    """What the watch saw of a laser blind over a sector (``start``: its first bearing, rad)."""
    return (
        f"scan: {count} of {scans} scans had no measured range over "
        f"{BLIND_SECTOR_DEG:g}° from {math.degrees(start):.0f}° (inf, NaN or outside the "
        "limits: the robot's own body? open ground?): the program refuses such a scan as "
        "blind; [ros2] blind_sector_deg = 0 turns that check off"
    )

"""A starting robot description from what a running ROS 2 robot publishes (sans-I/O).

``freelook ros2 describe`` (and ``freelook robot --hardware ros2`` without ``--robot``) watch
a robot for a few seconds; this module turns what they saw into a description: which topics
carry what (:func:`choose_topics`, from the ROS graph's names and types), what came on them
(:class:`Watch`, fed one message summary at a time with the time it came), and the TOML that
says it (:func:`describe`), each value it could not see named as assumed. Everything seen is
hostile input: counts, rates, sizes and ranges are bounded to what a description takes, and
what falls outside is said in the file, never used.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from freelook.hardware.ros2._convert import ScanLayout, scan_problem

__all__ = [
    "SCAN_LAYOUTS_KEPT",
    "JointsSeen",
    "ScanSeen",
    "TopicChoice",
    "TopicGraph",
    "Watch",
    "blind_sector",
    "choose_topics",
    "relative_name",
]

#: distinct scan layouts a watch keeps (a scan whose layout changes every message is said)
SCAN_LAYOUTS_KEPT = 8
#: joint names a watch keeps from ``joint_states``
JOINTS_KEPT = 64
#: the robot program's default [ros2] blind_sector_deg
BLIND_SECTOR_DEG = 45.0
#: m/s or rad/s beyond which an odometry twist is no ground robot's
MAX_TWIST = 50.0
#: fewer messages than this, or over less time, give no rate
MIN_MESSAGES = 3
MIN_SPAN = 0.2  # s

TYPES = {
    "odom": ("nav_msgs/msg/Odometry",),
    "scan": ("sensor_msgs/msg/LaserScan",),
    "imu": ("sensor_msgs/msg/Imu",),
    "camera": ("sensor_msgs/msg/CompressedImage", "sensor_msgs/msg/Image"),
    "joint_states": ("sensor_msgs/msg/JointState",),
    "battery": ("sensor_msgs/msg/BatteryState",),
    "map": ("nav_msgs/msg/OccupancyGrid",),
    "pose": ("geometry_msgs/msg/PoseWithCovarianceStamped",),
}
CAMERA_INFO = "sensor_msgs/msg/CameraInfo"
TWIST = "geometry_msgs/msg/Twist"
TWIST_STAMPED = "geometry_msgs/msg/TwistStamped"
FLOAT_ARRAY = "std_msgs/msg/Float64MultiArray"
TRAJECTORY = "trajectory_msgs/msg/JointTrajectory"
#: the usual names, best first (relative to the namespace); the wheels' own odometry before a
#: fused one (the program fuses the gyro with it itself)
USUAL = {
    "odom": (
        "odom",
        "platform/odom",
        "diff_drive_controller/odom",
        "odometry/filtered",
        "platform/odom/filtered",
    ),
    "scan": ("scan", "front/scan", "scan_filtered", "sensors/lidar2d_0/scan"),
    "imu": ("imu/data", "imu", "imu/data_raw", "sensors/imu_0/data"),
    "camera": (
        "camera/image_raw/compressed",
        "camera/image_raw",
        "image_raw/compressed",
        "oakd/rgb/preview/image_raw/compressed",
        "oakd/rgb/preview/image_raw",
    ),
    "joint_states": ("joint_states", "platform/joint_states"),
    "battery": ("battery_state", "platform/bms/state"),
    "cmd_vel": ("cmd_vel", "platform/cmd_vel", "diff_drive_controller/cmd_vel"),
    "map": ("map",),
    "pose": ("amcl_pose", "pose"),
}
_TOPIC = re.compile(r"^/?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$")
_FRAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_./-]{0,127}$")


def clean(text: str, limit: int = 60) -> str:
    """``text`` fit for a comment line: printable characters only (control characters, line
    and paragraph separators as ``?``), at most ``limit`` of them (a name a hostile node chose
    cannot end the comment)."""
    kept = "".join(c if c.isprintable() else "?" for c in text[: limit + 1])
    return kept if len(kept) <= limit else kept[: limit - 1] + "…"


def is_frame(text: str) -> bool:
    """Whether ``text`` is a frame or joint name a description takes."""
    return _FRAME.match(text) is not None


def relative_name(topic: str, namespace: str) -> str:
    """``topic`` (a full name) as ``[ros2.topics]`` takes it: relative to ``namespace`` when
    under it, else absolute."""
    prefix = f"/{namespace.strip('/')}/" if namespace.strip("/") else "/"
    return topic[len(prefix) :] if topic.startswith(prefix) else topic


@dataclass(frozen=True, slots=True)
class TopicGraph:
    """The ROS graph as another node sees it: each topic's types as published and as
    subscribed by others (full names)."""

    published: Mapping[str, tuple[str, ...]]
    subscribed: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class TopicChoice:
    """Which topics (full names) the description takes, and what the graph said beside."""

    odom: str | None
    scans: tuple[str, ...]
    imu: str | None
    camera: str | None
    camera_compressed: bool
    joint_states: str | None
    battery: str | None
    cmd_vel: str | None
    cmd_vel_stamped: bool
    pan_tilt_command: str | None
    pan_tilt_trajectory: bool
    notes: tuple[str, ...] = ()
    #: the camera's ``sensor_msgs/CameraInfo`` (its field of view)
    camera_info: str | None = None
    #: the robot's own map (``OccupancyGrid``) and localization (``PoseWithCovarianceStamped``)
    map: str | None = None
    pose: str | None = None
    #: the robot's namespace: the one asked for, or, asked for none, the one its odometry is in
    namespace: str = ""


def _rank(names: Sequence[str], key: str, namespace: str) -> list[str]:
    """``names`` best first: the usual names in their order, then those ending in one (a
    robot's in a namespace of its own; the shallowest first), then the rest."""
    usual = USUAL[key]

    def score(name: str) -> tuple[int, int, int, str]:
        rel = relative_name(name, namespace)
        if rel in usual:
            return (0, usual.index(rel), 0, name)
        tails = [i for i, u in enumerate(usual) if rel.endswith(f"/{u}")]
        depth = name.count("/")
        return (1, tails[0], depth, name) if tails else (2, 0, depth, name)

    return sorted(names, key=score)


def _in_namespace(topic: str, namespace: str) -> bool:
    ns = namespace.strip("/")
    return not ns or topic.startswith(f"/{ns}/")


def choose_topics(graph: TopicGraph, namespace: str = "") -> TopicChoice:
    """The robot's topics: for each kind, the published topic of its type under
    ``namespace`` (the usual name first); ``cmd_vel`` and the pan-tilt's command from what
    some node subscribes, with the type it takes."""
    notes: list[str] = []

    def of(types: Mapping[str, tuple[str, ...]], wanted: tuple[str, ...]) -> list[str]:
        return [
            name
            for name, kinds in types.items()
            if _TOPIC.match(name) and _in_namespace(name, namespace) and set(kinds) & set(wanted)
        ]

    if not namespace.strip("/"):
        # no namespace asked: a robot whose odometry is in one is taken in that one (never
        # one robot's odometry with another's scan)
        odoms = _rank(of(graph.published, TYPES["odom"]), "odom", namespace)
        tails = [u for u in USUAL["odom"] if odoms and odoms[0].endswith(f"/{u}")]
        tail = max(tails, key=len) if tails else None
        inner = odoms[0][1 : -len(tail) - 1] if odoms and tail else ""
        if inner:
            there = choose_topics(graph, inner)
            note = f"odometry in namespace /{clean(inner)}: the robot's topics taken there"
            return replace(there, notes=(note, *there.notes))
    chosen: dict[str, str | None] = {}
    for key in ("odom", "imu", "camera", "joint_states", "battery", "map", "pose"):
        found = of(graph.published, TYPES[key])
        ranked = _rank(found, key, namespace)
        if key == "camera":  # compressed pictures first: they go on the link as they come
            ranked.sort(key=lambda n: "sensor_msgs/msg/CompressedImage" not in graph.published[n])
        chosen[key] = ranked[0] if ranked else None
        if len(ranked) > 1:
            others = ", ".join(clean(n) for n in ranked[1:4])
            notes.append(f"{key}: took {clean(ranked[0])}; also published: {others}")
    scans = tuple(_rank(of(graph.published, TYPES["scan"]), "scan", namespace))
    camera, compressed, info = _camera(
        graph, chosen["camera"], of(graph.published, (CAMERA_INFO,)), notes
    )
    twists = _rank(of(graph.subscribed, (TWIST, TWIST_STAMPED)), "cmd_vel", namespace)
    cmd_vel, stamped = _cmd_vel(graph, twists[0] if twists else None, notes)
    commands = [
        n for n in of(graph.subscribed, (FLOAT_ARRAY, TRAJECTORY)) if "pan" in n or "tilt" in n
    ]
    pan_tilt = sorted(commands)[0] if commands else None
    trajectory = pan_tilt is not None and TRAJECTORY in graph.subscribed[pan_tilt]
    return TopicChoice(
        odom=chosen["odom"],
        scans=scans,
        imu=chosen["imu"],
        camera=camera,
        camera_compressed=compressed,
        camera_info=info,
        map=chosen["map"],
        pose=chosen["pose"],
        joint_states=chosen["joint_states"],
        battery=chosen["battery"],
        cmd_vel=cmd_vel,
        cmd_vel_stamped=stamped,
        pan_tilt_command=pan_tilt,
        pan_tilt_trajectory=trajectory,
        notes=tuple(notes),
        namespace=namespace.strip("/"),
    )


def _camera(
    graph: TopicGraph, camera: str | None, infos: list[str], notes: list[str]
) -> tuple[str | None, bool, str | None]:
    """The camera topic (None: one whose name does not say its kind), whether it carries
    JPEG, and its calibration: the camera_info beside it (the one in the deepest folder it is
    in) of ``infos``."""
    compressed = camera is not None and "sensor_msgs/msg/CompressedImage" in graph.published.get(
        camera, ()
    )
    if camera is not None and compressed != camera.rstrip("/").endswith("compressed"):
        # the program tells the two kinds by the name's ending
        notes.append(
            f"camera: {clean(camera)} carries "
            f"{'CompressedImage' if compressed else 'Image'}, which its name does not say: "
            "left out"
        )
        camera = None
    beside = [
        n for n in infos if camera is not None and camera.startswith(n.rsplit("/", 1)[0] + "/")
    ]
    info = max(beside, key=lambda n: (n.count("/"), n)) if beside else None
    return camera, compressed, info


def _cmd_vel(graph: TopicGraph, cmd_vel: str | None, notes: list[str]) -> tuple[str | None, bool]:
    """The velocity command's topic, and whether it takes TwistStamped."""
    stamped = False
    if cmd_vel is not None:
        kinds = set(graph.subscribed[cmd_vel])
        stamped = TWIST_STAMPED in kinds and TWIST not in kinds
        if {TWIST, TWIST_STAMPED} <= kinds:
            notes.append(f"cmd_vel: {clean(cmd_vel)} is subscribed as Twist and TwistStamped")
    return cmd_vel, stamped


@dataclass(frozen=True, slots=True)
class ScanSeen:
    """What a ``LaserScan`` said of itself."""

    frame_id: str
    angle_min: float
    angle_increment: float
    beams: int
    range_min: float
    range_max: float

    @property
    def layout(self) -> ScanLayout:
        return ScanLayout(self.frame_id, self.angle_min, self.angle_increment, self.beams)


def blind_sector(
    ranges: npt.ArrayLike, scan: ScanSeen, width_deg: float = BLIND_SECTOR_DEG
) -> float | None:
    """Where (rad, the laser's angle) a scan first has ``width_deg`` with no measured range
    (inf, NaN or outside its limits), taking the sectors as the robot program's blind check
    does; None: a range was measured in each."""
    r = np.asarray(ranges, dtype=np.float64)
    step = abs(scan.angle_increment)
    if len(r) == 0 or width_deg <= 0.0 or not (step > 0.0 and math.isfinite(step)):
        return None
    with np.errstate(invalid="ignore"):
        measured = np.isfinite(r) & (r >= scan.range_min) & (r <= scan.range_max)
    per = max(1, round(math.radians(width_deg) / step))
    starts = np.arange(0, len(r), per)
    blind = ~np.logical_or.reduceat(measured, starts)
    if not blind.any():
        return None
    return float(scan.angle_min + int(starts[int(np.argmax(blind))]) * scan.angle_increment)


@dataclass(frozen=True, slots=True)
class JointsSeen:
    """The joint names of a ``JointState`` (at most :data:`JOINTS_KEPT`) and how many it had."""

    names: tuple[str, ...]
    count: int


@dataclass(slots=True)
class TopicSeen:
    """One topic's messages: how many came over what time, the newest's summary, stamps."""

    count: int = 0
    first: float = math.nan
    last: float = math.nan
    #: the newest stamp's offset from the watcher's clock (s; positive: behind), the largest
    lag: float = math.nan
    worst_lag: float = 0.0
    unstamped: int = 0
    refused: int = 0
    why: str = ""

    def heard(self, t: float, lag: float | None) -> None:
        """A message at ``t`` (s, the watcher's clock), stamped ``lag`` s before it (None:
        no stamp)."""
        if not math.isfinite(t):
            return
        self.count += 1
        self.first = t if self.count == 1 else self.first
        self.last = t
        if lag is None:
            self.unstamped += 1
        elif math.isfinite(lag):
            self.lag = lag
            self.worst_lag = lag if abs(lag) > abs(self.worst_lag) else self.worst_lag

    def refuse(self, why: str) -> None:
        self.refused += 1
        self.why = why

    @property
    def rate(self) -> float | None:
        """Messages a second (None: too few, or too close together, to say)."""
        span = self.last - self.first
        if self.count < MIN_MESSAGES or not span >= MIN_SPAN:
            return None
        return (self.count - 1) / span


@dataclass(slots=True)
class Watch:
    """What came on the robot's topics: fed by the watcher (any thread, under its lock),
    read by :func:`describe`. Bounded whatever comes: counts, a few layouts, 64 joints."""

    topics: dict[str, TopicSeen] = field(default_factory=dict)
    scans: dict[str, list[ScanSeen]] = field(default_factory=dict)
    images: dict[str, tuple[int, int]] = field(default_factory=dict)
    joints: JointsSeen | None = None
    #: scan topic → how many of its scans were blind, and where the newest one was (rad)
    blind: dict[str, tuple[int, float]] = field(default_factory=dict)
    imu_rate: bool = False
    #: the camera's horizontal field of view from its CameraInfo (deg)
    fov_deg: float | None = None
    base_frame: str | None = None
    fastest: tuple[float, float] = (0.0, 0.0)  # |v| m/s, |ω| rad/s the odometry said

    def seen(self, topic: str) -> TopicSeen:
        return self.topics.setdefault(topic, TopicSeen())

    def odom(
        self, topic: str, t: float, lag: float | None, frame: str, v: float, omega: float
    ) -> None:
        one = self.seen(topic)
        if not (math.isfinite(v) and math.isfinite(omega)):
            one.refuse("a non-finite twist")
            return
        if abs(v) > MAX_TWIST or abs(omega) > MAX_TWIST:
            one.refuse(f"a twist beyond {MAX_TWIST:g} m/s or rad/s ({v:.3g}, {omega:.3g})")
            return
        one.heard(t, lag)
        self.base_frame = frame
        self.fastest = (max(self.fastest[0], abs(v)), max(self.fastest[1], abs(omega)))

    def scan(
        self, topic: str, t: float, lag: float | None, scan: ScanSeen, blind: float | None = None
    ) -> None:
        """A scan laid out as ``scan`` says, ``blind`` from that angle (rad, the laser's; None:
        measured all round, as :func:`blind_sector` finds it)."""
        one = self.seen(topic)
        problem = scan_problem(scan.layout)
        if problem is not None:
            one.refuse(problem)
            return
        one.heard(t, lag)
        if blind is not None and math.isfinite(blind):
            self.blind[topic] = (self.blind.get(topic, (0, 0.0))[0] + 1, blind)
        layouts = self.scans.setdefault(topic, [])
        same = [s for s in layouts if s.layout[1:] == scan.layout[1:]]
        for s in same:
            layouts.remove(s)
        layouts.append(scan)  # the newest last
        del layouts[:-SCAN_LAYOUTS_KEPT]

    def imu(self, topic: str, t: float, lag: float | None, has_rate: bool) -> None:
        self.seen(topic).heard(t, lag)
        self.imu_rate = self.imu_rate or has_rate

    def image(self, topic: str, t: float, lag: float | None, size: tuple[int, int] | None) -> None:
        one = self.seen(topic)
        if size is None:
            one.refuse("a picture whose size could not be read")
            return
        one.heard(t, lag)
        self.images[topic] = size

    def camera_info(self, topic: str, t: float, lag: float | None, width: int, fx: float) -> None:
        """A ``CameraInfo``: the picture's width and its focal length in pixels (K[0])."""
        one = self.seen(topic)
        if not (0 < width <= 1 << 16 and math.isfinite(fx) and fx > 0.0):
            one.refuse(f"width {width}, focal length {fx}: no field of view")
            return
        one.heard(t, lag)
        self.fov_deg = math.degrees(2.0 * math.atan(width / (2.0 * fx)))

    def joint_state(self, topic: str, t: float, lag: float | None, names: Sequence[str]) -> None:
        self.seen(topic).heard(t, lag)
        self.joints = JointsSeen(tuple(str(n)[:256] for n in names[:JOINTS_KEPT]), len(names))

    def other(self, topic: str, t: float, lag: float | None) -> None:
        self.seen(topic).heard(t, lag)

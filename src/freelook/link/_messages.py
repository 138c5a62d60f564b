"""Typed messages that cross the link, in SI units (m, rad, s). Codecs convert at the edge."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

from freelook.link._goal_messages import GoalStart, GoalStop
from freelook.link._stats_report import LinkStatsReport
from freelook.types import Mode, SafetyFlags, TaskPhase

__all__ = [
    "ArmTelemetry",
    "ArmVelocityCommand",
    "AutonomyTelemetry",
    "ClockEcho",
    "ControlGrant",
    "ControlReject",
    "ControlRelease",
    "ControlRequest",
    "EStop",
    "FrameLayout",
    "FreeLookCommand",
    "GoalStart",
    "GoalStop",
    "GripperCommand",
    "Heartbeat",
    "LinearDriveStart",
    "LinearDriveStop",
    "MapChunk",
    "MapInfo",
    "MapRequest",
    "Message",
    "Mode",
    "ModeChange",
    "ModeRefusal",
    "PanTiltCommand",
    "PositionReport",
    "ReceptionReport",
    "RejectReason",
    "Relocalize",
    "SafetyFlags",
    "SessionChallenge",
    "SessionConfirm",
    "SessionOpen",
    "SetTransmission",
    "SetTransmissionSpacing",
    "TankCommand",
    "Telemetry",
    "TrajectoryStart",
    "TrajectoryStop",
    "VelocityCommand",
    "VideoCodec",
    "VideoFeedback",
    "VideoFragment",
    "VideoFrame",
    "WheelSpeedCommand",
]


class FrameLayout(IntEnum):
    """How a video frame's pixels are laid out: one image, or a stereo pair side by side
    (left eye in the left half, both eyes captured at the frame's one stamp)."""

    MONO = 0
    SIDE_BY_SIDE = 1


class VideoCodec(IntEnum):
    """How a video frame's bytes are encoded. JPEG frames stand alone; the others are
    inter-frame codecs: a delta frame decodes only after every frame since its keyframe."""

    JPEG = 0
    VP8 = 1
    VP9 = 2
    H264 = 3


class RejectReason(IntEnum):
    """Why control was refused: a holder of higher authority, or a release by a station that
    does not hold control."""

    LOWER_AUTHORITY = 1
    NOT_HOLDER = 2


@dataclass(frozen=True, slots=True)
class VelocityCommand:
    """Chassis velocity: v forward (m/s), ω counter-clockwise (rad/s)."""

    v: float
    omega: float


@dataclass(frozen=True, slots=True)
class WheelSpeedCommand:
    """Left and right track/wheel surface speeds (m/s)."""

    left: float
    right: float


@dataclass(frozen=True, slots=True)
class TankCommand:
    """Tank Control: chassis (v, ω) with an independent camera pan and tilt rate (Remark 1)."""

    v: float
    omega: float
    pan_rate: float = 0.0
    tilt_rate: float = 0.0


@dataclass(frozen=True, slots=True)
class FreeLookCommand:
    """Free Look Control: camera-frame velocity (v1 forward, v2 left), camera turn rate ω."""

    v1: float
    v2: float
    omega: float
    tilt_rate: float = 0.0


@dataclass(frozen=True, slots=True)
class PanTiltCommand:
    """Pan and tilt rates (rad/s) of the camera unit alone."""

    pan_rate: float
    tilt_rate: float


@dataclass(frozen=True, slots=True)
class ArmVelocityCommand:
    """Velocities of the arm's jogged joints (rad/s, or m/s for a prismatic joint), in the
    order of the robot's URDF (its SRDF group ``arm``)."""

    velocities: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class GripperCommand:
    """Open (or close) the gripper's fingers to ``opening`` metres apart (0: closed)."""

    opening: float


@dataclass(frozen=True, slots=True)
class ArmTelemetry:
    """The arm as the robot measures and guards it: joint encoders in URDF order, the
    gripper, the most restrictive anti-collision phase that acted since the previous report
    (0 clear, 1 slow, 2 stop), the checked pairs (indices into the robot's checked pairs, SRDF
    order) that intersect at each phase's horizon, and the phases the check went through since
    the previous report, oldest first (none: not said). A slow phase shorter than the gap
    between two reports is in ``phases`` though ``phase`` says stop."""

    positions: tuple[float, ...]
    velocities: tuple[float, ...]
    gripper_opening: float = 0.0
    gripper_holding: bool = False
    phase: int = 0
    slow_pairs: tuple[int, ...] = ()
    stop_pairs: tuple[int, ...] = ()
    phases: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class AutonomyTelemetry:
    """The autonomous task as the robot runs it: its phase (a :class:`TaskPhase`), progress
    through the whole task (0…1), whether it is paused (the operator took over, an e-stop or
    a lost link) and how many recoveries it has made."""

    phase: TaskPhase = TaskPhase.IDLE
    progress: float = 0.0
    paused: bool = False
    recoveries: int = 0


@dataclass(frozen=True, slots=True)
class ModeChange:
    mode: Mode


@dataclass(frozen=True, slots=True)
class LinearDriveStart:
    """Shuttle along x between two points (the thesis eq. 5.5)."""

    x_start: float
    x_end: float
    max_speed: float = 0.4


@dataclass(frozen=True, slots=True)
class LinearDriveStop:
    pass


@dataclass(frozen=True, slots=True)
class TrajectoryStart:
    """A trajectory to track on the robot: time-stamped points (s, m, m)."""

    t: tuple[float, ...]
    x: tuple[float, ...]
    y: tuple[float, ...]
    reverse: bool = False
    periodic: bool = False


@dataclass(frozen=True, slots=True)
class TrajectoryStop:
    pass


@dataclass(frozen=True, slots=True)
class EStop:
    """Engage (latching) or release the emergency stop."""

    engaged: bool


@dataclass(frozen=True, slots=True)
class Relocalize:
    """Forget the pose and search the whole map for it (global localization)."""


@dataclass(frozen=True, slots=True)
class SetTransmission:
    """Start or stop the peer's periodic transmission (thesis sub-type 1)."""

    enabled: bool


@dataclass(frozen=True, slots=True)
class SetTransmissionSpacing:
    """The peer's transmission interval in seconds (thesis sub-type 2)."""

    spacing: float


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """Nothing to say but that the sender is there (keeps a session and the watchdog's view
    of the link alive while no command is held)."""


@dataclass(frozen=True, slots=True)
class ReceptionReport:
    """Station → robot: what the station sees of the robot, so the robot can tell when its
    driver is blind. On the station's clock, when the report is sent: how long its telemetry
    is overdue (past the spacing the station asked for; 0 while on time), how long since its
    newest complete driving-camera frame arrived, and the share of the robot's packets it
    misses (%)."""

    telemetry_overdue: float
    video_age: float
    loss_percent: float


@dataclass(frozen=True, slots=True)
class ControlRequest:
    """Ask for control of the robot (JAUS RequestControl)."""

    station: int
    authority: int


@dataclass(frozen=True, slots=True)
class ControlRelease:
    """Give control back (JAUS ReleaseControl)."""

    station: int


@dataclass(frozen=True, slots=True)
class ControlGrant:
    """Control confirmed (JAUS ConfirmControl)."""

    station: int
    authority: int


@dataclass(frozen=True, slots=True)
class ControlReject:
    """Control refused (JAUS RejectControl)."""

    station: int
    reason: RejectReason


@dataclass(frozen=True, slots=True)
class ModeRefusal:
    """Robot → operator: the robot did not enter ``mode``, and why (``reason``, a short line
    for the operator's page). ``standing``: the robot refuses this mode whenever it is asked,
    for what the robot is (no pan joint, no arm); it says so to each station when its
    session opens and every 2 s after. Otherwise it answers what ``station`` just asked for
    (once a second at most while the station keeps asking)."""

    station: int
    mode: Mode
    reason: str
    standing: bool = False


@dataclass(frozen=True, slots=True)
class SessionOpen:
    """Operator → robot, tagged with the station key: open a session (a fresh 16-byte nonce)."""

    nonce: bytes


@dataclass(frozen=True, slots=True)
class SessionChallenge:
    """Robot → operator, tagged with the station key: the operator's nonce echoed and the
    robot's fresh one. Both ends now derive the session key from the two."""

    client_nonce: bytes
    server_nonce: bytes


@dataclass(frozen=True, slots=True)
class SessionConfirm:
    """Operator → robot, the first packet tagged with the session key: the session is open."""


@dataclass(frozen=True, slots=True)
class MapInfo:
    """Robot → operator: the map the robot localizes in and keeps clear of, named by the
    SHA-256 ``digest`` of its encoding (``size`` bytes). ``name`` is a built-in world's name
    (an operator that has it need not ask for the map), or "" for any other map."""

    digest: bytes
    size: int
    name: str = ""


@dataclass(frozen=True, slots=True)
class MapRequest:
    """Operator → robot: send chunks ``first`` … ``first + count − 1`` of map ``digest``."""

    digest: bytes
    first: int
    count: int


@dataclass(frozen=True, slots=True)
class MapChunk:
    """Robot → operator: chunk ``index`` of ``count`` of the encoded map ``digest``."""

    digest: bytes
    index: int
    count: int
    data: bytes


@dataclass(frozen=True, slots=True)
class Telemetry:
    """The robot's state as the operator sees it."""

    stamp: float
    odom: tuple[float, float, float]  # x, y, θ from odometry
    pose: tuple[float, float, float]  # x, y, θ from localization
    v: float  # measured
    omega: float
    cmd_v: float  # after safety
    cmd_omega: float
    pan: float
    tilt: float
    laser_angle_min: float = 0.0
    laser_angle_increment: float = 0.0
    laser_range_max: float = 0.0
    laser: tuple[float, ...] = ()
    sonar: tuple[float, ...] = ()
    bumper_front: bool = False
    bumper_rear: bool = False
    safety_zone: int = -1  # index of the acting zone, innermost 0; −1 none
    safety_scale: float = 1.0
    safety_flags: SafetyFlags = SafetyFlags.NONE
    mode: Mode = Mode.IDLE
    estop: bool = False
    localizing: bool = False  # a global search runs: the pose is not yet trusted
    controller: int = 0  # station in control, 0 none
    link: LinkStatsReport = field(default_factory=LinkStatsReport)
    arm: ArmTelemetry | None = None  # a robot with an arm
    autonomy: AutonomyTelemetry | None = None  # a robot that can run the disposal task
    #: the delay rule's speed cap (m/s, forward now or the way it drives) and the round trip
    #: it was computed at (s, the robot's own measure); None: no delay rule
    speed_cap: tuple[float, float] | None = None


@dataclass(frozen=True, slots=True)
class PositionReport:
    """The thesis's position packet: pose, velocities, 35 laser and 8 rear-sonar readings."""

    x: float
    y: float
    theta: float
    v: float
    omega: float
    laser: tuple[float, ...]  # 35 readings, m
    sonar: tuple[float, ...]  # 8 readings, m


@dataclass(frozen=True, slots=True)
class VideoFrame:
    """One camera's encoded frame; ``stream`` 0 is the driving camera, further cameras come
    from the robot's config; ``layout`` a :class:`FrameLayout` (``width`` is the whole
    image's, both eyes of a side-by-side pair); ``codec`` a :class:`VideoCodec`; ``keyframe``
    whether it decodes on its own (every JPEG frame does). Frame ids of a stream count the
    frames sent, one by one: a gap is a lost frame."""

    frame_id: int
    stamp: float
    width: int
    height: int
    data: bytes
    stream: int = 0
    layout: int = FrameLayout.MONO
    codec: int = VideoCodec.JPEG
    keyframe: bool = True


@dataclass(frozen=True, slots=True)
class VideoFeedback:
    """Operator → robot (native profile), a few times a second: the share of the robot's
    packets lost on their way here (0…1, over the last report's interval), which sets the
    robot's video bitrate, and whether camera ``stream`` needs a keyframe (a frame was lost
    and the decoder waits for one). The robot honours keyframe requests at a bounded rate."""

    stream: int
    loss: float
    keyframe: bool = False


@dataclass(frozen=True, slots=True)
class ClockEcho:
    """Robot → operator (native profile), a few times a second: the stamp of the operator's
    packet that reached the robot fastest since the last echo (``sent``, the operator's
    clock) and when it arrived (``received``, the robot's clock). With the echo's own stamp
    and arrival these are the four times of an NTP exchange: the operator's estimate of the
    robot's clock and of the link's delays (:class:`ClockEstimator`). With sessions a station
    echoes the robot's packets the same way (``sent`` the robot's stamp, ``received`` its
    arrival on the station's clock): the robot's own round trip (:class:`RoundTrips`)."""

    sent: float
    received: float


@dataclass(frozen=True, slots=True)
class VideoFragment:
    """One datagram's share of an encoded :class:`VideoFrame` (native profile)."""

    frame_id: int
    index: int
    count: int
    data: bytes
    stream: int = 0  # the camera stream: frames of each stream are assembled apart


Message = (
    VelocityCommand
    | WheelSpeedCommand
    | TankCommand
    | FreeLookCommand
    | PanTiltCommand
    | ArmVelocityCommand
    | GripperCommand
    | ModeChange
    | LinearDriveStart
    | LinearDriveStop
    | TrajectoryStart
    | TrajectoryStop
    | GoalStart
    | GoalStop
    | EStop
    | Relocalize
    | SetTransmission
    | SetTransmissionSpacing
    | Heartbeat
    | ControlRequest
    | ControlRelease
    | ControlGrant
    | ControlReject
    | ModeRefusal
    | SessionOpen
    | SessionChallenge
    | SessionConfirm
    | MapInfo
    | MapRequest
    | MapChunk
    | Telemetry
    | PositionReport
    | ReceptionReport
    | VideoFrame
    | VideoFragment
    | VideoFeedback
    | ClockEcho
)

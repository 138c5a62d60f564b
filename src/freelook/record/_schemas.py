"""ROS 2 message definitions written into every recording (no ROS install needed).

Standard types use the exact ROS 2 Humble definitions so that any ROS 2 tool decodes them;
freelook's own types live in the ``freelook_msgs`` package and are documented in
``docs/recording.md``. :func:`full_definition` assembles a definition with its dependencies in
the concatenated ``ros2msg`` form MCAP stores.
"""

from __future__ import annotations

import re

__all__ = ["DEFINITIONS", "full_definition"]

_SEPARATOR = "=" * 80

#: Each type's own definition, without dependencies.
DEFINITIONS: dict[str, str] = {
    "builtin_interfaces/Time": "int32 sec\nuint32 nanosec",
    "std_msgs/Header": "builtin_interfaces/Time stamp\nstring frame_id",
    "geometry_msgs/Vector3": "float64 x\nfloat64 y\nfloat64 z",
    "geometry_msgs/Point": "float64 x\nfloat64 y\nfloat64 z",
    "geometry_msgs/Quaternion": "float64 x\nfloat64 y\nfloat64 z\nfloat64 w",
    "geometry_msgs/Pose": "geometry_msgs/Point position\ngeometry_msgs/Quaternion orientation",
    "geometry_msgs/Twist": "geometry_msgs/Vector3 linear\ngeometry_msgs/Vector3 angular",
    "geometry_msgs/PoseWithCovariance": "geometry_msgs/Pose pose\nfloat64[36] covariance",
    "geometry_msgs/TwistWithCovariance": "geometry_msgs/Twist twist\nfloat64[36] covariance",
    "geometry_msgs/Transform": (
        "geometry_msgs/Vector3 translation\ngeometry_msgs/Quaternion rotation"
    ),
    "geometry_msgs/TransformStamped": (
        "std_msgs/Header header\nstring child_frame_id\ngeometry_msgs/Transform transform"
    ),
    "nav_msgs/Odometry": (
        "std_msgs/Header header\nstring child_frame_id\n"
        "geometry_msgs/PoseWithCovariance pose\ngeometry_msgs/TwistWithCovariance twist"
    ),
    "sensor_msgs/LaserScan": (
        "std_msgs/Header header\nfloat32 angle_min\nfloat32 angle_max\nfloat32 angle_increment\n"
        "float32 time_increment\nfloat32 scan_time\nfloat32 range_min\nfloat32 range_max\n"
        "float32[] ranges\nfloat32[] intensities"
    ),
    "sensor_msgs/Range": (
        "uint8 ULTRASOUND=0\nuint8 INFRARED=1\nstd_msgs/Header header\nuint8 radiation_type\n"
        "float32 field_of_view\nfloat32 min_range\nfloat32 max_range\nfloat32 range"
    ),
    "sensor_msgs/CompressedImage": "std_msgs/Header header\nstring format\nuint8[] data",
    # Foxglove's CompressedVideo in its ROS 2 form (what its Image and 3D panels play)
    "foxglove_msgs/CompressedVideo": (
        "builtin_interfaces/Time timestamp\nstring frame_id\nuint8[] data\nstring format"
    ),
    "sensor_msgs/JointState": (
        "std_msgs/Header header\nstring[] name\nfloat64[] position\nfloat64[] velocity\n"
        "float64[] effort"
    ),
    "tf2_msgs/TFMessage": "geometry_msgs/TransformStamped[] transforms",
    "std_msgs/String": "string data",
    "nav_msgs/MapMetaData": (
        "builtin_interfaces/Time map_load_time\nfloat32 resolution\nuint32 width\nuint32 height\n"
        "geometry_msgs/Pose origin"
    ),
    "nav_msgs/OccupancyGrid": ("std_msgs/Header header\nnav_msgs/MapMetaData info\nint8[] data"),
    # freelook's own messages.
    "freelook_msgs/Packet": (
        "uint8 OPERATOR_TO_ROBOT=0\nuint8 ROBOT_TO_OPERATOR=1\n"
        "uint8 direction\n"
        "string wire\n"
        "uint32 stream\n"
        "uint32 sequence\n"
        "builtin_interfaces/Time send_stamp\n"
        "builtin_interfaces/Time receive_stamp\n"
        "bool accepted\n"
        "string kind\n"
        "string decoded\n"
        "uint8[] data"
    ),
    "freelook_msgs/Mode": ("std_msgs/Header header\nstring mode\nbool estop\nstring controller"),
    "freelook_msgs/SafetyEvent": (
        "std_msgs/Header header\nstring kind\nstring detail\nint8 zone\nfloat32 scale"
    ),
    "freelook_msgs/LinkStats": (
        "std_msgs/Header header\nstring direction\nuint32 packets_received\nuint32 packets_lost\n"
        "uint32 duplicates\nuint32 reordered\nuint32 crc_failures\nuint32 auth_failures\n"
        "float32 rx_rate_hz\nfloat32 tx_rate_hz\nfloat32 drop_percent\nfloat32 latency_s\n"
        "uint32 packets_sent"
    ),
    "freelook_msgs/Reference": (
        "std_msgs/Header header\nfloat64 x\nfloat64 y\nfloat64 theta\nfloat64 v\nfloat64 omega"
    ),
}

_FIELD_TYPE = re.compile(r"^([A-Za-z0-9_]+/[A-Za-z0-9_]+)(\[\d*\])?\s")


def _dependencies(name: str) -> list[str]:
    deps = []
    for line in DEFINITIONS[name].splitlines():
        match = _FIELD_TYPE.match(line)
        if match:
            deps.append(match.group(1))
    return deps


def full_definition(name: str) -> str:
    """The definition of ``name`` (``pkg/Type``) followed by every dependency, depth first."""
    if name not in DEFINITIONS:
        raise KeyError(f"no message definition for {name!r}")
    order: list[str] = []

    def visit(typename: str) -> None:
        for dep in _dependencies(typename):
            if dep not in order:
                order.append(dep)
                visit(dep)

    visit(name)
    parts = [DEFINITIONS[name]]
    parts.extend(f"{_SEPARATOR}\nMSG: {dep}\n{DEFINITIONS[dep]}" for dep in order)
    return "\n".join(parts) + "\n"

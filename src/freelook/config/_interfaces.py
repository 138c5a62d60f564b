"""The sections of a robot description that say how freelook reaches the robot: its link's
periods, JAUS (``--hardware judp://``) and ROS 2 (``--hardware ros2``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from freelook.config._strict import Strict

__all__ = ["JausConfig", "LinkConfig", "Ros2Config", "Ros2Topics"]


class LinkConfig(Strict):
    """Link and transmission defaults."""

    control_period: float = Field(default=0.02, ge=0.001, le=1.0, description="s")
    # spacings within what a peer may ask for on the link (freelook.link.SPACING_LIMITS)
    robot_tx_spacing: float = Field(default=0.031, ge=0.005, le=2.0, description="s")
    operator_tx_spacing: float = Field(default=0.047, ge=0.005, le=2.0, description="s")


class JausConfig(Strict):
    """How freelook drives the robot over JAUS (``--hardware judp://HOST:PORT``): its own
    JAUS id, the authority it asks control with, and what the robot's JAUS side lacks."""

    authority: int = Field(default=5, ge=0, le=255, description="RequestControl authority")
    subsystem: int = Field(default=150, ge=1, le=65534, description="freelook's own JAUS id")
    node: int = Field(default=1, ge=1, le=254)
    component: int = Field(default=1, ge=1, le=254)
    arm_position_sensing: bool = Field(
        default=True, description="false: no joint positions; the arm moves in timed chunks"
    )
    arm_chunk: float = Field(default=0.2, gt=0, le=2.0, description="s per timed arm move")
    arm_joint_speed_deg: float = Field(
        default=15.0, gt=0, le=360.0, description="presumed joint speed at full effort, deg/s"
    )


_TOPIC = r"^~?/?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$"
_JOINT = r"^[A-Za-z_][A-Za-z0-9_./-]{0,127}$"


class Ros2Topics(Strict):
    """The topics of a ROS 2 robot, relative to its namespace (the usual names by default).

    An empty name means the robot has no such topic: the program goes without that device.
    """

    cmd_vel: str = Field(default="cmd_vel", pattern=_TOPIC)
    odom: str = Field(default="odom", pattern=_TOPIC)
    scan: str = Field(default="scan", pattern=r"^$|" + _TOPIC)
    imu: str = Field(default="imu/data", pattern=r"^$|" + _TOPIC)
    #: ``…/compressed`` is a ``sensor_msgs/CompressedImage`` (JPEG), anything else an ``Image``
    camera: str = Field(default="camera/image_raw/compressed", pattern=r"^$|" + _TOPIC)
    joint_states: str = Field(default="joint_states", pattern=r"^$|" + _TOPIC)
    battery: str = Field(default="battery_state", pattern=r"^$|" + _TOPIC)
    pan_tilt_command: str = Field(default="pan_tilt_controller/commands", pattern=_TOPIC)
    #: the arm's joints (an ``[arm]``), as its controller takes them
    arm_command: str = Field(default="arm_controller/commands", pattern=_TOPIC)
    #: the gripper's finger position (half the opening), as its controller takes it
    gripper_command: str = Field(default="gripper_controller/commands", pattern=_TOPIC)
    #: a ``nav_msgs/OccupancyGrid`` to take as the robot's map (transient local, as map_server
    #: and slam_toolbox publish it), followed as it changes; "": the map file of ``--map``
    map: str = Field(default="", pattern=r"^$|" + _TOPIC)
    #: the pose (``geometry_msgs/PoseWithCovarianceStamped``) with ``localization = "ros"``
    pose: str = Field(default="amcl_pose", pattern=_TOPIC)
    #: freelook's state for ROS tools: ``diagnostic_msgs/DiagnosticArray`` (``/diagnostics``
    #: is where diagnostic aggregators look) and small std_msgs under ``state``; "": none
    diagnostics: str = Field(default="/diagnostics", pattern=r"^$|" + _TOPIC)
    state: str = Field(default="freelook", pattern=r"^$|" + _TOPIC)
    #: an external e-stop (``std_msgs/Bool``): true engages it, latched; "": none
    estop: str = Field(default="", pattern=r"^$|" + _TOPIC)


class Ros2Config(Strict):
    """How the robot speaks ROS 2 (``[ros2]``): topics, message kinds, QoS, joints, timing.

    The sensors' poses on the base are the description's own (``[laser]``, ``[pan_tilt]``),
    except a laser's when ``/tf_static`` gives its scans' frame a level pose on ``base_frame``
    (with ``tf2_msgs`` installed: ``tools/build_tf2_msgs.py``); the log says which it took.
    """

    topics: Ros2Topics = Ros2Topics()
    #: ``geometry_msgs/TwistStamped`` on ``cmd_vel`` (Jazzy's diff_drive_controller), else Twist
    cmd_vel_stamped: bool = False
    base_frame: str = Field(default="base_link", pattern=_JOINT)
    #: the laser's ``frame_id`` scans must carry ("": any)
    scan_frame: str = Field(default="", pattern=r"^$|" + _JOINT)
    sensor_qos: Literal["best_effort", "reliable"] = "best_effort"
    pan_joint: str = Field(default="pan_joint", pattern=_JOINT)
    tilt_joint: str = Field(default="tilt_joint", pattern=_JOINT)
    #: ``velocities``: a forward command controller's ``std_msgs/Float64MultiArray`` of joint
    #: rates (pan, then tilt); ``trajectory``: a ``trajectory_msgs/JointTrajectory`` point
    pan_tilt_command: Literal["velocities", "trajectory"] = "velocities"
    #: the arm the same way: joint rates in the URDF's order, or a trajectory point; the
    #: gripper's finger position goes as a one-value ``Float64MultiArray`` or a trajectory point
    arm_command: Literal["velocities", "trajectory"] = "velocities"
    startup_timeout: float = Field(
        default=5.0, gt=0, le=60.0, description="s to wait for odometry and the scan at start"
    )
    quiet_timeout: float = Field(
        default=0.5, gt=0, le=5.0, description="s a required topic may be silent mid-run"
    )
    #: odometry, scans and IMU readings stamped more than this before the robot computer's
    #: clock are refused (a replayed or dead base's), and so are those stamped after it by more
    #: than ``stamp_lead``: a base on another computer needs its clock synchronised (chrony)
    stamp_age: float = Field(default=0.5, gt=0, le=10.0, description="s")
    stamp_lead: float = Field(default=0.1, ge=0, le=10.0, description="s")
    #: a scan with no finite range in some sector this wide is blind, not clear (a laser
    #: reporting all-inf or NaN there, or a forged scan); 0 turns the check off (open ground,
    #: where a sector may truly see nothing in range)
    blind_sector_deg: float = Field(default=45.0, ge=0, le=360.0, description="deg")
    #: where the pose comes from: freelook's own MCL on the map, or the robot's own
    #: localization (AMCL, slam_toolbox) on ``[ros2.topics] pose``
    localization: Literal["freelook", "ros"] = "freelook"
    #: a ROS pose whose position spread (the square root of the larger of its x and y
    #: variances) or heading spread is beyond these is not trusted: the map's walls then stop
    #: acting in safety, as during freelook's own global search
    pose_std_xy: float = Field(default=0.3, gt=0, le=10.0, description="m")
    pose_std_theta_deg: float = Field(default=15.0, gt=0, le=180.0, description="deg")
    #: the ROS pose goes quiet: after this much driving, or turning, since its newest message
    #: it is not trusted (AMCL publishes after every 0.25 m or 11° by default, and not at all
    #: standing still, so silence alone says nothing)
    pose_travel: float = Field(default=1.0, gt=0, le=100.0, description="m")
    pose_turn_deg: float = Field(default=90.0, gt=0, le=3600.0, description="deg")
    #: the largest map taken from ``[ros2.topics] map``, in cells: a larger grid is refused
    #: before it is copied (the cockpit's map link carries up to 2048 × 2048)
    map_max_cells: int = Field(default=4096 * 4096, ge=1, le=50_000_000)
    #: publish freelook's estimate of the base (odometry and gyro, in the odometry's frame)
    #: as ``odom`` → ``base_frame`` on ``/tf`` (with ``tf2_msgs`` installed), unless another
    #: node already gives ``base_frame`` a parent there or on ``/tf_static``
    publish_tf: bool = True
    #: how often freelook publishes its state (``diagnostics``, ``state``)
    state_period: float = Field(default=0.2, ge=0.02, le=10.0, description="s")

"""The robot description a recording carries on ``/robot_description``: a URDF from the config.

ROS 2 systems publish the robot's URDF (``robot_state_publisher``) so that viewers draw the
robot; freelook writes one from its robot configuration: the chassis as a box over its
footprint, the wheels, the laser, and the camera on its pan (and tilt) joints at the mount
(L1 forward, L2 left), with the frames the recording's ``/tf`` uses (``base_link``,
``laser``, ``camera``).
"""

from __future__ import annotations

import math
from xml.sax.saxutils import quoteattr

from freelook.config import RobotConfig

__all__ = ["robot_urdf"]

_BODY_HEIGHT = 0.25  # m: the config gives the footprint, not the height


def _xyz(x: float, y: float, z: float) -> str:
    return f"{x:.4f} {y:.4f} {z:.4f}"


def _link(name: str, geometry: str, xyz: str, colour: str) -> str:
    return (
        f'  <link name="{name}">\n'
        f'    <visual><origin xyz="{xyz}" rpy="0 0 0"/><geometry>{geometry}</geometry>'
        f'<material name="{name}_colour"><color rgba="{colour}"/></material></visual>\n'
        f"  </link>\n"
    )


def _fixed(name: str, parent: str, child: str, xyz: str, rpy: str = "0 0 0") -> str:
    return (
        f'  <joint name="{name}" type="fixed"><parent link="{parent}"/>'
        f'<child link="{child}"/><origin xyz="{xyz}" rpy="{rpy}"/></joint>\n'
    )


def robot_urdf(config: RobotConfig) -> str:
    """A URDF for ``config``: chassis, wheels, laser and the camera on its pan-tilt unit."""
    fp, drive = config.footprint, config.drive
    radius = drive.wheel_diameter / 2
    parts = [
        '<?xml version="1.0"?>\n',
        f"<robot name={quoteattr(config.name)}>\n",
        _link(
            "base_link",
            f'<box size="{_xyz(fp.length, fp.width, _BODY_HEIGHT)}"/>',
            _xyz(fp.center_forward, 0.0, radius + _BODY_HEIGHT / 2),
            "0.75 0.2 0.15 1",
        ),
    ]
    for side, y in (("left", drive.track_width / 2), ("right", -drive.track_width / 2)):
        parts.append(
            _link(
                f"{side}_wheel",
                f'<cylinder radius="{radius:.4f}" length="0.05"/>',
                "0 0 0",
                "0.1 0.1 0.1 1",
            )
        )
        parts.append(
            _fixed(
                f"{side}_wheel_joint",
                "base_link",
                f"{side}_wheel",
                _xyz(0.0, y, radius),
                f"{math.pi / 2:.4f} 0 0",
            )
        )
    if config.laser is not None:
        laser = config.laser
        parts.append(
            _link("laser", '<cylinder radius="0.04" length="0.07"/>', "0 0 0", "0.2 0.2 0.2 1")
        )
        parts.append(
            _fixed(
                "laser_joint",
                "base_link",
                "laser",
                _xyz(laser.mount_forward, laser.mount_left, radius + _BODY_HEIGHT + 0.035),
            )
        )
    pt = config.pan_tilt
    if pt is not None:
        pan_type = "continuous" if pt.pan_limits_deg is None else "revolute"
        lo, hi = (math.radians(v) for v in (pt.pan_limits_deg or (-180.0, 180.0)))
        tlo, thi = (math.radians(v) for v in pt.tilt_limits_deg)
        parts.append(
            _link("camera_pan", '<cylinder radius="0.03" length="0.04"/>', "0 0 0", "0.3 0.3 0.3 1")
        )
        parts.append(
            f'  <joint name="camera_pan_joint" type="{pan_type if pt.has_pan else "fixed"}">'
            f'<parent link="base_link"/><child link="camera_pan"/>'
            f'<origin xyz="{_xyz(pt.mount_forward, pt.mount_left, pt.mount_height)}" rpy="0 0 0"/>'
            f'<axis xyz="0 0 1"/><limit lower="{lo:.4f}" upper="{hi:.4f}" effort="10" '
            f'velocity="{pt.max_pan_rate:.4f}"/></joint>\n'
        )
        parts.append(_link("camera", '<box size="0.06 0.12 0.05"/>', "0 0 0", "0.1 0.3 0.8 1"))
        parts.append(
            f'  <joint name="camera_tilt_joint" type="{"revolute" if pt.has_tilt else "fixed"}">'
            f'<parent link="camera_pan"/><child link="camera"/>'
            f'<origin xyz="0 0 0.045" rpy="0 0 0"/><axis xyz="0 -1 0"/>'
            f'<limit lower="{tlo:.4f}" upper="{thi:.4f}" effort="10" '
            f'velocity="{math.radians(pt.max_tilt_rate_deg):.4f}"/></joint>\n'
        )
    parts.append("</robot>\n")
    return "".join(parts)

"""The robot's telemetry (sans-I/O): what the robot knows and did, as one message.

Sensors as the HAL last gave them, the pose as the estimator has it, the command as the last
control cycle left it after safety, the mode, who holds control and the link's own figures.
"""

from __future__ import annotations

from freelook.hal import RobotHardware
from freelook.link import ControlArbiter, LinkStatsReport, Telemetry
from freelook.robot._arm import RobotArm
from freelook.robot._autonomy import RobotAutonomy
from freelook.robot._cycle import CycleOutput
from freelook.robot._estimator import StateEstimator
from freelook.types import Mode

__all__ = ["TelemetryView"]


class TelemetryView:
    """Telemetry for one robot, from its HAL, estimator, arbiter, arm and task."""

    def __init__(
        self,
        hardware: RobotHardware,
        estimator: StateEstimator,
        arbiter: ControlArbiter,
        arm: RobotArm | None,
        autonomy: RobotAutonomy | None,
    ) -> None:
        self.hw = hardware
        self.estimator = estimator
        self.arbiter = arbiter
        self.arm = arm
        self.autonomy = autonomy

    def telemetry(
        self,
        now: float,
        out: CycleOutput,
        mode: Mode,
        estop: bool,
        link: LinkStatsReport,
    ) -> Telemetry:
        """The telemetry at ``now``, after the control cycle that decided ``out``."""
        hw, estimator = self.hw, self.estimator
        laser = hw.laser.latest() if hw.laser else None
        sonar = hw.sonar.latest() if hw.sonar else None
        bumpers = hw.bumpers.latest() if hw.bumpers else None
        pt_state = hw.pan_tilt.state() if hw.pan_tilt else None
        return Telemetry(
            stamp=now,
            odom=estimator.odometry.pose,
            pose=estimator.pose,
            v=estimator.odometry.v,
            omega=estimator.yaw_rate,
            cmd_v=out.v,
            cmd_omega=out.omega,
            pan=pt_state.pan if pt_state else 0.0,
            tilt=pt_state.tilt if pt_state else 0.0,
            laser_angle_min=float(laser.bearings[0]) if laser is not None else 0.0,
            laser_angle_increment=float(laser.bearings[1] - laser.bearings[0])
            if laser is not None
            else 0.0,
            laser_range_max=laser.range_max if laser is not None else 0.0,
            # (lasers merged: the first one's sweep, the fan the cockpit draws)
            laser=tuple(laser.ranges[: laser.sweep_beams].tolist()) if laser is not None else (),
            sonar=tuple(sonar.ranges.tolist()) if sonar is not None else (),
            bumper_front=bool(bumpers and bumpers.front),
            bumper_rear=bool(bumpers and bumpers.rear),
            safety_zone=out.zone,
            safety_scale=out.scale,
            safety_flags=out.flags,
            mode=mode,
            estop=estop,
            localizing=not estimator.pose_trusted,
            controller=self.arbiter.holder(now) or 0,
            link=link,
            arm=self.arm.telemetry() if self.arm is not None else None,
            autonomy=self.autonomy.telemetry(mode != Mode.AUTONOMY)
            if self.autonomy is not None
            else None,
        )

"""State estimation of the robot program: odometry, heading filter and localization fusion.

Each control cycle reads the encoders (or a base's own odometer) and the gyro, advances
odometry and the heading filter, and carries the localized pose forward by the odometry
increment. Localization (MCL) runs in three steps so a runtime may run the filter elsewhere:
a job taken on the control path (the newest scan and the odometry since the last job), the
filter's work (touching nothing but the filter), and the fusion of its result, which carries
the motion since the scan onto a late estimate.
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from freelook.config import RobotConfig
from freelook.estimation import (
    HeadingKalmanFilter,
    MonteCarloLocalization,
    Odometry,
    PoseEstimate,
    TrackWidthLearner,
)
from freelook.geometry import Pose, wrap_angle
from freelook.hal import EncoderSample, OdometrySample, PoseSample, RobotHardware
from freelook.maps import World

__all__ = ["LocalizationJob", "LocalizationResult", "StateEstimator"]

#: s between two gyro samples, or since the last, beyond which the gyro is taken to be quiet
#: and a base's own odometry turns the robot (by the track width learnt while it was there)
GYRO_QUIET = 0.25


@dataclass(frozen=True, slots=True)
class LocalizationJob:
    """One scan's work for the particle filter, taken on the control path."""

    ranges: npt.NDArray[np.float64]
    increment: Pose  # odometry since the last job: forward, left, turn
    force: bool  # update even without enough motion (a search standing still)
    search: bool  # start a global search first
    pose: Pose  # the robot's pose when the scan was taken
    stamp: float
    scan_stamp: float = math.nan
    #: each range's bearing and origin (x, y) in the robot frame, as the scan says (None:
    #: the description's fan)
    beams: (
        tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]] | None
    ) = None


@dataclass(frozen=True, slots=True)
class LocalizationResult:
    """What the particle filter made of one job."""

    job: LocalizationJob
    #: the cloud's mean and spread (None while a search runs: its cloud is not yet a pose,
    #: and a cloud of up to 20,000 poses is not summed for nothing)
    estimate: PoseEstimate | None
    searching: bool


class EncoderRate(NamedTuple):
    """The yaw rate the encoders measured since their previous reading."""

    rate: float  # rad/s
    dt: float  # s, between the two readings
    standing: bool  # neither track moved


class StateEstimator:
    """Odometry, heading and localized pose of one robot, from its HAL and its map."""

    def __init__(
        self,
        config: RobotConfig,
        hardware: RobotHardware,
        robot_map: World | None,
        *,
        start_pose: tuple[float, float, float],
        use_gyro: bool,
        use_localization: bool,
        seed: int,
    ) -> None:
        self.config = config
        self.hw = hardware
        drive = config.drive
        self.settings = config.localization
        self.odometry = Odometry(
            drive.encoder_counts_per_rev, drive.wheel_diameter, drive.track_width, start_pose
        )
        self.mcl: MonteCarloLocalization | None = None
        self._seed = seed
        if (
            use_localization
            and hardware.localization is None
            and robot_map is not None
            and hardware.laser is not None
            and config.laser is not None
        ):
            self.mcl = MonteCarloLocalization.for_robot(robot_map, config, seed=seed)
            self.mcl.initialize(
                *start_pose,
                std_xy=self.settings.initial_std_xy,
                std_theta=self.settings.initial_std_theta,
            )
        # a start the laser will check is known only as well as the robot was put down (the
        # localization's spread), so the first fixes, standing still, set the heading; with
        # nothing to check it against, the given start heading is the reference itself
        self.heading = (
            HeadingKalmanFilter.for_robot(
                config,
                start_pose[2],
                self.settings.initial_std_theta
                if self.mcl is not None
                else HeadingKalmanFilter.GIVEN_HEADING_STD,
            )
            if (use_gyro and hardware.gyro)
            else None
        )
        self.pose = Pose(*start_pose)  # localized pose (map frame)
        # False while a global search runs, and (the robot's own localization) until its
        # first pose, while its spread is too large, or once it has gone quiet
        self.pose_trusted = hardware.localization is None
        #: why the robot's own pose is not trusted ("" while it is, or with none)
        self.pose_doubt = "no pose yet" if hardware.localization is not None else ""
        self._last_pose_stamp = -math.inf
        self._since_pose = (0.0, 0.0)  # odometry's travel (m) and turn (rad) since its pose
        self._last_search_update = -math.inf
        self._search_requested = False
        self._searching = False
        self._mcl_odom = Pose(*start_pose)
        self._last_job_scan = -math.inf
        # (stamp, x, y, θ) of recent odometry, to pair each scan with the odometry of its time
        self._odometry_history: deque[tuple[float, float, float, float]] = deque(maxlen=64)
        self._last_encoders: EncoderSample | None = None
        self._last_odometer: OdometrySample | None = None
        self._last_gyro_stamp: float | None = None
        self._last_gyro_angle: float | None = None
        # the heading filter's turn since the base's last odometry sample: a base whose
        # odometry comes slower than the control cycle gets every cycle's turn with its next
        # sample (a cycle without one dropped it: half the turn at 24 Hz odometry)
        self._turn_since_odometer = 0.0
        self._gyro_gap = 0.0  # the longest gap between gyro samples since that sample
        #: the effective track width of a base's own odometry, learnt from the gyro while it
        #: turns: the base's turns while the gyro is quiet are corrected by it
        self.track_width = (
            TrackWidthLearner()
            if self.heading is not None and config.estimation.learn_track_width
            else None
        )

    @property
    def effective_track_width(self) -> float:
        """The track width that makes the base's own odometry turn as the gyro says, m."""
        ratio = self.track_width.ratio if self.track_width is not None else 1.0
        return ratio * self.config.drive.track_width

    @property
    def yaw_rate(self) -> float:
        """The best yaw rate estimate: the heading filter's, else the wheels'."""
        return self.heading.rate if self.heading is not None else self.odometry.omega

    # -- each control cycle ------------------------------------------------------------------

    def update(self) -> float:
        """Read the sensors, advance odometry and heading; returns the yaw rate estimate."""
        hw = self.hw
        encoder = self._encoder_rate()
        heading_increment = None
        gyro = hw.gyro.latest() if hw.gyro else None
        heading = self.heading
        if (
            heading is not None
            and gyro is not None
            and (self._last_gyro_stamp is None or gyro.stamp > self._last_gyro_stamp)
        ):
            dt = gyro.stamp - self._last_gyro_stamp if self._last_gyro_stamp is not None else 0.0
            self._last_gyro_stamp = gyro.stamp
            self._gyro_gap = max(self._gyro_gap, dt)
            rate = gyro.rate
            if gyro.angle is not None:
                # the mean rate since the last read, not the newest sample held over the gap
                if self._last_gyro_angle is not None and dt > 0:
                    rate = (gyro.angle - self._last_gyro_angle) / dt
                self._last_gyro_angle = gyro.angle
            before = heading.heading
            if dt > 0:
                heading.predict(rate, dt)
                if encoder is not None:
                    # over the encoders' own interval: the filter pairs it with the gyro's
                    heading.update_encoder_rate(encoder.rate, encoder.dt, standing=encoder.standing)
            heading_increment = wrap_angle(heading.heading - before)
            yaw_rate = heading.rate
        elif encoder is not None:
            yaw_rate = encoder.rate
        else:
            # neither the filter nor the odometry has moved since the cycle began
            yaw_rate = self.yaw_rate
        enc = hw.encoders.latest() if hw.encoders else None
        odometry = self.odometry
        before_pose = Pose(*odometry.pose)
        if enc is not None:
            odometry.advance_counts(enc.left, enc.right, enc.stamp, heading_increment)
            self._moved(before_pose, enc.stamp)
        elif hw.odometer is not None:
            yaw_rate = self._odometer(before_pose, heading_increment, yaw_rate)
        if hw.localization is not None:
            self._robot_pose(hw.localization.latest())
        return yaw_rate

    def _robot_pose(self, sample: PoseSample | None) -> None:
        """The robot's own localization: its newest pose, carried to now by the odometry since
        it held; not trusted while its spread is beyond ``[ros2] pose_std_xy`` or
        ``pose_std_theta_deg``, nor once the robot drove ``pose_travel`` or turned
        ``pose_turn_deg`` since it (it went quiet), as a global search is not."""
        limits = self.config.ros2
        if sample is not None and sample.stamp > self._last_pose_stamp:
            self._last_pose_stamp = sample.stamp
            if not (
                sample.std_xy <= limits.pose_std_xy
                and sample.std_theta <= math.radians(limits.pose_std_theta_deg)
            ):
                self.pose_trusted = False
                self.pose_doubt = (
                    f"the robot's pose is spread {sample.std_xy:.2f} m, "
                    f"{math.degrees(sample.std_theta):.0f}° (beyond {limits.pose_std_xy:g} m, "
                    f"{limits.pose_std_theta_deg:g}°)"
                )
                return
            since = self._odometry_at(sample.stamp).relative(Pose(*self.odometry.pose))
            x, y, theta = Pose(sample.x, sample.y, sample.theta).compose(since)
            if self.heading is not None:
                std_theta = max(sample.std_theta, math.radians(0.5))
                if abs(wrap_angle(theta - self.pose.theta)) >= math.radians(
                    self.settings.jump_angle_deg
                ):
                    self.heading.reset_heading(theta, std_theta)
                else:
                    self.heading.correct_heading(theta, std_theta**2)
            self.pose = Pose(x, y, theta)
            self._since_pose = (0.0, 0.0)
            self.pose_trusted = True
            self.pose_doubt = ""
            return
        travel, turn = self._since_pose
        if self.pose_trusted and (
            travel > limits.pose_travel or turn > math.radians(limits.pose_turn_deg)
        ):
            self.pose_trusted = False
            self.pose_doubt = (
                f"the robot's pose went quiet: none for {travel:.2f} m and "
                f"{math.degrees(turn):.0f}° of driving"
            )

    def _encoder_rate(self) -> EncoderRate | None:
        """The yaw rate from the encoders since their last reading (None without a new
        reading)."""
        enc = self.hw.encoders.latest() if self.hw.encoders else None
        if enc is None or (
            self._last_encoders is not None and enc.stamp <= self._last_encoders.stamp
        ):
            return None
        previous = self._last_encoders
        self._last_encoders = enc
        if previous is None:
            return None
        dt = enc.stamp - previous.stamp
        counts = (enc.right - previous.right) - (enc.left - previous.left)
        rate = counts * self.odometry.metres_per_count / self.config.drive.track_width / dt
        return EncoderRate(rate, dt, enc.left == previous.left and enc.right == previous.right)

    def _odometer(self, before: Pose, heading_increment: float | None, yaw_rate: float) -> float:
        """Odometry from a base that integrates its own (a Pioneer's SIP pose, a ROS base's
        ``odom``), at whatever rate it comes: with a heading filter, the turn between two of
        its samples is the filter's over every cycle between them (the base's own turn is
        the least trustworthy part of its odometry: tracks and skid-steer wheels slip), and
        the base's step is bent to that turn; while the gyro is quiet, the base's own turn
        corrected by the track width learnt from the gyro."""
        assert self.hw.odometer is not None
        if heading_increment is not None:
            self._turn_since_odometer += heading_increment
        sample = self.hw.odometer.latest()
        if sample is None:
            return yaw_rate
        previous = self._last_odometer
        if previous is not None and sample.stamp <= previous.stamp:
            return yaw_rate  # nothing new (or a sample older than the last, refused)
        self._last_odometer = sample
        gyro_turn, gap = self._turn_since_odometer, self._gyro_gap
        self._turn_since_odometer = self._gyro_gap = 0.0
        if previous is None:
            return yaw_rate  # the first sample: where the base starts from
        reading = Pose(sample.x, sample.y, sample.theta)
        # the base's motion, in its own frame
        step = Pose(previous.x, previous.y, previous.theta).relative(reading)
        base_rate = (sample.v_right - sample.v_left) / self.config.drive.track_width
        heading, learner = self.heading, self.track_width
        if heading is not None:
            last_gyro = self._last_gyro_stamp
            live = (
                last_gyro is not None
                and gap <= GYRO_QUIET
                and sample.stamp - last_gyro <= GYRO_QUIET
            )
            if live:
                turn = gyro_turn
                if learner is not None:
                    learner.observe(step.theta, gyro_turn, sample.stamp - previous.stamp)
            else:
                # the gyro is quiet: the base's own turn by the learnt width, and the filter
                # turned with it (its uncertainty grown by the width's)
                turn = learner.corrected(step.theta) if learner is not None else step.theta
                spread = learner.ratio_std if learner is not None else 1.0
                std = math.hypot(math.sqrt(float(heading.P[0, 0])), spread * abs(turn))
                heading.reset_heading(heading.heading + turn, std)
                yaw_rate = learner.corrected(base_rate) if learner is not None else base_rate
            # the base integrated its step along its own turn: bend it to the true one
            bend = 0.5 * wrap_angle(turn - step.theta)
            c, s = math.cos(bend), math.sin(bend)
            step = Pose(c * step.x - s * step.y, s * step.x + c * step.y, turn)
        self.odometry.advance(step, sample.stamp, (sample.v_left + sample.v_right) / 2)
        self._moved(before, sample.stamp)
        return base_rate if heading is None else yaw_rate

    def _moved(self, before: Pose, stamp: float) -> None:
        now = self.odometry.pose
        self._odometry_history.append((stamp, *now))
        # carry the localized pose forward by the odometry increment
        step = before.relative(now)
        self.pose = self.pose.compose(step)
        travel, turn = self._since_pose
        self._since_pose = (travel + math.hypot(step.x, step.y), turn + abs(step.theta))

    def use_map(self, mcl: MonteCarloLocalization | None) -> None:
        """Localize on a new map from now on (its filter made by :meth:`filter_for`; None:
        keep the one in use, as with the robot's own localization)."""
        if mcl is not None and self.mcl is not None:
            self.mcl = mcl

    def filter_for(self, robot_map: World) -> MonteCarloLocalization | None:
        """A particle filter on ``robot_map`` around the pose now (None: this estimator runs
        none); slow on a large map, so a runtime makes it off the control path."""
        if self.mcl is None:
            return None
        mcl = MonteCarloLocalization.for_robot(robot_map, self.config, seed=self._seed)
        x, y, theta = self.pose
        mcl.initialize(x, y, theta, std_xy=0.1, std_theta=0.05)
        return mcl

    # -- localization ------------------------------------------------------------------------

    def on_scan(self, now: float) -> bool:
        """A new laser scan: run localization now; returns whether the filter updated."""
        job = self.localization_job(now)
        if job is None:
            return False
        result = self.localize(job)
        if result is None:
            return False
        self.apply_localization(result)
        return True

    def localization_job(self, now: float) -> LocalizationJob | None:
        """Take the newest scan and the odometry since the last job (on the control path).

        Each job carries the motion since the previous one, so scans skipped while a job runs
        elsewhere lose nothing but their own evidence.
        """
        if self.mcl is None or self.hw.laser is None:
            return None
        scan = self.hw.laser.latest()
        if scan is None:
            return None
        if scan.stamp <= self._last_job_scan:
            return None  # already used
        self._last_job_scan = scan.stamp
        # odometry when the scan was taken (a scan newer than the last control cycle takes
        # that cycle's odometry); the pose then is the pose now moved back by the odometry since
        at_scan = self._odometry_at(scan.stamp)
        since = at_scan.relative(self.odometry.pose)
        pose_at_scan = self.pose.compose(since.inverse())
        increment = self._mcl_odom.relative(at_scan)
        self._mcl_odom = at_scan
        search = self._search_requested
        self._search_requested = False
        # a search goes on with the robot standing still, a few scans a second; so does a poor
        # fit, which the filter takes for a wrong pose if it lasts
        spacing = self.settings.search_update_spacing
        doubtful = self._searching or self.mcl.fits_poorly
        force = doubtful and now - self._last_search_update >= spacing
        n = len(scan.ranges)
        geometry = (scan.bearings, scan.origin_x, scan.origin_y)
        beams = geometry if all(len(a) == n for a in geometry) else None
        return LocalizationJob(
            scan.ranges, increment, force, search, pose_at_scan, now, scan.stamp, beams
        )

    def _odometry_at(self, stamp: float) -> Pose:
        """Odometry at ``stamp``, interpolated between control cycles (held at the newest)."""
        history = self._odometry_history
        if not history or stamp >= history[-1][0]:
            return Pose(*self.odometry.pose)
        for (t0, x0, y0, th0), (t1, x1, y1, th1) in itertools.pairwise(reversed(history)):
            # newest first: (t0, …) is the later of the two
            if t1 <= stamp:
                share = (stamp - t1) / (t0 - t1) if t0 > t1 else 1.0
                return Pose(
                    x1 + share * (x0 - x1),
                    y1 + share * (y0 - y1),
                    wrap_angle(th1 + share * wrap_angle(th0 - th1)),
                )
        _, x, y, th = history[0]
        return Pose(x, y, th)

    def localize(self, job: LocalizationJob) -> LocalizationResult | None:
        """Run the particle filter on one job; None if it did not update.

        Touches nothing but the filter, so it may run on another thread while control cycles
        go on, one job at a time.
        """
        mcl = self.mcl  # once: a new map's filter may replace it meanwhile
        assert mcl is not None
        if job.search:
            mcl.global_init()
        mcl.predict(*job.increment)
        if not mcl.update(job.ranges, force=job.force, beams=job.beams):
            return None
        searching = mcl.searching
        return LocalizationResult(job, None if searching else mcl.estimate(), searching)

    def apply_localization(self, result: LocalizationResult) -> None:
        """Fuse a localization result into the pose (and the heading filter).

        The estimate is for the moment of its scan; the motion since then (by odometry) is
        carried onto it, so a result that took a while to compute still corrects the pose of
        now.
        """
        self._last_search_update = result.job.stamp
        self._searching = result.searching or self._search_requested
        estimate = result.estimate
        if self._searching or estimate is None:
            # the filter may also start a search itself, on a lasting misfit
            self.pose_trusted = False
            return
        if estimate.std_xy >= 0.3:
            return
        x, y, theta = self.pose
        since = Pose(*result.job.pose).relative(self.pose)
        ex, ey, etheta = Pose(estimate.x, estimate.y, estimate.theta).compose(since)
        # odometry is precise over centimetres and each estimate is noisy by millimetres:
        # move part of the way, unless the two disagree badly (then jump)
        settings = self.settings
        jump = math.hypot(ex - x, ey - y) >= settings.jump_distance or abs(
            wrap_angle(etheta - theta)
        ) >= math.radians(settings.jump_angle_deg)
        if self.heading is not None:
            std_theta = max(estimate.std_theta, math.radians(0.5))
            if jump:
                self.heading.reset_heading(etheta, std_theta)
            else:
                self.heading.correct_heading(etheta, std_theta**2)
        gain = 1.0 if jump else settings.gain
        self.pose_trusted = True
        self.pose = Pose(x + gain * (ex - x), y + gain * (ey - y), etheta)

    def global_localization(self) -> None:
        """Forget the pose and search the whole map (recovery from a wrong start).

        The search starts with the next localization job. Until it settles the pose is not
        trusted: the map stops serving as a safety layer, since a wrong pose would put phantom
        walls around the robot.
        """
        if self.mcl is not None:
            self._search_requested = True
            self._searching = True
            self.pose_trusted = False

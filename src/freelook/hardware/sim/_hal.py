"""The simulator behind the hardware interfaces: what a real robot's adapters would provide."""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from freelook.config import PAN_TILT_MOUNT, CameraConfig, StreamCameraConfig
from freelook.errors import ConfigError
from freelook.hal import (
    BumperState,
    DriveCommand,
    DriveKind,
    EncoderSample,
    GyroSample,
    PanTiltState,
    RangeScan,
    RobotHardware,
)
from freelook.sim import LaserFrame, Simulator, SonarFrame
from freelook.sim.camera import Camera, LinkCamera, ThermalCamera

__all__ = ["simulated_hardware"]


class _Drive:
    """The simulated base: track speeds, or the twist on a holonomic one."""

    def __init__(self, sim: Simulator) -> None:
        self._sim = sim
        self._holonomic = sim.config.drive.kind == "holonomic"

    @property
    def kind(self) -> DriveKind:
        return self._sim.config.drive.kind

    def command(self, command: DriveCommand) -> None:
        if self._holonomic:
            self._sim.set_twist(command.v, command.vy, command.omega)
        else:
            self._sim.set_wheel_speeds(command.v_left, command.v_right)


class _PanTilt:
    def __init__(self, sim: Simulator) -> None:
        self._sim = sim
        pt = sim.config.pan_tilt
        self._has_pan = bool(pt and pt.has_pan)
        self._has_tilt = bool(pt and pt.has_tilt)

    @property
    def has_pan(self) -> bool:
        return self._has_pan

    @property
    def has_tilt(self) -> bool:
        return self._has_tilt

    def command_rates(self, pan_rate: float, tilt_rate: float) -> None:
        self._sim.set_pan_tilt_rates(pan_rate, tilt_rate)

    def state(self) -> PanTiltState:
        return PanTiltState(self._sim.now, *self._sim.vehicle.pan_tilt())


class _RangeSensor:
    """A simulated range sensor: the newest frame's ranges over the beams' fixed geometry, where
    the robot's description says they sit (the same scan object until the simulator scans
    again)."""

    def __init__(
        self,
        name: str,
        newest: Callable[[], LaserFrame | SonarFrame | None],
        bearings: npt.NDArray[np.float64],
        origin_x: npt.NDArray[np.float64],
        origin_y: npt.NDArray[np.float64],
        range_max: float,
    ) -> None:
        self.name = name
        self._newest = newest
        self._bearings = bearings
        self._ox = origin_x
        self._oy = origin_y
        self._range_max = range_max
        self._last: tuple[LaserFrame | SonarFrame, RangeScan] | None = None  # a frame, its scan

    def latest(self) -> RangeScan | None:
        """The newest frame's scan."""
        frame = self._newest()
        if frame is None:
            return None
        last = self._last
        if last is not None and last[0] is frame:
            return last[1]
        scan = RangeScan(
            frame.stamp, frame.ranges, self._bearings, self._ox, self._oy, self._range_max
        )
        self._last = (frame, scan)
        return scan


def _laser(sim: Simulator) -> _RangeSensor:
    assert sim.laser is not None
    assert sim.config.laser is not None
    cfg = sim.config.laser
    n = len(sim.laser.angles)
    return _RangeSensor(
        "laser",
        lambda: sim.latest_laser,
        sim.laser.angles.copy(),
        np.full(n, cfg.mount_forward),
        np.full(n, cfg.mount_left),
        cfg.range_max,
    )


def _sonar(sim: Simulator) -> _RangeSensor:
    sonar = sim.sonar
    assert sonar is not None
    return _RangeSensor(
        "sonar",
        lambda: sim.latest_sonar,
        sonar.bearings.copy(),
        sonar.mount_x.copy(),
        sonar.mount_y.copy(),
        sonar.config.range_max,
    )


class _Gyro:
    def __init__(self, sim: Simulator) -> None:
        self._sim = sim
        self._last: tuple[tuple[float, float], float, GyroSample] | None = None

    def latest(self) -> GyroSample | None:
        """The newest sample (the same object while the sample and the angle are the same)."""
        sample = self._sim.latest_gyro
        if sample is None:
            return None
        angle = self._sim.gyro_angle
        last = self._last
        if last is not None and last[0] is sample and last[1] is angle:
            return last[2]
        reading = GyroSample(sample[0], sample[1], angle)
        self._last = (sample, angle, reading)
        return reading


class _Encoders:
    def __init__(self, sim: Simulator) -> None:
        self._sim = sim
        self._last: tuple[tuple[float, int, int], EncoderSample] | None = None

    @property
    def counts_per_rev(self) -> int:
        return self._sim.encoders.counts_per_rev

    @property
    def wheel_diameter(self) -> float:
        return self._sim.encoders.wheel_diameter

    def latest(self) -> EncoderSample | None:
        """The newest sample (the same object until the simulator samples again)."""
        sample = self._sim.latest_encoders
        if sample is None:
            return None
        last = self._last
        if last is not None and last[0] is sample:
            return last[1]
        reading = EncoderSample(*sample)
        self._last = (sample, reading)
        return reading


class _Bumpers:
    def __init__(self, sim: Simulator) -> None:
        self._sim = sim
        self._last: BumperState | None = None

    def latest(self) -> BumperState:
        """The bumpers now (the same object while the time and both bumpers are the same)."""
        now = self._sim.now
        front, rear = self._sim.vehicle.bumpers()
        last = self._last
        if last is not None and last.stamp is now and last.front == front and last.rear == rear:
            return last
        self._last = BumperState(now, front, rear)
        return self._last


class _Camera:
    def __init__(self, sim: Simulator) -> None:
        self._sim = sim
        assert sim.config.pan_tilt is not None
        self._camera = Camera(sim.config.camera, sim.config.pan_tilt, sim.world)
        names = [o.name for o in sim.world.objects]
        arm_objects = sim.arm.objects if sim.arm is not None else []
        #: the objects the arm can move, with their index in the world's list
        self._movable = [(names.index(o.name), o) for o in arm_objects if o.name in names]
        #: the server's camera thread and the autonomy's look on the event loop may capture at
        #: once; the camera's scene and noise are one state
        self._lock = threading.Lock()

    def capture(self) -> npt.NDArray[np.uint8]:
        with self._lock:
            v = self._sim.vehicle
            for index, obj in self._movable:
                self._camera.move_object(index, obj.centre[0], obj.centre[1], obj.yaw, not obj.held)
            self._camera.brightness = self._sim.lighting
            self._camera.tint = self._sim.light_tint
            self._camera.noise = self._sim.camera_noise
            self._camera.rng = self._sim.camera_rng
            return self._camera.render(v.x, v.y, v.theta, v.pan, v.tilt)


class _LinkCamera:
    """A camera on an arm link, rendered from the arm's joints at the moment of capture (both
    eyes of a stereo pair from the same joints: one frame, one instant)."""

    def __init__(self, sim: Simulator, config: StreamCameraConfig) -> None:
        assert sim.arm is not None
        self._arm = sim.arm
        self._link = sim.arm.model.link_index(config.mount)
        camera = LinkCamera(config, sim.world)
        thermal = config.kind == "thermal"
        self._optics = camera
        self._camera = ThermalCamera(camera, sim.world) if thermal else camera
        names = [o.name for o in sim.world.objects]
        #: the objects the arm moves, with their index in the world's list: drawn where they
        #: are now (a held one, off the floor, is not drawn)
        self._movable = [(names.index(o.name), o) for o in sim.arm.objects if o.name in names]

    def capture(self) -> npt.NDArray[np.uint8]:
        for index, obj in self._movable:
            self._optics.move_object(index, obj.centre[0], obj.centre[1], obj.yaw, not obj.held)
        return self._camera.render(self._arm.link_in_world(self._link))


class _PanTiltStreamCamera:
    """A further camera on the pan-tilt unit (a pair side by side with a stereo baseline)."""

    def __init__(self, sim: Simulator, config: StreamCameraConfig) -> None:
        assert sim.config.pan_tilt is not None
        self._sim = sim
        optics = CameraConfig(
            width=config.width,
            height=config.height,
            fov_deg=config.fov_deg,
            stereo_baseline=config.stereo_baseline,
        )
        self._camera = Camera(optics, sim.config.pan_tilt, sim.world)
        self._stereo = config.stereo
        #: a thermal camera sees temperatures in false colour (a mono one)
        self._thermal = ThermalCamera(self._camera, sim.world) if config.kind == "thermal" else None

    def capture(self) -> npt.NDArray[np.uint8]:
        v = self._sim.vehicle
        if self._thermal is not None:
            return self._thermal.render(v.x, v.y, v.theta, v.pan, v.tilt)
        if not self._stereo:
            return self._camera.render(v.x, v.y, v.theta, v.pan, v.tilt)
        left, right = self._camera.render_stereo(v.x, v.y, v.theta, v.pan, v.tilt)
        return np.concatenate((left, right), axis=1)


def _stream_cameras(sim: Simulator) -> dict[int, _LinkCamera | _PanTiltStreamCamera]:
    """The config's ``[[cameras]]``; one on a link the arm's URDF lacks is a config error."""
    out: dict[int, _LinkCamera | _PanTiltStreamCamera] = {}
    for i, cam in enumerate(sim.config.cameras):
        if cam.mount == PAN_TILT_MOUNT:
            out[cam.stream] = _PanTiltStreamCamera(sim, cam)
            continue
        try:
            out[cam.stream] = _LinkCamera(sim, cam)
        except KeyError as err:
            raise ConfigError(f"cameras.{i}.mount: {err.args[0]}") from None
    return out


def simulated_hardware(sim: Simulator, *, camera: bool = True, gyro: bool = True) -> RobotHardware:
    """Every device the simulated robot has, behind the hardware interfaces (``camera``: the
    driving camera and the config's further cameras)."""
    cfg = sim.config
    return RobotHardware(
        drive=_Drive(sim),
        encoders=_Encoders(sim),
        pan_tilt=_PanTilt(sim) if cfg.pan_tilt is not None else None,
        gyro=_Gyro(sim) if cfg.gyro is not None and gyro else None,
        laser=_laser(sim) if sim.laser is not None else None,
        sonar=_sonar(sim) if sim.sonar is not None else None,
        bumpers=_Bumpers(sim),
        camera=_Camera(sim) if camera and cfg.pan_tilt is not None else None,
        arm=sim.arm,
        stream_cameras=_stream_cameras(sim) if camera else {},
    )

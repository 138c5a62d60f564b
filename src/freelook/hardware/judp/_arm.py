"""An arm behind a JAUS Primitive Manipulator, jogged by joint efforts.

Joints on the wire: the URDF's jogged joints in order, then the gripper's finger joint (its
position is half the opening). An effort of 100 % moves a joint at the presumed joint speed
(the description's ``[jaus] arm_joint_speed_deg``).

With a Manipulator Joint Position Sensor (and ``arm_position_sensing``), efforts follow the
commanded velocities and positions come from its reports. Without one — Kievit-Kylar's M2P2 —
the arm moves in timed chunks, as the seed moved it: a joint moves only in whole chunks of
``arm_chunk`` seconds at full effort, started when the commanded motion owed to it reaches
half a chunk, and its position is reckoned from the chunks since the start pose (the arm
must start there). A stop (every joint commanded 0) ends a chunk at once, for safety; its
travel is then reckoned from the time it ran, which is where the reckoning is least sure.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from freelook.arm import ArmModel
from freelook.hardware.judp._client import JausClient
from freelook.types import ArmState, GripperState

__all__ = ["JausArm"]

_MAX_DT = 0.1  # s of commanded motion owed per call at most (a stalled caller owes no more)


class JausArm:
    """The HAL :class:`~freelook.hal.Arm` over a :class:`JausClient`'s manipulator."""

    def __init__(
        self,
        client: JausClient,
        model: ArmModel,
        *,
        speed: float,
        chunk: float,
        sensing: bool,
        notify: Callable[[], None],
        clock: Callable[[], float],
    ) -> None:
        if not (speed > 0.0 and chunk > 0.0):
            raise ValueError(f"arm speed {speed} and chunk {chunk} must be > 0")
        self._client = client
        self._names = tuple(model.joint_names[j] for j in model.arm_joints)
        self._finger = int(model.gripper_joints[0]) if len(model.gripper_joints) else -1
        start = [float(model.ready[j]) for j in model.arm_joints]
        if self._finger >= 0:
            start.append(float(model.ready[self._finger]))
        self._n = len(start)
        self._estimate = np.array(start, dtype=np.float64)
        self._speed = speed
        self._chunk = chunk
        self._step = speed * chunk  # one chunk's travel
        self.sensing = sensing
        self._notify = notify
        self._clock = clock
        self._direction = np.zeros(self._n)  # −1, 0, 1: the chunk running (chunks only)
        self._started = np.zeros(self._n)
        self._owed = np.zeros(self._n)
        self._finger_target: float | None = None
        self._velocities = np.zeros(self._n)
        self._last_call: float | None = None

    @property
    def joint_names(self) -> tuple[str, ...]:
        return self._names

    # -- commands -----------------------------------------------------------------------------

    def command_velocities(self, velocities: Sequence[float]) -> None:
        now = self._clock()
        wanted = np.zeros(self._n)
        v = np.array(list(velocities), dtype=np.float64)
        if len(v) != len(self._names) or not np.all(np.isfinite(v)):
            v = np.zeros(len(self._names))  # a malformed command stops the arm
        wanted[: len(v)] = v
        dt = 0.0 if self._last_call is None else min(max(now - self._last_call, 0.0), _MAX_DT)
        self._last_call = now
        if self._finger >= 0 and self._finger_target is not None:
            error = self._finger_target - self._position(self._n - 1)
            wanted[-1] = max(-self._speed, min(self._speed, error / max(dt, self._chunk)))
        if self.sensing:
            self._velocities = np.clip(wanted, -self._speed, self._speed)
        else:
            self._chunks(wanted, dt, now)
        efforts = tuple(
            float(e) for e in np.clip(100.0 * self._velocities / self._speed, -100, 100)
        )
        self._client.command_arm(efforts, now)
        self._notify()

    def _chunks(self, wanted: np.ndarray, dt: float, now: float) -> None:
        running = self._direction != 0
        done = running & (now - self._started >= self._chunk)
        self._estimate[done] += self._direction[done] * self._step
        self._owed[done] -= self._direction[done] * self._step
        self._direction[done] = 0
        if not np.any(wanted[: len(self._names)]) and np.any(self._direction[: len(self._names)]):
            # a stop ends the chunks at once: their travel so far, by the time they ran
            cut = self._direction != 0
            self._estimate[cut] += self._direction[cut] * self._speed * (now - self._started[cut])
            self._direction[cut] = 0
            self._owed[:] = 0.0
        self._owed += wanted * dt
        if self._finger >= 0 and self._finger_target is not None:
            self._owed[-1] = self._finger_target - self._estimate[-1]
        np.clip(self._owed, -2 * self._step, 2 * self._step, out=self._owed)
        start = (self._direction == 0) & (np.abs(self._owed) >= self._step / 2)
        self._direction[start] = np.sign(self._owed[start])
        self._started[start] = now
        self._velocities = self._direction * self._speed

    def command_gripper(self, opening: float) -> None:
        if self._finger >= 0 and math.isfinite(opening):
            self._finger_target = max(0.0, opening) / 2.0

    # -- state --------------------------------------------------------------------------------

    def _position(self, i: int) -> float:
        sensed = self._client.joint_positions
        if self.sensing and sensed is not None and len(sensed) == self._n:
            return sensed[i]
        if self._direction[i] != 0:  # a chunk under way: where it should be by now
            elapsed = min(self._clock() - self._started[i], self._chunk)
            return float(self._estimate[i] + self._direction[i] * self._speed * elapsed)
        return float(self._estimate[i])

    def state(self) -> ArmState:
        names = self._names
        positions = tuple(self._position(i) for i in range(len(names)))
        velocities = tuple(float(v) for v in self._velocities[: len(names)])
        return ArmState(self._clock(), names, positions, velocities)

    def gripper_state(self) -> GripperState:
        opening = 2.0 * self._position(self._n - 1) if self._finger >= 0 else 0.0
        return GripperState(self._clock(), opening, False)

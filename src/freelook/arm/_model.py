"""The arm model as arrays: a kinematic tree of links, one collision box per geometric link, and
the box pairs the anti-collision check tests.

Links are stored in topological order (a parent before its children), so forward kinematics is
one pass. Each link hangs on the joint that connects it to its parent: fixed, revolute or
prismatic, driven by one actuated joint (times a mimic multiplier, plus an offset) or by none.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["FIXED", "PRISMATIC", "REVOLUTE", "ArmModel"]

FIXED, REVOLUTE, PRISMATIC = 0, 1, 2

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class ArmModel:
    """A robot with an arm, loaded from URDF (and SRDF); every length in metres, angle in rad.

    ``q`` vectors hold the actuated joints in ``joint_names`` order (URDF order, mimic joints
    left out). ``arm_joints`` are the joints an operator jogs by velocity (the SRDF group
    ``arm``), ``gripper_joints`` the ones the gripper command drives (group ``gripper``).
    """

    name: str
    source: str
    joint_names: tuple[str, ...]
    joint_kinds: tuple[int, ...]  # REVOLUTE or PRISMATIC
    lower: F64
    upper: F64
    max_velocity: F64
    arm_joints: I64
    gripper_joints: I64
    tool_link: int  # index into link_names: the end effector's frame
    link_names: tuple[str, ...]
    link_parent: I64  # −1 for the root
    link_origin: F64  # (L, 4, 4): parent frame → joint frame
    link_axis: F64  # (L, 3), unit
    link_kind: I64  # FIXED, REVOLUTE, PRISMATIC
    link_q: I64  # actuated joint driving the link, −1 if none
    link_scale: F64  # mimic multiplier (1 for an actuated joint)
    link_offset: F64  # mimic offset
    box_links: tuple[str, ...]  # the link each box belongs to (one box per link)
    box_link: I64  # (N,) index into link_names
    box_origin: F64  # (N, 4, 4): link frame → box centre frame
    half_extents: F64  # (N, 3)
    pair_a: I64  # checked pairs, indices into the boxes
    pair_b: I64
    ready: F64  # the SRDF's "ready" pose (arm raised, clear of the body); else home()

    @property
    def n_joints(self) -> int:
        return len(self.joint_names)

    @property
    def n_boxes(self) -> int:
        return len(self.box_links)

    @property
    def n_pairs(self) -> int:
        return len(self.pair_a)

    @property
    def pair_names(self) -> tuple[tuple[str, str], ...]:
        """Checked pairs as (link, link) names."""
        return tuple(
            (self.box_links[a], self.box_links[b])
            for a, b in zip(self.pair_a.tolist(), self.pair_b.tolist(), strict=True)
        )

    def link_index(self, name: str) -> int:
        """Index of a link by name; KeyError names the known links when there is none."""
        try:
            return self.link_names.index(name)
        except ValueError:
            known = ", ".join(self.link_names)
            raise KeyError(f"no link {name!r} in {self.name} ({known})") from None

    def home(self) -> F64:
        """A pose within the limits: every joint at 0 clipped to its range."""
        return np.clip(np.zeros(self.n_joints), self.lower, self.upper)

    def clip(self, q: F64) -> F64:
        """``q`` clipped to the joint limits."""
        return np.clip(q, self.lower, self.upper)

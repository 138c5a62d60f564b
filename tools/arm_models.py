"""Write the built-in arm robots' URDF and SRDF files (``taros``, ``m2p2``).

The robots are described here as tables of boxes and joints; this script turns them into the
ecosystem's formats under ``src/freelook/config/robots/``. Every collision box sits on a link of
its own (boxes that move together hang on fixed joints), so the SRDF's link pairs are the
anti-collision check's box pairs. The SRDF disables every pair that can never touch:

* boxes that move together (one rigid body) or sit on neighbouring bodies of the chain
  (``Adjacent``: they meet at the joint by design);
* pairs that no pose within the joint limits brings into contact (``Never``), found by sampling
  ``--samples`` random poses with :mod:`freelook.arm` (run it again after changing a table).

Usage: ``.venv/bin/python tools/arm_models.py [--samples N]``
"""

from __future__ import annotations

import argparse
import itertools
import math
from dataclasses import dataclass, field
from pathlib import Path

ROBOTS = Path(__file__).resolve().parents[1] / "src" / "freelook" / "config" / "robots"

COLOURS = {
    "olive": (0.33, 0.37, 0.22),
    "dark": (0.15, 0.15, 0.15),
    "grey": (0.55, 0.55, 0.55),
    "yellow": (0.85, 0.7, 0.1),
    "black": (0.05, 0.05, 0.05),
    "ground": (0.45, 0.4, 0.35),
}


@dataclass
class Box:
    """A box on a link: centre and size in the link frame, metres."""

    link: str
    size: tuple[float, float, float]
    centre: tuple[float, float, float] = (0.0, 0.0, 0.0)
    colour: str = "grey"


@dataclass
class Joint:
    name: str
    kind: str  # revolute, prismatic, fixed
    parent: str
    child: str
    xyz: tuple[float, float, float]
    axis: tuple[float, float, float] = (0.0, 0.0, 1.0)
    limits: tuple[float, float] = (0.0, 0.0)  # lower, upper (rad or m)
    velocity: float = 0.0  # rad/s or m/s
    effort: float = 100.0
    mimic: tuple[str, float] | None = None


@dataclass
class Robot:
    name: str
    comment: str
    boxes: list[Box]
    joints: list[Joint]
    #: rigid bodies in chain order; each is a list of box links, the first being the moving link
    bodies: list[list[str]]
    #: chain neighbours as (parent body, child body) indices
    neighbours: list[tuple[int, int]]
    arm_group: list[str]
    gripper_group: list[str]
    tool_link: str
    frames: list[str] = field(default_factory=list)  # links without geometry
    #: the SRDF's "ready" pose: arm raised, elbow bent, clear of the body (where reaches start)
    ready: dict[str, float] = field(default_factory=dict)


def _deg(d: float) -> float:
    return math.radians(d)


def taros() -> Robot:
    """Tracked base, 5-DOF arm + gripper (2.1 m reach to the grasp point), stereo pair."""
    b = [
        Box("ground", (8.0, 8.0, 0.1), (0.0, 0.0, -0.05), "ground"),
        Box("track_left", (1.6, 0.3, 0.45), (0.0, 0.45, 0.225), "dark"),
        Box("track_right", (1.6, 0.3, 0.45), (0.0, -0.45, 0.225), "dark"),
        Box("hull", (1.4, 0.6, 0.35), (0.0, 0.0, 0.3), "olive"),
        Box("bumper", (0.2, 0.6, 0.2), (0.8, 0.0, 0.25), "olive"),
        Box("headlight_bar", (0.08, 0.5, 0.06), (0.76, 0.0, 0.42), "yellow"),
        Box("battery", (0.3, 0.5, 0.25), (-0.55, 0.0, 0.6), "olive"),
        Box("mast", (0.08, 0.08, 0.5), (-0.6, -0.25, 0.725), "grey"),
        Box("mast_head", (0.15, 0.15, 0.12), (-0.6, -0.25, 1.035), "dark"),
        Box("antenna", (0.03, 0.03, 0.6), (-0.62, 0.25, 1.025), "black"),
        Box("toolbox", (0.35, 0.4, 0.1), (0.45, 0.0, 0.525), "olive"),
        Box("pedestal", (0.3, 0.3, 0.1), (0.1, 0.0, 0.525), "grey"),
        Box("turret", (0.3, 0.3, 0.2), (0.0, 0.0, 0.1), "yellow"),
        Box("shoulder_housing", (0.24, 0.32, 0.24), (0.0, 0.0, 0.0), "yellow"),
        Box("upper_arm", (0.98, 0.14, 0.14), (0.49, 0.0, 0.0), "yellow"),
        Box("upper_arm_actuator", (0.5, 0.08, 0.08), (0.0, 0.0, 0.0), "grey"),
        Box("elbow_housing", (0.18, 0.2, 0.18), (0.0, 0.0, 0.0), "yellow"),
        Box("forearm", (0.7, 0.12, 0.12), (0.35, 0.0, 0.0), "yellow"),
        Box("wrist", (0.12, 0.12, 0.12), (0.06, 0.0, 0.0), "grey"),
        Box("wrist_roll", (0.1, 0.14, 0.14), (0.05, 0.0, 0.0), "grey"),
        Box("palm", (0.1, 0.42, 0.12), (0.05, 0.0, 0.0), "dark"),
        Box("stereo_bar", (0.06, 0.3, 0.06), (0.0, 0.0, 0.0), "black"),
        Box("camera_left", (0.06, 0.05, 0.05), (0.0, 0.0, 0.0), "black"),
        Box("camera_right", (0.06, 0.05, 0.05), (0.0, 0.0, 0.0), "black"),
        Box("finger_left", (0.2, 0.03, 0.08), (0.1, 0.015, 0.0), "dark"),
        Box("finger_right", (0.2, 0.03, 0.08), (0.1, -0.015, 0.0), "dark"),
    ]
    body = [x.link for x in b[:12]]
    j = [Joint(f"{name}_mount", "fixed", "base_link", name, (0.0, 0.0, 0.0)) for name in body]
    j += [
        Joint(
            "turret_yaw",
            "revolute",
            "pedestal",
            "turret",
            (0.1, 0.0, 0.575),
            (0, 0, 1),
            (_deg(-120), _deg(120)),
            _deg(60),
            400.0,
        ),
        Joint("shoulder_mount", "fixed", "turret", "shoulder_housing", (0.0, 0.0, 0.2)),
        Joint(
            "shoulder_pitch",
            "revolute",
            "shoulder_housing",
            "upper_arm",
            (0.0, 0.0, 0.0),
            (0, -1, 0),
            (_deg(-60), _deg(90)),
            _deg(45),
            800.0,
        ),
        Joint("actuator_mount", "fixed", "upper_arm", "upper_arm_actuator", (0.35, 0.0, -0.12)),
        Joint("elbow_mount", "fixed", "upper_arm", "elbow_housing", (0.98, 0.0, 0.0)),
        Joint(
            "elbow_pitch",
            "revolute",
            "elbow_housing",
            "forearm",
            (0.0, 0.0, 0.0),
            (0, -1, 0),
            (_deg(-165), _deg(165)),
            _deg(60),
            500.0,
        ),
        Joint(
            "wrist_pitch",
            "revolute",
            "forearm",
            "wrist",
            (0.7, 0.0, 0.0),
            (0, -1, 0),
            (_deg(-120), _deg(120)),
            _deg(90),
            200.0,
        ),
        Joint(
            "wrist_roll_joint",
            "revolute",
            "wrist",
            "wrist_roll",
            (0.12, 0.0, 0.0),
            (1, 0, 0),
            (_deg(-175), _deg(175)),
            _deg(120),
            100.0,
        ),
        Joint("palm_mount", "fixed", "wrist_roll", "palm", (0.1, 0.0, 0.0)),
        Joint("stereo_mount", "fixed", "wrist_roll", "stereo_bar", (0.06, 0.0, 0.13)),
        Joint("camera_left_mount", "fixed", "stereo_bar", "camera_left", (0.03, 0.09, 0.0)),
        Joint("camera_right_mount", "fixed", "stereo_bar", "camera_right", (0.03, -0.09, 0.0)),
        Joint(
            "finger_left_joint",
            "prismatic",
            "palm",
            "finger_left",
            (0.1, 0.0, 0.0),
            (0, 1, 0),
            (0.0, 0.18),
            0.1,
            300.0,
        ),
        Joint(
            "finger_right_joint",
            "prismatic",
            "palm",
            "finger_right",
            (0.1, 0.0, 0.0),
            (0, -1, 0),
            (0.0, 0.18),
            0.1,
            300.0,
            mimic=("finger_left_joint", 1.0),
        ),
        Joint("tool_mount", "fixed", "palm", "tool0", (0.2, 0.0, 0.0)),
    ]
    bodies = [
        body,
        ["turret", "shoulder_housing"],
        ["upper_arm", "upper_arm_actuator", "elbow_housing"],
        ["forearm"],
        ["wrist"],
        ["wrist_roll", "palm", "stereo_bar", "camera_left", "camera_right"],
        ["finger_left"],
        ["finger_right"],
    ]
    neighbours = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (5, 7), (6, 7)]
    arm = ["turret_yaw", "shoulder_pitch", "elbow_pitch", "wrist_pitch", "wrist_roll_joint"]
    return Robot(
        "taros",
        "TAROS (Kot and Novák, TAROS 2018): tracked base, 5-DOF arm with a gripper, "
        "stereo pair at the wrist",
        b, j, bodies, neighbours, arm, ["finger_left_joint"], "tool0", ["base_link", "tool0"],
        {"shoulder_pitch": 0.5, "elbow_pitch": -1.2, "wrist_pitch": -0.5},
    )  # fmt: skip


def m2p2() -> Robot:
    """Holonomic four-wheel base, 2-DOF arm in a vertical plane, 2-DOF gripper (roll + jaw)."""
    b = [
        Box("ground", (6.0, 6.0, 0.1), (0.0, 0.0, -0.05), "ground"),
        Box("chassis", (0.8, 0.5, 0.2), (0.0, 0.0, 0.22), "olive"),
        Box("wheel_front_left", (0.24, 0.1, 0.24), (0.28, 0.31, 0.12), "black"),
        Box("wheel_front_right", (0.24, 0.1, 0.24), (0.28, -0.31, 0.12), "black"),
        Box("wheel_rear_left", (0.24, 0.1, 0.24), (-0.28, 0.31, 0.12), "black"),
        Box("wheel_rear_right", (0.24, 0.1, 0.24), (-0.28, -0.31, 0.12), "black"),
        Box("platform_camera", (0.1, 0.12, 0.1), (0.32, 0.16, 0.37), "dark"),
        Box("shoulder_bracket", (0.14, 0.16, 0.12), (0.2, 0.0, 0.38), "grey"),
        Box("upper_arm", (0.55, 0.08, 0.08), (0.275, 0.0, 0.0), "yellow"),
        Box("forearm", (0.45, 0.07, 0.07), (0.225, 0.0, 0.0), "yellow"),
        Box("arm_camera", (0.06, 0.05, 0.05), (0.0, 0.0, 0.0), "dark"),
        Box("gripper_base", (0.08, 0.16, 0.08), (0.04, 0.0, 0.0), "grey"),
        Box("jaw_left", (0.12, 0.02, 0.05), (0.06, 0.01, 0.0), "dark"),
        Box("jaw_right", (0.12, 0.02, 0.05), (0.06, -0.01, 0.0), "dark"),
    ]
    body = [x.link for x in b[:8]]
    j = [Joint(f"{name}_mount", "fixed", "base_link", name, (0.0, 0.0, 0.0)) for name in body]
    j += [
        Joint(
            "shoulder",
            "revolute",
            "shoulder_bracket",
            "upper_arm",
            (0.2, 0.0, 0.44),
            (0, -1, 0),
            (_deg(-50), _deg(150)),
            _deg(40),
            150.0,
        ),
        Joint(
            "elbow",
            "revolute",
            "upper_arm",
            "forearm",
            (0.55, 0.0, 0.0),
            (0, -1, 0),
            (_deg(-160), _deg(160)),
            _deg(50),
            100.0,
        ),
        Joint("arm_camera_mount", "fixed", "forearm", "arm_camera", (0.36, 0.0, 0.065)),
        Joint(
            "gripper_roll",
            "revolute",
            "forearm",
            "gripper_base",
            (0.45, 0.0, 0.0),
            (1, 0, 0),
            (_deg(-180), _deg(180)),
            _deg(90),
            20.0,
        ),
        Joint(
            "jaw_left_joint",
            "prismatic",
            "gripper_base",
            "jaw_left",
            (0.08, 0.0, 0.0),
            (0, 1, 0),
            (0.0, 0.07),
            0.05,
            50.0,
        ),
        Joint(
            "jaw_right_joint",
            "prismatic",
            "gripper_base",
            "jaw_right",
            (0.08, 0.0, 0.0),
            (0, -1, 0),
            (0.0, 0.07),
            0.05,
            50.0,
            mimic=("jaw_left_joint", 1.0),
        ),
        Joint("tool_mount", "fixed", "gripper_base", "tool0", (0.14, 0.0, 0.0)),
    ]
    bodies = [
        body,
        ["upper_arm"],
        ["forearm", "arm_camera"],
        ["gripper_base"],
        ["jaw_left"],
        ["jaw_right"],
    ]
    neighbours = [(0, 1), (1, 2), (2, 3), (3, 4), (3, 5), (4, 5)]
    return Robot(
        "m2p2",
        "M2P2 (Kievit-Kylar): holonomic four-wheel base, 2-DOF arm in a vertical plane, 2-DOF "
        "gripper (roll and jaw), a camera on the arm",
        b, j, bodies, neighbours, ["shoulder", "elbow", "gripper_roll"], ["jaw_left_joint"],
        "tool0", ["base_link", "tool0"], {"shoulder": 0.6, "elbow": -1.4},
    )  # fmt: skip


def _v(values: tuple[float, ...]) -> str:
    return " ".join(f"{x:.6g}" for x in values)


def urdf(robot: Robot) -> str:
    """The URDF text: one collision box (and the same visual box) per geometric link."""
    out = ['<?xml version="1.0"?>', f"<!-- {robot.comment}. -->", f'<robot name="{robot.name}">']
    for name, rgb in COLOURS.items():
        out.append(f'  <material name="{name}"><color rgba="{_v(rgb)} 1"/></material>')
    for frame in robot.frames:
        out.append(f'  <link name="{frame}"/>')
    for box in robot.boxes:
        origin = f'<origin xyz="{_v(box.centre)}" rpy="0 0 0"/>'
        geometry = f'<geometry><box size="{_v(box.size)}"/></geometry>'
        out += [
            f'  <link name="{box.link}">',
            f'    <visual>{origin}{geometry}<material name="{box.colour}"/></visual>',
            f"    <collision>{origin}{geometry}</collision>",
            "  </link>",
        ]
    for joint in robot.joints:
        out.append(f'  <joint name="{joint.name}" type="{joint.kind}">')
        out.append(f'    <parent link="{joint.parent}"/><child link="{joint.child}"/>')
        out.append(f'    <origin xyz="{_v(joint.xyz)}" rpy="0 0 0"/>')
        if joint.kind != "fixed":
            lo, hi = joint.limits
            out.append(f'    <axis xyz="{_v(joint.axis)}"/>')
            out.append(
                f'    <limit lower="{lo:.6g}" upper="{hi:.6g}" velocity="{joint.velocity:.6g}" '
                f'effort="{joint.effort:.6g}"/>'
            )
        if joint.mimic is not None:
            out.append(f'    <mimic joint="{joint.mimic[0]}" multiplier="{joint.mimic[1]:g}"/>')
        out.append("  </joint>")
    out.append("</robot>")
    return "\n".join(out) + "\n"


def adjacent_pairs(robot: Robot) -> set[frozenset[str]]:
    """Pairs on one rigid body or on neighbouring bodies of the chain."""
    body_of = {link: i for i, body in enumerate(robot.bodies) for link in body}
    near = {(a, b) for a, b in robot.neighbours} | {(b, a) for a, b in robot.neighbours}
    pairs = set()
    for a, b in itertools.combinations([x.link for x in robot.boxes], 2):
        ia, ib = body_of[a], body_of[b]
        if ia == ib or (ia, ib) in near:
            pairs.add(frozenset((a, b)))
    return pairs


def never_pairs(robot: Robot, urdf_path: Path, samples: int) -> set[frozenset[str]]:
    """Pairs not adjacent that no sampled pose within the joint limits brings into contact."""
    import numpy as np

    from freelook.arm import load_urdf, pair_separations

    model = load_urdf(urdf_path)
    rng = np.random.default_rng(1)
    adjacent = adjacent_pairs(robot)
    seen = np.zeros(model.n_pairs, dtype=bool)
    for start in range(0, samples, 10_000):
        q = rng.uniform(model.lower, model.upper, (min(10_000, samples - start), model.n_joints))
        seen |= (pair_separations(model, q) <= 0.0).any(axis=0)
    candidates = [
        (i, k, hit)
        for i, k, hit in zip(model.pair_a.tolist(), model.pair_b.tolist(), seen, strict=True)
        if frozenset((model.box_links[i], model.box_links[k])) not in adjacent
    ]
    return {
        frozenset((model.box_links[i], model.box_links[k])) for i, k, hit in candidates if not hit
    }


def srdf(robot: Robot, never: set[frozenset[str]]) -> str:
    """The SRDF text: planning groups, the end effector and the disabled pairs."""
    out = ['<?xml version="1.0"?>', f'<robot name="{robot.name}">']
    out.append('  <group name="arm">')
    out += [f'    <joint name="{name}"/>' for name in robot.arm_group]
    out.append("  </group>")
    out.append('  <group name="gripper">')
    out += [f'    <joint name="{name}"/>' for name in robot.gripper_group]
    out.append("  </group>")
    out.append(f'  <end_effector name="gripper" parent_link="{robot.tool_link}" group="gripper"/>')
    out.append('  <group_state name="ready" group="arm">')
    for name in robot.arm_group:
        out.append(f'    <joint name="{name}" value="{robot.ready.get(name, 0.0):g}"/>')
    out.append("  </group_state>")
    order = {x.link: i for i, x in enumerate(robot.boxes)}
    adjacent = adjacent_pairs(robot)
    for a, b in sorted(
        (sorted(p, key=order.__getitem__) for p in adjacent | never),
        key=lambda p: (order[p[0]], order[p[1]]),
    ):
        reason = "Adjacent" if frozenset((a, b)) in adjacent else "Never"
        out.append(f'  <disable_collisions link1="{a}" link2="{b}" reason="{reason}"/>')
    out.append("</robot>")
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200_000)
    args = parser.parse_args()
    for robot in (taros(), m2p2()):
        urdf_path = ROBOTS / f"{robot.name}.urdf"
        urdf_path.write_text(urdf(robot), encoding="utf-8")
        try:
            never = never_pairs(robot, urdf_path, args.samples)
        except ImportError:
            never = set()
        (ROBOTS / f"{robot.name}.srdf").write_text(srdf(robot, never), encoding="utf-8")
        n = len(robot.boxes)
        total = n * (n - 1) // 2
        off = len(adjacent_pairs(robot)) + len(never)
        print(f"{robot.name}: {n} boxes, {total} pairs, {total - off} checked")


if __name__ == "__main__":
    main()

"""Loading an arm from URDF (with yourdfpy) and SRDF, checked element by element.

Before yourdfpy builds the model, the XML is checked with line numbers, so a bad file is
reported as ``file:line: <element name="…">: what was expected``. Every problem is collected
and raised at once as :class:`~freelook.errors.ConfigError`. Checked: a single tree (no link
with two parent joints, no cycle, one root), revolute/prismatic joints with finite
``lower < upper`` and a positive ``velocity``, a non-zero axis, mimic joints naming a driven
joint, at most one collision box per link and a box for every link that has a visual,
meshes that load. The SRDF must name known links and joints only.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import numpy as np

from freelook.arm._model import F64, FIXED, PRISMATIC, REVOLUTE, ArmModel
from freelook.errors import ConfigError

__all__ = ["load_arm", "load_urdf"]

_KINDS = {"fixed": FIXED, "revolute": REVOLUTE, "prismatic": PRISMATIC}


def _parse_xml(path: Path) -> Any:
    from lxml import etree

    try:
        return etree.parse(str(path)).getroot()
    except OSError as err:
        raise ConfigError(f"{path}: cannot read file: {err}") from None
    except etree.XMLSyntaxError as err:
        raise ConfigError(f"{path}:{err.lineno}: not well-formed XML: {err.msg}") from None


def _where(path: Path, el: Any) -> str:
    name = el.get("name")
    tag = f'<{el.tag} name="{name}">' if name is not None else f"<{el.tag}>"
    return f"{path}:{el.sourceline}: {tag}"


def _floats(text: str | None, n: int) -> list[float] | None:
    if text is None:
        return None
    try:
        values = [float(x) for x in text.split()]
    except ValueError:
        return None
    if len(values) != n or not all(math.isfinite(v) for v in values):
        return None
    return values


def _check_mesh(path: Path, owner: Any, mesh: Any, problems: list[str]) -> None:
    import trimesh
    import yourdfpy

    filename = mesh.get("filename")
    if not filename:
        problems.append(f"{_where(path, owner)}: <mesh> without a filename")
        return
    resolved = Path(yourdfpy.filename_handler_magic(filename, dir=str(path.parent)))
    try:
        mesh = trimesh.load(str(resolved), force="mesh")
        faces = len(getattr(mesh, "faces", ()))
        problem = None if faces else "no triangles in it"
    except Exception as err:  # any loader failure is the file's fault
        problem = str(err)
    if problem is not None:
        problems.append(
            f"{_where(path, owner)}: mesh {filename!r} cannot be loaded from {resolved}: {problem}"
        )


def _check_links(path: Path, root: Any, problems: list[str]) -> list[str]:
    names: list[str] = []
    for link in root.iter("link"):
        name = link.get("name")
        if not name:
            problems.append(f"{_where(path, link)}: expected a name")
            continue
        if name in names:
            problems.append(f"{_where(path, link)}: a second link of this name")
        names.append(name)
        for geometry in link.iter("geometry"):
            for mesh in geometry.iter("mesh"):
                _check_mesh(path, link, mesh, problems)
        collisions = link.findall("collision")
        if len(collisions) > 1:
            problems.append(
                f"{_where(path, link)}: expected one <collision> box per link "
                f"(got {len(collisions)}; give each box its own link on a fixed joint)"
            )
        if not collisions and link.findall("visual"):
            problems.append(
                f"{_where(path, link)}: has visual geometry but no <collision> box "
                "(every part of the robot needs one)"
            )
        for collision in collisions[:1]:
            box = collision.find("geometry/box")
            if box is None:
                problems.append(
                    f"{_where(path, link)}: expected <collision><geometry><box size=…>"
                    " (the check tests boxes only)"
                )
                continue
            size = _floats(box.get("size"), 3)
            if size is None or min(size) <= 0:
                problems.append(
                    f"{_where(path, link)}: expected <box size> of three positive numbers "
                    f"(got {box.get('size')!r})"
                )
    return names


def _check_joint(path: Path, joint: Any, links: list[str], problems: list[str]) -> None:
    where = _where(path, joint)
    kind = joint.get("type")
    if kind not in _KINDS:
        problems.append(f"{where}: expected type fixed, revolute or prismatic (got {kind!r})")
        return
    for end in ("parent", "child"):
        el = joint.find(end)
        link = None if el is None else el.get("link")
        if link is None:
            problems.append(f"{where}: expected <{end} link=…>")
        elif link not in links:
            problems.append(f"{where}: <{end} link={link!r}> names no link of this robot")
    if kind == "fixed":
        return
    axis_el = joint.find("axis")
    axis = [1.0, 0.0, 0.0] if axis_el is None else _floats(axis_el.get("xyz"), 3)
    if axis is None or math.hypot(*axis) < 1e-9:
        problems.append(f"{where}: expected <axis xyz> of three numbers, not all zero")
    limit = joint.find("limit")
    values = {
        key: None if limit is None else _floats(limit.get(key), 1)
        for key in ("lower", "upper", "velocity")
    }
    missing = [key for key, v in values.items() if v is None]
    if missing:
        problems.append(
            f"{where}: expected <limit lower=… upper=… velocity=…> with finite numbers for a "
            f"{kind} joint (missing or invalid: {', '.join(missing)})"
        )
        return
    lo, hi, vel = (v[0] for v in values.values() if v is not None)
    if not lo < hi:
        problems.append(f"{where}: <limit> expected lower < upper (got {lo:g}, {hi:g})")
    if vel <= 0:
        problems.append(f"{where}: <limit> expected velocity > 0 (got {vel:g})")


def _check_tree(path: Path, root: Any, links: list[str], problems: list[str]) -> None:
    parent_of: dict[str, tuple[str, Any]] = {}
    names: set[str] = set()
    for joint in root.iter("joint"):
        name = joint.get("name")
        if not name:
            problems.append(f"{_where(path, joint)}: expected a name")
        elif name in names:
            problems.append(f"{_where(path, joint)}: a second joint of this name")
        names.add(name or "")
        _check_joint(path, joint, links, problems)
        child, parent = joint.find("child"), joint.find("parent")
        if child is None or parent is None:
            continue
        c, p = child.get("link"), parent.get("link")
        if c in parent_of:
            first = parent_of[c][1]
            problems.append(
                f"{_where(path, joint)}: link {c!r} already has a parent joint "
                f"{first.get('name')!r} (line {first.sourceline}); a URDF is a tree, not a loop"
            )
            continue
        parent_of[c] = (p, joint)
    for link in links:
        seen = [link]
        while seen[-1] in parent_of:
            up = parent_of[seen[-1]][0]
            if up in seen:
                joint = parent_of[seen[-1]][1]
                problems.append(
                    f"{_where(path, joint)}: joints form a loop through links "
                    f"{' → '.join([*seen[seen.index(up) :], up])}"
                )
                return
            seen.append(up)
    roots = [link for link in links if link not in parent_of]
    if len(roots) != 1 and links:
        problems.append(f"{path}: expected exactly one root link (got {roots or 'none'})")
    for joint in root.iter("joint"):
        mimic = joint.find("mimic")
        if mimic is not None and mimic.get("joint") not in names:
            problems.append(
                f"{_where(path, joint)}: <mimic joint={mimic.get('joint')!r}> names no joint"
            )


def _validate(path: Path) -> None:
    root = _parse_xml(path)
    if root.tag != "robot":
        raise ConfigError(f"{path}:{root.sourceline}: expected a <robot> root (got <{root.tag}>)")
    problems: list[str] = []
    links = _check_links(path, root, problems)
    _check_tree(path, root, links, problems)
    if problems:
        raise ConfigError(f"{path}: invalid URDF", problems)


def _topological(links: list[str], joints: list[Any]) -> list[str]:
    children: dict[str, list[str]] = {}
    has_parent = set()
    for j in joints:
        children.setdefault(j.parent, []).append(j.child)
        has_parent.add(j.child)
    order = [link for link in links if link not in has_parent]
    for link in order:  # grows while iterating: breadth-first
        order += children.get(link, [])
    return order


def load_urdf(path: Path | str) -> ArmModel:
    """The arm of a URDF file, every box pair checked and every joint in the ``arm`` group."""
    import yourdfpy

    path = Path(path)
    _validate(path)
    robot = yourdfpy.URDF.load(str(path), build_scene_graph=False, load_meshes=False).robot
    joints = list(robot.joints)
    actuated = [j for j in joints if j.type != "fixed" and j.mimic is None]
    q_index = {j.name: i for i, j in enumerate(actuated)}
    by_child = {j.child: j for j in joints}
    order = _topological([link.name for link in robot.links], joints)
    n = len(order)
    parent = np.full(n, -1, dtype=np.int64)
    origin = np.tile(np.eye(4), (n, 1, 1))
    axis = np.tile(np.array([1.0, 0.0, 0.0]), (n, 1))
    kind = np.zeros(n, dtype=np.int64)
    link_q = np.full(n, -1, dtype=np.int64)
    scale = np.ones(n)
    offset = np.zeros(n)
    for i, name in enumerate(order):
        j = by_child.get(name)
        if j is None:
            continue
        parent[i] = order.index(j.parent)
        if j.origin is not None:
            origin[i] = j.origin
        kind[i] = _KINDS[j.type]
        if kind[i] == FIXED:
            continue
        a = np.asarray(j.axis if j.axis is not None else (1.0, 0.0, 0.0), dtype=float)
        axis[i] = a / np.linalg.norm(a)
        if j.mimic is None:
            link_q[i] = q_index[j.name]
        else:
            link_q[i] = q_index[j.mimic.joint]
            scale[i] = j.mimic.multiplier if j.mimic.multiplier is not None else 1.0
            offset[i] = j.mimic.offset if j.mimic.offset is not None else 0.0
    link_by_name = {link.name: link for link in robot.links}
    boxes = [name for name in order if link_by_name[name].collisions]
    box_origin = np.tile(np.eye(4), (len(boxes), 1, 1))
    half = np.zeros((len(boxes), 3))
    for k, name in enumerate(boxes):
        collision = link_by_name[name].collisions[0]
        if collision.origin is not None:
            box_origin[k] = collision.origin
        half[k] = np.asarray(collision.geometry.box.size, dtype=float) / 2
    pairs = np.array(list(itertools.combinations(range(len(boxes)), 2)), dtype=np.int64)
    pairs = pairs.reshape(-1, 2)
    lower = np.array([j.limit.lower for j in actuated], dtype=float)
    upper = np.array([j.limit.upper for j in actuated], dtype=float)
    return ArmModel(
        name=robot.name,
        source=str(path),
        joint_names=tuple(j.name for j in actuated),
        joint_kinds=tuple(_KINDS[j.type] for j in actuated),
        lower=lower,
        upper=upper,
        max_velocity=np.array([j.limit.velocity for j in actuated], dtype=float),
        arm_joints=np.arange(len(actuated), dtype=np.int64),
        gripper_joints=np.zeros(0, dtype=np.int64),
        tool_link=n - 1,
        link_names=tuple(order),
        link_parent=parent,
        link_origin=origin,
        link_axis=axis,
        link_kind=kind,
        link_q=link_q,
        link_scale=scale,
        link_offset=offset,
        box_links=tuple(boxes),
        box_link=np.array([order.index(b) for b in boxes], dtype=np.int64),
        box_origin=box_origin,
        half_extents=half,
        pair_a=pairs[:, 0].copy(),
        pair_b=pairs[:, 1].copy(),
        ready=np.clip(np.zeros(len(actuated)), lower, upper),
    )


def load_arm(urdf: Path | str, srdf: Path | str) -> ArmModel:
    """The arm of a URDF with the SRDF's groups, end effector and disabled pairs applied.

    The SRDF needs a group ``arm`` (the jogged joints), may have a group ``gripper``, an
    ``end_effector`` whose ``parent_link`` is the tool frame (default: the last link) and a
    ``group_state`` named ``ready`` (default: every joint at 0 within its limits).
    """
    import dataclasses

    model = load_urdf(urdf)
    path = Path(srdf)
    root = _parse_xml(path)
    problems: list[str] = []
    groups = _srdf_groups(root, path, model, problems)
    tool = model.tool_link
    for effector in root.iter("end_effector"):
        link = effector.get("parent_link")
        if link not in model.link_names:
            problems.append(f"{_where(path, effector)}: parent_link={link!r} names no link")
        else:
            tool = model.link_names.index(link)
    ready = _srdf_ready(root, path, model, problems)
    disabled = _srdf_disabled(root, path, model, problems)
    if problems:
        raise ConfigError(f"{path}: invalid SRDF", problems)
    keep = [
        k
        for k, (a, b) in enumerate(zip(model.pair_a.tolist(), model.pair_b.tolist(), strict=True))
        if frozenset((model.box_links[a], model.box_links[b])) not in disabled
    ]
    return dataclasses.replace(
        model,
        arm_joints=np.array(groups["arm"], dtype=np.int64),
        gripper_joints=np.array(groups.get("gripper", []), dtype=np.int64),
        tool_link=tool,
        pair_a=model.pair_a[keep].copy(),
        pair_b=model.pair_b[keep].copy(),
        ready=ready,
    )


def _srdf_groups(
    root: Any, path: Path, model: ArmModel, problems: list[str]
) -> dict[str, list[int]]:
    """The SRDF's joint groups by name, as indices of the URDF's actuated joints; a joint it
    does not have, or no group ``arm``, is added to ``problems``."""
    joints = model.joint_names
    groups: dict[str, list[int]] = {}
    for group in root.iter("group"):
        members: list[int] = []
        for joint in group.iter("joint"):
            name = joint.get("name")
            if name not in joints:
                problems.append(
                    f"{_where(path, joint)}: names no actuated joint of {model.source} "
                    f"(expected one of {', '.join(joints)})"
                )
            else:
                members.append(joints.index(name))
        groups[group.get("name") or ""] = members
    if not groups.get("arm"):
        problems.append(f'{path}: expected a <group name="arm"> naming the jogged joints')
    return groups


def _srdf_ready(root: Any, path: Path, model: ArmModel, problems: list[str]) -> F64:
    """The joints of the ``ready`` group state, within their limits (else in ``problems``);
    the URDF's ready pose where it names none."""
    joints = model.joint_names
    ready = model.ready.copy()
    for state in root.iter("group_state"):
        if state.get("name") != "ready":
            continue
        for joint in state.iter("joint"):
            name, value = joint.get("name"), _floats(joint.get("value"), 1)
            if name not in joints or value is None:
                problems.append(
                    f"{_where(path, joint)}: expected an actuated joint and a finite value"
                )
                continue
            k = joints.index(name)
            if not model.lower[k] <= value[0] <= model.upper[k]:
                problems.append(
                    f"{_where(path, joint)}: value {value[0]:g} outside the joint's limits "
                    f"[{model.lower[k]:g}, {model.upper[k]:g}]"
                )
            ready[k] = value[0]
    return ready


def _srdf_disabled(
    root: Any, path: Path, model: ArmModel, problems: list[str]
) -> set[frozenset[str]]:
    """The link pairs whose collisions the SRDF disables; a name that is no link, or a link
    without a collision box, is added to ``problems``."""
    disabled: set[frozenset[str]] = set()
    for pair in root.iter("disable_collisions"):
        names = (pair.get("link1"), pair.get("link2"))
        bad = [n for n in names if n not in model.link_names]
        if bad:
            problems.append(
                f"{_where(path, pair)}: {', '.join(repr(b) for b in bad)} names no link of "
                f"{model.source}"
            )
        elif not all(n in model.box_links for n in names):
            problems.append(
                f"{_where(path, pair)}: {names} includes a link without a collision box"
            )
        disabled.add(frozenset(n for n in names if n is not None))
    return disabled

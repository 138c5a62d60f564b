"""A ROS 2 robot's lasers: each scan checked, its beams placed on the robot, all merged.

:class:`_Scans` lays each laser's scan out as it says, places its beams where the laser sits
(``/tf_static`` or the description) and merges every laser's newest into the robot's
:class:`~freelook.hal.RangeScan`; its attributes are made by the robot's ``__init__``.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from freelook.config import LaserConfig
from freelook.hal import RangeScan
from freelook.hardware.ros2._convert import (
    ScanLayout,
    check_scan_layout,
    layout_note,
    scan_ranges,
    scan_sweep,
)
from freelook.hardware.ros2._readings import _finite, _Geometry, _LaserTopic, _Piece, _Readings
from freelook.hardware.ros2._tf import (
    TF_STATIC_TOPIC,
    Mount,
    OdomTfPublisher,
    StaticTree,
    mount_of,
)

__all__: list[str] = []

log = logging.getLogger(__name__)


class _Scans(_Readings):
    """The lasers' scans, merged (a mixin of :class:`~._robot.Ros2Robot`)."""

    tf_static: StaticTree | None
    odom_tf: OdomTfPublisher | None
    _scan: RangeScan | None
    _lasers: dict[str, _LaserTopic]
    _pieces: dict[str, _Piece]
    _geometries: dict[str, _Geometry]
    _merged: tuple[tuple[_Geometry, ...], tuple[npt.NDArray[np.float64], ...]] | None
    _tf_version: int
    _mounts_fixed: bool
    _mounts_said: set[tuple[str, Mount]]

    def _on_tf_static(self, msg: Any) -> None:
        """Static transforms: until the robot runs, the lasers' mounts follow them; after,
        a laser they would move keeps its mount (a node that joins the graph mid-run does not
        move where safety sees obstacles from) and the log says so."""
        tree = self.tf_static
        assert tree is not None
        if self._mounts_fixed:
            tree = tree.copy()
        changed = tree.add(msg.transforms)
        base = self.settings.base_frame
        if base in changed and self.odom_tf is not None:
            self.odom_tf.give_way(f"{TF_STATIC_TOPIC} gives it {tree.parent(base)!r} → {base!r}")
        if changed and not self._mounts_fixed:
            self._tf_version += 1  # each laser's geometry is worked out again at its next scan
        elif changed:
            for key, kept in self._geometries.items():
                mount, source = self._mount(self._lasers[key], kept.frame, tree)
                if mount != kept.mount and (key, mount) not in self._mounts_said:
                    self._mounts_said.add((key, mount))
                    log.warning(
                        "%s: %s now puts the laser at %s; it keeps %s until freelook restarts",
                        self.topics[key][0],
                        source,
                        mount.text(),
                        kept.mount.text(),
                    )
        self._heard("tf_static", self._clock())

    def _on_scan(self, msg: Any, key: str = "scan") -> None:
        """A laser's scan, laid out as it says (:func:`scan_sweep`), merged with the other
        lasers' newest into the robot's scan."""
        now = self._clock()
        laser = self.config.laser
        assert laser is not None
        if self._stale(key, msg.header):
            return
        one = self._lasers[key]
        layout = ScanLayout(
            msg.header.frame_id, float(msg.angle_min), float(msg.angle_increment), len(msg.ranges)
        )
        problem = check_scan_layout(layout, one.config, one.frame, one.where)
        if problem is None and not (
            _finite(msg.range_min, msg.range_max) and 0.0 <= msg.range_min < msg.range_max
        ):
            problem = f"range limits [{msg.range_min}, {msg.range_max}]: not a range"
        if problem is not None:
            self._refuse(key, problem)
            return
        ranges = (
            np.frombuffer(msg.ranges, dtype=np.float32)
            if hasattr(msg.ranges, "tobytes")
            else msg.ranges
        )
        blind = self._blind_sector(np.asarray(ranges, dtype=np.float64), msg)
        if blind is not None:
            self._refuse(key, blind)
            return
        read = scan_ranges(ranges, msg.range_min, msg.range_max, no_hit=laser.range_max)
        if read.invalid:
            self.refused[f"{key} beams"] += read.invalid
        geometry = self._geometry(key, layout, one)
        self._pieces[key] = _Piece(geometry.sweep.arrange(read.ranges), geometry)
        self._scan = self._merge(now)
        self._heard(key, now)

    def _geometry(self, key: str, layout: ScanLayout, one: _LaserTopic) -> _Geometry:
        """The robot-frame beams of a scan so laid out from ``key``'s laser (worked out again,
        and said in the log, only when its layout or its mount changes)."""
        shape = (layout.angle_min, layout.angle_increment, layout.beams)
        kept = self._geometries.get(key)
        version = self._tf_version
        if kept is not None and kept.layout == shape and kept.tf_version == version:
            return kept
        mount, source = self._mount(one, layout.frame_id)
        name = self.topics[key][0]
        if kept is not None and kept.layout == shape and kept.mount == mount:
            kept = self._geometries[key] = kept._replace(tf_version=version)
            return kept
        if kept is None or kept.mount != mount:
            self._say_mount(name, one, mount, source)
        sweep = scan_sweep(layout, mount.yaw, mount.upside_down)
        n = layout.beams
        geometry = _Geometry(
            shape,
            mount,
            layout.frame_id,
            version,
            sweep,
            sweep.bearings(),
            np.full(n, mount.forward),
            np.full(n, mount.left),
        )
        self._geometries[key] = geometry
        if kept is not None and kept.layout == shape:
            return geometry
        config = one.config
        note = layout_note(layout, config) if isinstance(config, LaserConfig) else None
        said = (
            f"{layout.beams} beams from {math.degrees(layout.angle_min):.4g}° every "
            f"{math.degrees(layout.angle_increment):.4g}°"
        )
        if note is not None:
            log.warning("%s: %s", name, note)  # unpinned: the log says so, once a layout
        elif kept is not None:
            log.warning("%s: now %s, taken as the scan says", name, said)
        else:
            log.info("%s: %s", name, said)
        return geometry

    def _mount(
        self, one: _LaserTopic, frame: str, tree: StaticTree | None = None
    ) -> tuple[Mount, str]:
        """Where a laser sits: ``frame``'s pose on the base from the static transforms
        (``tree``, else /tf_static's as the robot started) when they reach it and it lies
        level, else the description's; and whence, in words."""
        d = one.config
        described = Mount(d.mount_forward, d.mount_left, d.yaw, d.upside_down)
        tree, base = tree or self.tf_static, self.settings.base_frame
        if tree is None:
            return described, f"the description's {one.where}"
        if not frame:
            return described, f"the description's {one.where} (the scan names no frame)"
        pose = tree.pose(base, frame)
        if pose is None:
            return described, (
                f"the description's {one.where} (nothing on {TF_STATIC_TOPIC} from {base!r} "
                f"to {frame!r} so far)"
            )
        found = mount_of(pose)
        if isinstance(found, str):
            return described, f"the description's {one.where} ({TF_STATIC_TOPIC}: {found})"
        return found, f"{TF_STATIC_TOPIC} ({base!r} → {frame!r})"

    def _say_mount(self, name: str, one: _LaserTopic, mount: Mount, source: str) -> None:
        d = one.config
        described = Mount(d.mount_forward, d.mount_left, d.yaw, d.upside_down)
        if source.startswith(TF_STATIC_TOPIC) and mount.differs(described):
            log.warning(
                "%s: the laser's mount from %s: %s; the description's %s says %s",
                name,
                source,
                mount.text(),
                one.where,
                described.text(),
            )
        else:
            log.info("%s: the laser's mount from %s: %s", name, source, mount.text())

    def _merge(self, now: float) -> RangeScan:
        """The robot's scan: every laser's newest sweep, the ``[laser]``'s first, each beam
        from its own origin along its own bearing (the joined arrays kept while no layout
        changes)."""
        laser = self.config.laser
        assert laser is not None
        pieces = [self._pieces[k] for k in self._lasers if k in self._pieces]
        if len(pieces) == 1:
            g = pieces[0].geometry
            return RangeScan(
                now, pieces[0].ranges, g.bearings, g.origin_x, g.origin_y, laser.range_max
            )
        geometries = tuple(p.geometry for p in pieces)
        merged = self._merged
        if (
            merged is None
            or len(merged[0]) != len(geometries)
            or any(a is not b for a, b in zip(merged[0], geometries, strict=True))
        ):
            arrays = tuple(
                np.concatenate([getattr(g, name) for g in geometries])
                for name in ("bearings", "origin_x", "origin_y")
            )
            merged = self._merged = (geometries, arrays)
        bearings, ox, oy = merged[1]
        ranges = np.concatenate([p.ranges for p in pieces])
        return RangeScan(
            now, ranges, bearings, ox, oy, laser.range_max, sweep=len(pieces[0].ranges)
        )

    def _blind_sector(self, ranges: npt.NDArray[np.float64], msg: Any) -> str | None:
        """Why the scan is blind (a sector of ``blind_sector_deg`` with no range the laser
        measured, between its limits), or None. inf means "nothing in range" to ROS, so an
        all-inf scan would read as all clear: it is not taken as one."""
        width = math.radians(self.settings.blind_sector_deg)
        if width <= 0.0 or len(ranges) == 0:
            return None
        measured = np.isfinite(ranges) & (ranges >= msg.range_min) & (ranges <= msg.range_max)
        step = abs(float(msg.angle_increment)) or math.inf
        per_sector = max(1, round(width / step))
        for start in range(0, len(ranges), per_sector):
            if not measured[start : start + per_sector].any():
                first = math.degrees(msg.angle_min + start * msg.angle_increment)
                return (
                    f"blind: no measured range in the {self.settings.blind_sector_deg:g}° from "
                    f"{first:.0f}° (inf, NaN or outside the limits); set [ros2] "
                    "blind_sector_deg = 0 for open ground"
                )
        return None

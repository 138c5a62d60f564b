"""Who publishes on a ROS 2 robot's topics: a second publisher is a fault, held.

:class:`_Graph` looks at the ROS graph at start and every ``GRAPH_PERIOD`` while running,
checks the topics' types and says, when a required topic is silent, what is published.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from freelook.hardware.ros2._errors import Ros2Error
from freelook.hardware.ros2._readings import _LaserTopic

__all__: list[str] = []

log = logging.getLogger(__name__)


def _node_name(info: Any) -> str:
    """A publisher's node, as ``ros2 node list`` names it (discovery may not know it yet)."""
    if info.node_name == "_NODE_NAME_UNKNOWN_":
        return "a node not yet named"
    return f"{info.node_namespace.rstrip('/')}/{info.node_name}"


class _Graph:
    """The ROS graph around the robot's node (a mixin of :class:`~._robot.Ros2Robot`)."""

    namespace: str
    node: Any
    topics: dict[str, tuple[str, str]]
    heard: dict[str, float]
    graph_fault: str | None
    _lasers: dict[str, _LaserTopic]
    _cmd_vel: Any
    _news: Callable[[], None]

    def check_graph(self) -> str | None:
        """A second publisher on odometry, scan, IMU, the map, the pose (the robot's own, when
        taken) or ``cmd_vel`` (beside this node): a
        fault, held for the rest of the run (:attr:`graph_fault`, said by :attr:`status`),
        since whatever it publishes cannot be told from the robot's own. Checked at start and
        every :data:`GRAPH_PERIOD` while running."""
        if self.graph_fault is not None:
            return self.graph_fault
        me = (self.node.get_name(), self.node.get_namespace())
        keys = ("odom", *self._lasers, "imu", "map", "pose")
        watched = [self.topics[k][0] for k in keys if k in self.topics]
        for name in [*watched, self._cmd_vel.topic_name]:
            infos = self.node.get_publishers_info_by_topic(name)
            others = [i for i in infos if (i.node_name, i.node_namespace) != me]
            allowed = 0 if name == self._cmd_vel.topic_name else 1
            if len(others) > allowed:
                nodes = ", ".join(sorted({_node_name(i) for i in others}))
                self.graph_fault = (
                    f"{name} has {len(others) + (name == self._cmd_vel.topic_name)} publishers "
                    f"({nodes}{', and this node' if allowed == 0 else ''}): another node "
                    "publishes where only one may; restart once it is gone (SROS2 keeps them "
                    "out: docs/ros2.md)"
                )
                log.error("%s", self.graph_fault)
                self._news()
                return self.graph_fault
        return None

    def _publishers(self, name: str) -> list[str]:
        return [info.topic_type for info in self.node.get_publishers_info_by_topic(name)]

    def _check_types(self) -> None:
        for key, (name, kind) in self.topics.items():
            if key in self.heard:
                continue
            types = self._publishers(name)
            if types and kind not in types:
                raise Ros2Error(
                    f"{name} carries {', '.join(sorted(set(types)))}, expected {kind} "
                    f"(set [ros2.topics] {key} in the robot description)"
                )

    def _silence(self, missing: list[str], timeout: float) -> str:
        names = ", ".join(f"{self.topics[k][0]} ({self.topics[k][1]})" for k in missing)
        there = []
        node = self.node
        me = (node.get_name(), node.get_namespace())
        for name, types in sorted(node.get_topic_names_and_types()):
            others = [
                info
                for info in node.get_publishers_info_by_topic(name)
                if (info.node_name, info.node_namespace) != me
            ]
            if others and name not in ("/rosout", "/parameter_events"):
                there.append(f"{name} ({', '.join(types)})")
        where = f" in namespace /{self.namespace}" if self.namespace else ""
        listing = "; ".join(there) if there else "none"
        return (
            f"no message on {names} within {timeout:g} s{where} "
            f"(ROS_DOMAIN_ID decides which robots are seen); published topics: {listing}"
        )

"""One robot's streams among several: topics under its name, frames in its name, map shared."""

from __future__ import annotations

from typing import Any

from freelook.record import Namespaced, RosStreams, latched


class Collect(RosStreams):
    def __init__(self) -> None:
        super().__init__(lambda: 0.0)
        self.written: list[tuple[str, str, dict[str, Any]]] = []

    def write(self, topic: str, typename: str, message: dict[str, Any], t: float) -> None:
        self.written.append((topic, typename, message))

    def close(self) -> None:
        pass


def test_topics_and_frames_take_the_robots_name_and_the_map_stays_shared() -> None:
    sink = Collect()
    streams = Namespaced(sink, "robot-3")
    streams.odom(1.0, 2.0, 3.0, 0.5, 0.1, 0.0)
    streams.odom(1.0, 2.0, 3.0, 0.5, 0.1, 0.0, topic="/localization", frame_id="map")
    streams.tf(1.0, 2.0, 3.0, 0.5, "map", "odom")
    streams.tf(1.0, 0.1, 0.0, 0.0, "base_link", "laser")
    topics = [topic for topic, _, _ in sink.written]
    assert topics == ["/robot-3/odom", "/robot-3/localization", "/robot-3/tf", "/robot-3/tf"]
    odom, localization, tf, mount = (message for _, _, message in sink.written)
    assert (odom["header"]["frame_id"], odom["child_frame_id"]) == (
        "robot-3/odom",
        "robot-3/base_link",
    )
    assert localization["header"]["frame_id"] == "map"
    assert localization["child_frame_id"] == "robot-3/base_link"
    pairs = [(t["header"]["frame_id"], t["child_frame_id"]) for t in tf["transforms"]]
    pairs += [(t["header"]["frame_id"], t["child_frame_id"]) for t in mount["transforms"]]
    assert pairs == [("map", "robot-3/odom"), ("robot-3/base_link", "robot-3/laser")]


def test_a_robots_latched_topics_are_latched() -> None:
    for topic in ("/map", "/robot-3/map", "/robot-3/tf_static", "/robot-3/robot_description"):
        assert latched(topic), topic
    for topic in ("/robot-3/odom", "/mapping", "/robot-3/map/extra"):
        assert not latched(topic), topic

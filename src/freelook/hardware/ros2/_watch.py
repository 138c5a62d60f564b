"""Watching a running ROS 2 robot for its description (the rclpy side, kept thin).

:func:`watch_robot` looks at the ROS graph until it settles, subscribes to the topics
:func:`choose_topics` picks, hands each message's summary to a :class:`Watch` for
``seconds``, and returns what :func:`describe` writes. It only subscribes: the robot sees a
node listening, nothing published.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import threading
import time
from collections.abc import Callable
from typing import Any

from freelook.hardware.ros2._describe import (
    JOINTS_KEPT,
    ScanSeen,
    TopicChoice,
    TopicGraph,
    Watch,
    blind_sector,
    choose_topics,
)
from freelook.hardware.ros2._description import Description, describe
from freelook.hardware.ros2._rclpy import NodeThread, ros

__all__ = ["describe_robot", "graph_of", "picture_size"]

#: s the graph must stay the same before it is taken as discovered (at most ``settle``)
GRAPH_STILL = 0.6
GRAPH_POLL = 0.1
#: s between looks at the graph while watching; s a watch may last beyond ``seconds`` for a
#: topic discovered late
LOOK_PERIOD = 0.25
LATE = 2.0
#: what every node publishes (not the robot's)
EVERY_NODE = ("/rosout", "/parameter_events")
#: bytes of a compressed picture looked at for its size
HEADER_BYTES = 1 << 16


def picture_size(data: bytes, fmt: str) -> tuple[int, int] | None:
    """(width, height) of a ``CompressedImage``'s JPEG or PNG from its header (None: not
    one, or a header that does not say)."""
    head = bytes(data[:HEADER_BYTES])
    if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:
        return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    if "png" in fmt.lower():
        return None
    import simplejpeg

    try:
        height, width, _, _ = simplejpeg.decode_jpeg_header(bytes(data))
    except (ValueError, RuntimeError):
        return None
    return int(width), int(height)


def graph_of(node: Any) -> TopicGraph:
    """The graph as ``node`` sees it, its own subscriptions left out."""
    me = (node.get_name(), node.get_namespace())
    published: dict[str, tuple[str, ...]] = {}
    subscribed: dict[str, tuple[str, ...]] = {}
    for name, _ in node.get_topic_names_and_types():
        pubs = node.get_publishers_info_by_topic(name)
        subs = [
            i
            for i in node.get_subscriptions_info_by_topic(name)
            if (i.node_name, i.node_namespace) != me
        ]
        if pubs:
            published[name] = tuple(sorted({i.topic_type for i in pubs}))
        if subs:
            subscribed[name] = tuple(sorted({i.topic_type for i in subs}))
    return TopicGraph(published, subscribed)


def _settled(node: Any, namespace: str, settle: float, clock: Callable[[], float]) -> TopicGraph:
    """The graph once it shows odometry in ``namespace`` and has not changed for
    :data:`GRAPH_STILL` s (discovery is incremental), or as it is after ``settle`` s."""
    end = clock() + settle
    graph = graph_of(node)
    still = clock()
    while clock() < end:
        time.sleep(GRAPH_POLL)
        now = graph_of(node)
        if now != graph:
            graph, still = now, clock()
        elif clock() - still >= GRAPH_STILL and choose_topics(graph, namespace).odom:
            break
    return graph


def _lag(node: Any, header: Any) -> float | None:
    stamp = header.stamp.sec + header.stamp.nanosec * 1e-9
    if stamp == 0.0:
        return None
    return float(node.get_clock().now().nanoseconds * 1e-9 - stamp)


def _subscribe(
    node: Any, choice: TopicChoice, watch: Watch, lock: threading.Lock, taken: set[str]
) -> int:
    """Subscribe to the topics of ``choice`` not yet ``taken`` (added to it); how many.

    Over 80 lines: one subscription for each kind of topic with its reader, a list to read
    down rather than logic."""
    r = ros()
    qos = r.qos.qos_profile_sensor_data  # best effort: takes reliable publishers too
    clock = time.monotonic
    before = len(taken)

    def on(topic: str, kind: Any, read: Callable[[Any, float, float | None], None]) -> None:
        if topic in taken:
            return

        def callback(msg: Any) -> None:
            t = clock()
            with lock:
                read(msg, t, _lag(node, msg.header))

        node.create_subscription(kind, topic, callback, qos)
        taken.add(topic)

    if choice.odom is not None:
        odom = choice.odom
        on(
            odom,
            r.Odometry,
            lambda m, t, lag: watch.odom(
                odom,
                t,
                lag,
                str(m.child_frame_id)[:256],
                float(m.twist.twist.linear.x),
                float(m.twist.twist.angular.z),
            ),
        )
    for scan in choice.scans[:4]:

        def read_scan(m: Any, t: float, lag: float | None, topic: str = scan) -> None:
            seen = _scan_seen(m)
            watch.scan(topic, t, lag, seen, blind_sector(m.ranges, seen))

        on(scan, r.LaserScan, read_scan)
    if choice.imu is not None:
        imu = choice.imu

        def read_imu(m: Any, t: float, lag: float | None) -> None:
            rate = m.angular_velocity_covariance[0] != -1.0 and math.isfinite(m.angular_velocity.z)
            watch.imu(imu, t, lag, bool(rate))

        on(imu, r.Imu, read_imu)
    if choice.camera is not None:
        camera = choice.camera
        if choice.camera_compressed:
            on(
                camera,
                r.CompressedImage,
                lambda m, t, lag: watch.image(
                    camera, t, lag, picture_size(m.data, str(m.format)[:64])
                ),
            )
        else:
            on(
                camera,
                r.Image,
                lambda m, t, lag: watch.image(camera, t, lag, (int(m.width), int(m.height))),
            )
    if choice.camera_info is not None:
        info = choice.camera_info
        kind = importlib.import_module("sensor_msgs.msg").CameraInfo
        on(
            info,
            kind,
            lambda m, t, lag: watch.camera_info(info, t, lag, int(m.width), float(m.k[0])),
        )
    if choice.joint_states is not None:
        joints = choice.joint_states
        on(
            joints,
            r.JointState,
            lambda m, t, lag: watch.joint_state(joints, t, lag, list(m.name[: JOINTS_KEPT + 1])),
        )
    if choice.battery is not None:
        battery = choice.battery
        on(battery, r.BatteryState, lambda m, t, lag: watch.other(battery, t, lag))
    return len(taken) - before


def _scan_seen(msg: Any) -> ScanSeen:
    return ScanSeen(
        str(msg.header.frame_id)[:256],
        float(msg.angle_min),
        float(msg.angle_increment),
        len(msg.ranges),
        float(msg.range_min),
        float(msg.range_max),
    )


def describe_robot(
    namespace: str = "",
    seconds: float = 3.0,
    *,
    name: str = "ros2-robot",
    domain_id: int | None = None,
    settle: float = 5.0,
) -> Description:
    """Watch the robot in ``namespace`` for ``seconds`` (after up to ``settle`` s of graph
    discovery) and describe it; blocks meanwhile. :class:`Ros2Error` when rclpy is missing
    or nothing publishes odometry there."""
    thread = NodeThread("freelook_describe", domain_id=domain_id)
    try:
        node = thread.node
        graph = _settled(node, namespace, settle, time.monotonic)
        choice = choose_topics(graph, namespace)
        watch = Watch()
        lock = threading.Lock()
        if choice.odom is not None:
            taken: set[str] = set()
            _subscribe(node, choice, watch, lock, taken)
            thread.start()
            choice = _watch(node, namespace, choice, watch, lock, taken, seconds)
        with lock:
            return describe(
                choice,
                watch,
                namespace=namespace,
                name=name,
                seconds=seconds,
                published=tuple(sorted(set(graph.published) - set(EVERY_NODE))),
            )
    finally:
        thread.close()


def _watch(
    node: Any,
    namespace: str,
    choice: TopicChoice,
    watch: Watch,
    lock: threading.Lock,
    taken: set[str],
    seconds: float,
) -> TopicChoice:
    """Watch for ``seconds``, looking at the graph as it goes: a topic discovered late (a
    loaded machine's discovery comes piecemeal, a subscriber of ``cmd_vel`` too) is taken
    when it shows, the watch lasting a second more for it (at most :data:`LATE` s more)."""
    now = time.monotonic()
    end, limit = now + seconds, now + seconds + LATE
    while (now := time.monotonic()) < end:
        time.sleep(min(LOOK_PERIOD, end - now))
        late = choose_topics(graph_of(node), namespace)
        if late == choice or (late.odom, late.namespace) != (choice.odom, choice.namespace):
            continue
        if late.cmd_vel is None:  # a subscriber seen once stays seen (discovery flickers)
            late = dataclasses.replace(
                late, cmd_vel=choice.cmd_vel, cmd_vel_stamped=choice.cmd_vel_stamped
            )
        if late.pan_tilt_command is None:
            late = dataclasses.replace(
                late,
                pan_tilt_command=choice.pan_tilt_command,
                pan_tilt_trajectory=choice.pan_tilt_trajectory,
            )
        choice = late
        if _subscribe(node, choice, watch, lock, taken):
            end = min(limit, max(end, time.monotonic() + 1.0))
    return choice

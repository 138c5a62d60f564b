"""rclpy and the message packages, imported only when a ROS 2 robot is opened.

The core install needs no ROS: everything here loads on first use, and a missing piece is a
:class:`Ros2Error` that says how to install it.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import threading
import warnings
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from freelook.hardware.ros2._errors import Ros2Error

__all__ = ["INSTALL_HINT", "NodeThread", "ros", "start_context"]

INSTALL_HINT = (
    "install freelook with its ros2 extra (pip install -e '.[ros2]' in its checkout: rclpy and "
    "the message packages of ROS 2 Jazzy as wheels) or run from a shell where a ROS 2 install "
    "is sourced (source /opt/ros/jazzy/setup.bash)"
)

_MESSAGES = {
    "Twist": "geometry_msgs.msg",
    "TwistStamped": "geometry_msgs.msg",
    "Odometry": "nav_msgs.msg",
    "LaserScan": "sensor_msgs.msg",
    "Imu": "sensor_msgs.msg",
    "CompressedImage": "sensor_msgs.msg",
    "Image": "sensor_msgs.msg",
    "JointState": "sensor_msgs.msg",
    "BatteryState": "sensor_msgs.msg",
    "Float64MultiArray": "std_msgs.msg",
    "JointTrajectory": "trajectory_msgs.msg",
    "JointTrajectoryPoint": "trajectory_msgs.msg",
    "OccupancyGrid": "nav_msgs.msg",
    "PoseWithCovarianceStamped": "geometry_msgs.msg",
    "TransformStamped": "geometry_msgs.msg",
    "Bool": "std_msgs.msg",
    "String": "std_msgs.msg",
    "Float64": "std_msgs.msg",
    "Int32": "std_msgs.msg",
    "DiagnosticArray": "diagnostic_msgs.msg",
    "DiagnosticStatus": "diagnostic_msgs.msg",
    "KeyValue": "diagnostic_msgs.msg",
}


@functools.cache
def ros() -> Any:
    """rclpy, its QoS and executor pieces, and the message classes, as one namespace."""
    try:
        with warnings.catch_warnings():
            # the message packages load their type support through lark, which imports a
            # module Python 3.11 deprecates: not ours to fix, nor the user's to see
            warnings.filterwarnings("ignore", "module 'sre_", DeprecationWarning)
            with contextlib.suppress(ImportError):
                importlib.import_module("rosidl_generator_py")
        rclpy = importlib.import_module("rclpy")
        executors = importlib.import_module("rclpy.executors")
        qos = importlib.import_module("rclpy.qos")
        duration = importlib.import_module("rclpy.duration")
        messages = {
            name: getattr(importlib.import_module(module), name)
            for name, module in _MESSAGES.items()
        }
    except ImportError as err:
        raise Ros2Error(f"ROS 2 is not installed here ({err}): {INSTALL_HINT}") from None
    return SimpleNamespace(
        rclpy=rclpy,
        executors=executors,
        qos=qos,
        Duration=duration.Duration,
        **messages,
    )


def start_context(domain_id: int | None) -> Any:
    """An rclpy context of its own, initialised in DDS domain ``domain_id`` (None:
    ``ROS_DOMAIN_ID``), so several nodes of one process (and tests) never share one."""
    r = ros()
    context = r.rclpy.Context()
    try:
        r.rclpy.init(context=context, domain_id=domain_id)
    except Exception as err:  # rclpy's own errors: a bad ROS_DOMAIN_ID, an RMW that fails
        domain = domain_id if domain_id is not None else os.environ.get("ROS_DOMAIN_ID", "0")
        raise Ros2Error(f"could not start ROS 2 in domain {domain}: {err}") from None
    return context


class NodeThread:
    """An rclpy node in a DDS context of its own whose callbacks an executor runs on a
    thread, from :meth:`start` until :meth:`close`.

    ``close`` takes them down in rclpy's order (the executor, its thread, the node, then the
    context), so no callback runs on a destroyed node and the context ends last. ``on_error``
    hears an exception that ends the executor before ``close``.
    """

    def __init__(
        self,
        name: str,
        namespace: str = "",
        *,
        domain_id: int | None = None,
        on_error: Callable[[Exception], None] = lambda err: None,
    ) -> None:
        r = ros()
        self.context = start_context(domain_id)
        try:
            self.node = r.rclpy.create_node(name, namespace=namespace or None, context=self.context)
            self._executor = r.executors.SingleThreadedExecutor(context=self.context)
        except Exception:
            self.context.try_shutdown()
            raise
        self._on_error = on_error
        self._closing = False
        self._thread = threading.Thread(target=self._spin, name=f"ros2 {name}", daemon=True)

    def start(self) -> None:
        """Run the node's callbacks from now on (its publishers and subscriptions made)."""
        self._executor.add_node(self.node)
        self._thread.start()

    @property
    def spinning(self) -> bool:
        """Whether its callbacks run (started, not closed, no error ended them)."""
        return self._thread.is_alive() and not self._closing

    def close(self) -> None:
        """End the node and its context; again: nothing."""
        if self._closing:
            return
        self._closing = True
        self._executor.shutdown(timeout_sec=1.0)
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
        self.node.destroy_node()
        self.context.try_shutdown()

    def _spin(self) -> None:
        try:
            self._executor.spin()
        except Exception as err:  # rclpy's own, e.g. from a context shut down under it
            if not self._closing:
                self._on_error(err)

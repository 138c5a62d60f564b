"""Hardware backends: adapters that put a simulator or a real robot behind the robot program's
hardware interfaces, and :func:`open_robot_server`, which picks one by name."""

from freelook.hardware._open import open_robot_server

__all__ = ["open_robot_server"]

"""Hardware backends: adapters that put a simulator or a real robot behind the robot program's
hardware interfaces, :func:`open_robot_server`, which picks one by name, and
:func:`compile_ahead`, which builds the robot program's compiled loops before it starts."""

from freelook.hardware._ahead import compile_ahead
from freelook.hardware._open import open_robot_server

__all__ = ["compile_ahead", "open_robot_server"]

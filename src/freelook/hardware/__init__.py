"""Hardware backends: adapters that put a simulator or a real robot behind the robot program's
hardware interfaces; :func:`open_robot_server`, which picks one by the scheme of its name in
:data:`BACKENDS`; and :func:`compile_ahead`, which builds the robot program's compiled loops
before it starts."""

from freelook.hardware._ahead import compile_ahead
from freelook.hardware._open import (
    BACKENDS,
    Backend,
    BackendRequest,
    known_backends,
    open_robot_server,
    register_backend,
)

__all__ = [
    "BACKENDS",
    "Backend",
    "BackendRequest",
    "compile_ahead",
    "known_backends",
    "open_robot_server",
    "register_backend",
]

"""Hardware backends: adapters that put a simulator or a real robot behind the robot program's
hardware interfaces; :func:`open_robot_server`, which picks one by the scheme of its name in
:data:`BACKENDS` (:func:`check_backend`: whether it can run in this install); and
:func:`compile_ahead`, which builds the robot program's compiled loops before it starts, and
:func:`release_compiler_pages`, which hands back LLVM's pages once they are loaded."""

from freelook.hardware._ahead import compile_ahead, release_compiler_pages
from freelook.hardware._open import (
    BACKENDS,
    Backend,
    BackendRequest,
    backend_for,
    check_backend,
    known_backends,
    open_robot_server,
    register_backend,
)

__all__ = [
    "BACKENDS",
    "Backend",
    "BackendRequest",
    "backend_for",
    "check_backend",
    "compile_ahead",
    "known_backends",
    "open_robot_server",
    "register_backend",
    "release_compiler_pages",
]

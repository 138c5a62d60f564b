"""Compiling ahead: the robot program's compiled loops built in a child process first.

numba compiles a loop when it first runs and caches it on disk; a process that compiled keeps
LLVM's memory for good. A robot program's first run after an install or an upgrade compiles
everything it runs (on the simulator with its camera, 312 MB where a run from the cache holds
197 MB), and would keep that for its whole life, past the 200 MB it is held to. So
``freelook robot`` first runs the robot program on the simulator for a few seconds in a child
process: every loop the program runs (a global search's and the camera's included) is then in
the cache, and the robot's own process only loads them.

numba keys its cache by each loop's source file and its argument types, not by the robot: a
robot's sizes, speeds and drive are numbers the same loops take, so every robot shares what
the first one compiled (measured: after the Pioneer 3-DX with its camera, the FOI UGV and the
ROS 2 base compile nothing; the first robot with an arm, TAROS or M2P2, its arm's five loops,
and the other nothing). What selects loops of their own is what a robot has: a rendered
camera, an arm, a laser, sonars, a gyro, a pan-tilt unit (:func:`loop_features`). A stamp
beside numba's cache says which of those were compiled for this code and these versions; a
robot whose features the stamps cover goes straight on, and one with a feature none covers
compiles only what that adds.

Loading from the cache still runs LLVM a little: importing numba maps its library, and numba's
runtime compiles a few helpers of its own in every process, so LLVM's code is resident in the
robot's process too (72 MB of libllvmlite.so on the simulator with its camera, all of it clean
pages of the file). Once the robot runs, nothing calls into LLVM: :func:`release_compiler_pages`
hands those pages back (they return from the page cache if a later load or compile touches
them), 271 MB → 201 MB.

Run as ``python -m freelook.hardware._ahead [--camera]`` with the robot's config as JSON on
standard input (the child's side).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import hashlib
import os
import platform
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import llvmlite
import numba
import numpy as np

import freelook
from freelook.config import RobotConfig

__all__ = ["compile_ahead", "loop_features", "release_compiler_pages", "stamp_path"]

#: s a child may take: a first compile of everything took 20–25 s on a 2-core machine
CHILD_TIMEOUT = 900.0
#: s of driving before and after the global search starts (each loop runs at least once)
_DRIVE = 2.0


def _cache_dir() -> Path:
    """Where numba caches freelook's loops (``NUMBA_CACHE_DIR``, else beside the sources when
    they are writable, as numba does), or a user cache directory when neither is."""
    configured = str(getattr(numba.config, "CACHE_DIR", "") or "")  # set from the environment
    if configured:
        return Path(configured)
    package = Path(freelook.__file__).parent
    if os.access(package, os.W_OK):
        return package / "__pycache__"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "freelook"


def _sources() -> bytes:
    """Every source file of the package by path, size and modification time (numba keys its
    cache by the same)."""
    package = Path(freelook.__file__).parent
    lines = []
    for path in sorted(package.rglob("*.py")):
        info = path.stat()
        lines.append(f"{path.relative_to(package)} {info.st_size} {info.st_mtime_ns}")
    return "\n".join(lines).encode()


def loop_features(config: RobotConfig, camera: bool) -> frozenset[str]:
    """What a robot runs that has compiled loops of its own (each adds loops; a robot's
    numbers and its drive's kind are arguments of loops every robot runs)."""
    parts = {
        "camera": camera,  # the simulator renders the robot's cameras
        "arm": config.arm is not None,
        "laser": config.laser is not None,
        "sonar": config.sonar is not None,
        "gyro": config.gyro is not None,
        "pan_tilt": config.pan_tilt is not None,
    }
    return frozenset(name for name, present in parts.items() if present)


def _install() -> str:
    """This code and these versions (numba's cache is valid for them alone)."""
    digest = hashlib.sha256()
    versions = (sys.version, platform.machine(), numba.__version__, llvmlite.__version__)
    # one thread: a global search is never split, and its split loop never compiled
    threads = getattr(numba.config, "NUMBA_NUM_THREADS", 1)
    digest.update(repr((versions, np.__version__, threads)).encode())
    digest.update(_sources())
    return digest.hexdigest()[:32]


_PREFIX = "freelook-compiled-"


def _stamp(install: str, features: frozenset[str]) -> Path:
    return _cache_dir() / f"{_PREFIX}{install}-{'-'.join(sorted(features)) or 'base'}"


def stamp_path(config: RobotConfig, camera: bool) -> Path:
    """The stamp that says the loops of this robot's features were compiled ahead for this
    code and these versions (it exists once they were; robots with the same features share
    it)."""
    return _stamp(_install(), loop_features(config, camera))


def _compiled(install: str) -> list[frozenset[str]]:
    """The feature sets compiled ahead for ``install``, by the stamps in the cache."""
    try:
        names = [p.name for p in _cache_dir().glob(f"{_PREFIX}{install}-*")]
    except OSError:
        return []
    found = []
    for name in names:
        features = name.removeprefix(f"{_PREFIX}{install}-")
        found.append(frozenset() if features == "base" else frozenset(features.split("-")))
    return found


@contextlib.contextmanager
def _one_at_a_time() -> Iterator[None]:
    """Held by one robot process of this machine at a time (a lock file beside the stamps):
    robots started together compile once, the others wait and find the stamps. Without a
    writable cache, nobody waits."""
    try:
        folder = _cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        lock = open(folder / f"{_PREFIX}lock", "a")  # noqa: SIM115 (held for the block)
    except OSError:
        yield
        return
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        yield


def compile_ahead(
    config: RobotConfig, *, camera: bool, notify: Callable[[str], None] | None = None
) -> bool:
    """Compile the robot program's loops in a child process unless the stamps say they are
    in numba's cache already (the loops every robot shares, and those of each of this
    robot's features); returns whether a child compiled. A child that fails leaves no stamp,
    and the robot compiles as it starts, as it would have without this. Robots started at
    once on one machine take turns: one compiles, the others then find its stamps."""
    with _one_at_a_time():
        return _compile_ahead(config, camera, notify)


def _compile_ahead(config: RobotConfig, camera: bool, notify: Callable[[str], None] | None) -> bool:
    install = _install()
    features = loop_features(config, camera)
    compiled = _compiled(install)
    done = frozenset[str]().union(*compiled)
    if compiled and features <= done:  # each feature's loops are its own
        return False
    stamp = _stamp(install, features)
    say = notify or (lambda _: None)
    if not compiled:
        say(
            "compiling the robot program's loops ahead, once for this install "
            "(half a minute or more)"
        )
    else:
        say(
            f"compiling the robot program's loops ahead: what {config.name} adds to those "
            f"every robot shares ({', '.join(sorted(features - done))}), once for this install "
            "(seconds)"
        )
    command = [sys.executable, "-m", "freelook.hardware._ahead"] + (["--camera"] if camera else [])
    try:
        child = subprocess.run(
            command,
            input=config.model_dump_json(),
            capture_output=True,
            text=True,
            timeout=CHILD_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        say(f"compiling ahead failed ({err}); the robot compiles as it starts")
        return False
    if child.returncode != 0:
        last = child.stderr.strip().splitlines()[-1:] or [f"exit status {child.returncode}"]
        say(f"compiling ahead failed ({last[0]}); the robot compiles as it starts")
        return False
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.touch()
    except OSError as err:  # a read-only cache: compiled all the same, asked again next time
        say(f"could not write {stamp} ({err})")
    return True


_MADV_DONTNEED = 4  # <sys/mman.h>


def _llvm_mappings() -> list[tuple[int, int]]:
    """The (start, end) addresses of the read-only mappings of llvmlite's library that hold
    no private copy of a page (code and constants, as in the file), from /proc/self/smaps;
    none where there is no such file."""
    package = str(Path(llvmlite.__file__).parent)
    found: list[tuple[int, int]] = []
    current: tuple[int, int] | None = None
    try:
        with open("/proc/self/smaps") as smaps:
            for line in smaps:
                fields = line.split()
                if not fields[0].endswith(":"):  # a mapping's first line: range, mode, ..., path
                    current = None
                    if len(fields) > 5 and fields[5].startswith(package) and "w" not in fields[1]:
                        start, end = fields[0].split("-")
                        current = (int(start, 16), int(end, 16))
                elif current is not None and fields[0] == "Anonymous:" and fields[1] == "0":
                    found.append(current)
    except OSError:
        return []
    return found


def release_compiler_pages() -> int:
    """Drop LLVM's pages from this process's resident memory, once its compiled loops are
    loaded; returns the bytes of the mappings released. Only pages that are the file's own
    are dropped (a later access reads them again from the page cache), so it is safe at any
    time and undone by nothing but a further load or compile."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    released = 0
    for start, end in _llvm_mappings():
        if libc.madvise(start, end - start, _MADV_DONTNEED) == 0:  # locked pages: kept
            released += end - start
    return released


def _run_program(config: RobotConfig, camera: bool) -> None:
    """The child: the robot program on the simulator in the lab, driving, then searching the
    map from scratch while it drives on, its cameras captured now and then."""
    from freelook.hardware.sim import SimulatedRobot
    from freelook.link import VelocityCommand
    from freelook.maps import load_world

    robot = SimulatedRobot(config, load_world("lab"), camera=camera)  # at the lab's start
    period = config.link.operator_tx_spacing
    cameras = [robot.hardware.camera] if robot.hardware.camera is not None else []
    cameras += list(robot.hardware.stream_cameras.values())
    for phase in range(2):
        if phase == 1:
            robot.core.estimator.global_localization()
        for k in range(round(_DRIVE / period)):
            robot.send(VelocityCommand(0.3, 0.4 if phase == 0 else -0.4))
            robot.run_for(period)
            if k % 10 == 0:
                for device in cameras:
                    device.capture()
    robot.close()


if __name__ == "__main__":
    _run_program(RobotConfig.model_validate_json(sys.stdin.read()), "--camera" in sys.argv[1:])

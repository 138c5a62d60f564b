"""``tools/demo.sh`` installs only when it must: the first time, after pyproject.toml changed,
when the environment lost its ``freelook``, and again after an install that failed; else it
starts the demo at once. It never needs npm.

It runs here as written, in a copy of the repository's top (the script and pyproject.toml),
with a ``python3`` on ``PATH`` that makes a stand-in environment and writes down every call."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INSTALL = "pip install -q -e ."
#: ``python3 -m venv .venv``: an environment whose python logs its calls, whose pip install
#: makes bin/freelook (or fails, when the file FAIL exists), and whose freelook logs its own
PYTHON3 = r"""#!/usr/bin/env bash
echo "python3 $*" >> "$LOG"
mkdir -p .venv/bin
cat > .venv/bin/python <<'EOF'
#!/usr/bin/env bash
args="$*"
echo "${args#-m }" >> "$LOG"
if [ "$*" = "-m pip install -q -e ." ]; then
    [ -e FAIL ] && exit 1
    printf '#!/usr/bin/env bash\necho "freelook $*" >> "$LOG"\n' > .venv/bin/freelook
    chmod +x .venv/bin/freelook
fi
EOF
chmod +x .venv/bin/python
"""


def _tree(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    top = tmp_path / "repo"
    (top / "tools").mkdir(parents=True)
    shutil.copy(ROOT / "tools" / "demo.sh", top / "tools" / "demo.sh")
    shutil.copy(ROOT / "pyproject.toml", top / "pyproject.toml")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(PYTHON3)
    (bin_dir / "python3").chmod(0o755)
    for tool in ("bash", "cmp", "cp", "mkdir", "cat", "chmod", "dirname"):
        found = shutil.which(tool)
        assert found is not None, tool
        (bin_dir / tool).symlink_to(found)  # no npm, no node: only these
    env = {"PATH": str(bin_dir), "LOG": str(tmp_path / "log"), "HOME": str(tmp_path)}
    return top, env


def _run(top: Path, env: dict[str, str]) -> list[str]:
    """demo.sh sim, and the calls it made."""
    log = Path(env["LOG"])
    log.unlink(missing_ok=True)
    done = subprocess.run(
        ["bash", "tools/demo.sh", "sim"], cwd=top, env=env, capture_output=True, text=True
    )
    calls = log.read_text().splitlines() if log.exists() else []
    return [*calls, f"exit {done.returncode}"]


def test_demo_installs_only_when_it_must(tmp_path: Path) -> None:
    top, env = _tree(tmp_path)
    install = ["python3 -m venv .venv", "pip install -q --upgrade pip", INSTALL]
    assert _run(top, env) == [*install, "freelook sim", "exit 0"]
    assert _run(top, env) == ["freelook sim", "exit 0"]  # nothing changed: straight on
    with (top / "pyproject.toml").open("a") as pyproject:
        pyproject.write("\n# a new dependency\n")
    assert _run(top, env) == [*install, "freelook sim", "exit 0"]
    assert _run(top, env) == ["freelook sim", "exit 0"]
    os.remove(top / ".venv" / "bin" / "freelook")
    assert _run(top, env) == [*install, "freelook sim", "exit 0"]


def test_demo_tries_again_after_an_install_that_failed(tmp_path: Path) -> None:
    top, env = _tree(tmp_path)
    assert _run(top, env)[-3:] == [INSTALL, "freelook sim", "exit 0"]
    with (top / "pyproject.toml").open("a") as pyproject:
        pyproject.write("\n# a new dependency\n")
    (top / "FAIL").touch()  # the new dependency does not install
    assert _run(top, env)[-2:] == [INSTALL, "exit 1"]
    (top / "FAIL").unlink()
    assert _run(top, env)[-3:] == [INSTALL, "freelook sim", "exit 0"]
    assert _run(top, env) == ["freelook sim", "exit 0"]

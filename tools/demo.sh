#!/usr/bin/env bash
# Start the demo, setting up the virtual environment first when it is missing or pyproject.toml
# changed since it was installed (a copy of the pyproject.toml installed from is kept in it).
# Python alone: the pages' three.js ships inside the package; npm serves only the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
installed=.venv/freelook-installed-pyproject.toml
if [ ! -x .venv/bin/freelook ] || ! cmp -s pyproject.toml "$installed"; then
    python3 -m venv .venv
    .venv/bin/python -m pip install -q --upgrade pip
    .venv/bin/python -m pip install -q -e .
    cp pyproject.toml "$installed"
fi
exec .venv/bin/freelook "$@"

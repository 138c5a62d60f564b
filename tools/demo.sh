#!/usr/bin/env bash
# Set up a virtual environment (if needed) and start the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e .
# the cockpit's 3-D arm view (three.js); without npm the rest of the cockpit still works
if command -v npm >/dev/null 2>&1; then npm ci --no-audit --no-fund --loglevel=error; fi
exec .venv/bin/freelook "$@"

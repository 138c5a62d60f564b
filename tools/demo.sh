#!/usr/bin/env bash
# Set up a virtual environment (if needed) and start the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e .
exec .venv/bin/freelook "$@"

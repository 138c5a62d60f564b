"""``python -m tools.bench``: ``freelook bench`` with the test rig's benchmarks beside the
shipped ones (the floods, :mod:`tools.attack.bench_cases`); the same arguments and options,
e.g. ``python -m tools.bench link.flood``. Run from the repository's root."""

from __future__ import annotations

import sys

import tools.attack.bench_cases  # noqa: F401 (registers the flood benchmarks)
from freelook.cli import app


def main() -> None:
    app(["bench", *sys.argv[1:]], prog_name="python -m tools.bench")


if __name__ == "__main__":
    main()

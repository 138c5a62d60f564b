"""Regenerate the cockpit's pictures in docs/ from the current page.

    .venv/bin/python tools/screenshots.py                  # both, into docs/
    .venv/bin/python tools/screenshots.py cockpit-trajectory.png --out /tmp/shots

It starts ``freelook sim`` (the Pioneer 3-DX in ``lab``, as the cockpit tests do), opens the
cockpit in Debian's Chromium, drives it into each picture's scene and saves the page
(1500 × 900 CSS px): ``cockpit-free-look.png`` in Free Look with the map, laser, sonar and
safety zones, ``cockpit-trajectory.png`` tracking the ellipse. The scenes, the sim's start and
the browser are the tests' own (tests/web/cockpit_scenes.py, tests/web/conftest.py), so a
picture shows what tests/web/test_cockpit.py checks. A picture is written only once its scene
is reached: a failure leaves the old file in place and names the wait that ran out.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "web"), str(ROOT / "tests")]  # as pytest finds them

from cockpit_scenes import SCENES, open_cockpit  # noqa: E402

from conftest import CHROMIUM, chromium, start_sim  # noqa: E402

#: a page in steady use: not saying it is behind (a freshly opened page falls behind while it
#: starts up, and says so for a few seconds after) and showing nothing stale
STEADY = "!window.freelook.pageBehind && !window.freelook.stale"
SETTLE_S = 15


def settle(page: Any, name: str) -> None:
    """Waits for the page to be steady; after SETTLE_S it is pictured as it is, with a word."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(STEADY, timeout=SETTLE_S * 1000, polling=100)
    except PlaywrightTimeout:
        print(f"{name}: the page was not steady after {SETTLE_S} s; pictured as it is")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("names", nargs="*", help=f"pictures to take: {', '.join(SCENES)} (all)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs", help="their folder (docs/)")
    args = parser.parse_args()
    unknown = sorted(set(args.names) - set(SCENES))
    if unknown:
        parser.error(f"no scene for {', '.join(unknown)}: there are {', '.join(SCENES)}")
    if not Path(CHROMIUM).exists():
        parser.error(f"Chromium is not installed ({CHROMIUM}): apt-get install chromium")
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        sim = start_sim(Path(scratch))
        try:
            with chromium() as browser:
                for name in args.names or SCENES:
                    page, errors = open_cockpit(browser, sim)
                    with SCENES[name](page):
                        settle(page, name)
                        picture = page.screenshot()
                    page.close()
                    (args.out / name).write_bytes(picture)
                    print(f"wrote {args.out / name}" + (f" (page errors: {errors})" * bool(errors)))
        finally:
            sim.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

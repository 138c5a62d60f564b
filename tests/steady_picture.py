"""The cockpit's own motion stop on a frozen picture (``guard.js``) set to its longest, 10 s,
for a browser test of something else: the stop latches until a click, and on a busy machine
(tests side by side, Chromium painting late) a picture a second old latched it in the middle of
such tests, whose jogs and drives then moved nothing. ``tests/web/test_motion_stop.py`` tests
the stop itself, at its default.

A page takes it before it loads: ``page.add_init_script(STEADY_PICTURE)`` (``tests/`` is on
``sys.path``).
"""

__all__ = ["STEADY_PICTURE"]

STEADY_PICTURE = """document.addEventListener("DOMContentLoaded", () => {
  const field = document.getElementById("freeze-s");
  if (field) field.value = "10";
});"""

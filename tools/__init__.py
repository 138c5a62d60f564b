"""The project's own tooling, outside the shipped ``freelook`` package: scripts that write
its robot models and screenshots, and the test rig (:mod:`tools.attack`) that the tests and the
security notes run. Run from the repository's root (``python -m tools.attack``)."""

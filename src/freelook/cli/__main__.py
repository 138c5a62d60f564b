"""``python -m freelook.cli``."""

from freelook.cli import main

main()

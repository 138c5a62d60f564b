"""freelook: teleoperation stack for ground robots."""

__version__ = "0.1.0"
__all__ = ["__version__"]

"""The operator station: link to the robot, operator-side modes, browsers."""

from freelook.operator._station import OperatorStation

__all__ = ["OperatorStation"]

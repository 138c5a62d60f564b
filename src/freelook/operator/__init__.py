"""The operator station: its sans-I/O core (browser inputs in, link messages out), the browser
protocol, operator-side planning, where the robot is now through the link's delay
(:class:`MotionPredictor`), what the page is shown, the station on a link (one robot, or
a fleet on a Zenoh bus) and its live Foxglove bridge. It knows the robot only through the link:
the processes of a session are started by :mod:`freelook.launch`."""

from freelook.operator._browser import (
    BrowserInput,
    RefusedInputError,
    StickScales,
    parse_browser_message,
)
from freelook.operator._core import OPERATOR_STATION, StationCore
from freelook.operator._fleet import MAX_ROBOTS, FleetStation
from freelook.operator._foxglove import FoxgloveBridge
from freelook.operator._prediction import MotionPredictor, PredictedPose, Prediction
from freelook.operator._station import OperatorStation

__all__ = [
    "MAX_ROBOTS",
    "OPERATOR_STATION",
    "BrowserInput",
    "FleetStation",
    "FoxgloveBridge",
    "MotionPredictor",
    "OperatorStation",
    "PredictedPose",
    "Prediction",
    "RefusedInputError",
    "StationCore",
    "StickScales",
    "parse_browser_message",
]

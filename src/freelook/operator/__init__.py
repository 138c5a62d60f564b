"""The operator station: its sans-I/O core (browser inputs in, link messages out), the browser
protocol, operator-side planning, what the page is shown, and the processes of a session."""

from freelook.operator._app import (
    SessionOptions,
    default_run_path,
    run_operator,
    run_session,
    web_access,
)
from freelook.operator._browser import BrowserInput, RefusedInputError, parse_browser_message
from freelook.operator._core import OPERATOR_STATION, StationCore
from freelook.operator._fleet import (
    FleetStation,
    fleet_names,
    run_fleet_operator,
    run_fleet_session,
)
from freelook.operator._station import OperatorStation

__all__ = [
    "OPERATOR_STATION",
    "BrowserInput",
    "FleetStation",
    "OperatorStation",
    "RefusedInputError",
    "SessionOptions",
    "StationCore",
    "default_run_path",
    "fleet_names",
    "parse_browser_message",
    "run_fleet_operator",
    "run_fleet_session",
    "run_operator",
    "run_session",
    "web_access",
]

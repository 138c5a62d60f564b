"""A JAUS gateway: the gateway's core (access control, driving, reports) and its I/O shell that
talks to a robot as an authenticated operator station. The JUDP codec it speaks is
:mod:`freelook.judp`; :class:`JausId` is re-exported here because the gateway's own id is one.
See docs/jaus.md."""

from freelook.jaus._gateway import (
    MAX_CLIENTS,
    MAX_PENDING,
    MAX_REPLIES,
    Address,
    GatewayOptions,
    GatewayOutput,
    JausGateway,
)
from freelook.jaus._runner import JAUS_PORT, JausBridge, run_gateway
from freelook.judp import JausId

__all__ = [
    "JAUS_PORT",
    "MAX_CLIENTS",
    "MAX_PENDING",
    "MAX_REPLIES",
    "Address",
    "GatewayOptions",
    "GatewayOutput",
    "JausBridge",
    "JausGateway",
    "JausId",
    "run_gateway",
]

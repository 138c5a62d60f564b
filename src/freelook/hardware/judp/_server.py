"""The robot program served on a link, over a JAUS robot (``--hardware judp://…``)."""

from freelook.hardware.judp._robot import JausRobot
from freelook.robot import ConnectedRobotOpener

__all__ = ["open_judp_server"]

#: ``await open_judp_server(config, url, options, robot_map=…, recorder=…, start=…)``: discover
#: the JAUS robot at ``url``, take control of it, then build the robot server. Raises
#: :class:`JausRobotError` naming the address, what was asked and what was answered when the
#: robot does not answer discovery, refuses control or offers no drive service. The server
#: keeps the robot (keep-alive, sensor queries) as a backend task and releases control when
#: it ends.
open_judp_server = ConnectedRobotOpener(JausRobot.from_config)

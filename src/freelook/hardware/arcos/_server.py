"""The robot program served on a link, over an ARCOS robot (``--hardware arcos://…``)."""

from freelook.hardware.arcos._robot import ArcosRobot
from freelook.robot import ConnectedRobotOpener

__all__ = ["open_arcos_server"]

#: ``await open_arcos_server(config, url, options, robot_map=…, recorder=…, start=…)``: connect
#: to the robot at ``url``, then build the robot server over it. The robot believes it stands
#: at ``start`` on its map (checked against the map), or at the map's start (its
#: ``RobotHome``), as ARNL assumes at startup; with no map, at ``start`` or the odometry
#: origin. Raises :class:`ArcosError` naming the host or device when the robot cannot be
#: reached or does not answer the handshake. The server runs :meth:`ArcosRobot.run` as a
#: backend task, which keeps the link (reconnecting) and sends STOP and CLOSE when it ends.
open_arcos_server = ConnectedRobotOpener(ArcosRobot.from_config)

"""Worlds: occupancy grid plus objects, loaders for ROS map_server and ARIA .map files."""

from freelook.sim.world._model import World, WorldObject

__all__ = ["World", "WorldObject"]

"""Worlds: occupancy grid plus objects, loaders for ROS map_server and ARIA .map files."""

from freelook.sim.world._loaders import (
    builtin_worlds,
    load_aria_map,
    load_ros_map,
    load_toml_world,
    load_world,
)
from freelook.sim.world._model import World, WorldObject

__all__ = [
    "World",
    "WorldObject",
    "builtin_worlds",
    "load_aria_map",
    "load_ros_map",
    "load_toml_world",
    "load_world",
]

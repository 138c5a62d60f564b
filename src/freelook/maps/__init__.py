"""Maps and worlds: occupancy grids with named objects, their loaders (freelook TOML, ROS
``map_server`` YAML + PGM, ARIA ``.map``), rasterisation and ray casting.

The simulator builds its world from them; the robot program loads the same files as its map;
localization, the operator station and reports read them too. Nothing here knows whether a map
describes a simulated or a real place.
"""

from freelook.maps._loaders import (
    builtin_worlds,
    load_aria_map,
    load_ros_map,
    load_toml_world,
    load_world,
)
from freelook.maps._model import World, WorldObject
from freelook.maps._raycast import cast_rays, cast_rays_from, cast_rays_reference

__all__ = [
    "World",
    "WorldObject",
    "builtin_worlds",
    "cast_rays",
    "cast_rays_from",
    "cast_rays_reference",
    "load_aria_map",
    "load_ros_map",
    "load_toml_world",
    "load_world",
]

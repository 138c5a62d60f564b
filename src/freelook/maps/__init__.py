"""Maps and worlds: occupancy grids with named objects, places and keep-out areas, their
loaders (freelook TOML, ROS ``map_server`` YAML + image, ARIA ``.map``), rasterisation, ray
casting, and where a robot can start.

The simulator builds its world from them; the robot program loads the same files as its map;
localization, the operator station and reports read them too. Nothing here knows whether a map
describes a simulated or a real place.
"""

from freelook.maps._differences import MapDifferences, lab_on_the_day
from freelook.maps._distance import distance_to_background, grow, interpolate_linear
from freelook.maps._loaders import (
    builtin_worlds,
    load_aria_map,
    load_ros_map,
    load_toml_world,
    load_world,
    world_of_occupancy,
)
from freelook.maps._model import KeepOut, Place, World, WorldObject
from freelook.maps._raycast import (
    cast_beams,
    cast_beams_from,
    cast_fan,
    cast_rays,
    cast_rays_from,
    cast_rays_reference,
    clearance_of,
    enclosed_of,
    grid_key,
    unit_vectors,
)
from freelook.maps._start import FreeSpace, choose_start, footprint_free

__all__ = [
    "FreeSpace",
    "KeepOut",
    "MapDifferences",
    "Place",
    "World",
    "WorldObject",
    "builtin_worlds",
    "cast_beams",
    "cast_beams_from",
    "cast_fan",
    "cast_rays",
    "cast_rays_from",
    "cast_rays_reference",
    "choose_start",
    "clearance_of",
    "distance_to_background",
    "enclosed_of",
    "footprint_free",
    "grid_key",
    "grow",
    "interpolate_linear",
    "lab_on_the_day",
    "load_aria_map",
    "load_ros_map",
    "load_toml_world",
    "load_world",
    "unit_vectors",
    "world_of_occupancy",
]

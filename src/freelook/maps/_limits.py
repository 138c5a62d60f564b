"""The bounds every world loader holds a file to, before it allocates from what the file says."""

from __future__ import annotations

__all__ = ["MAX_CELLS", "MAX_IMAGE_BYTES", "MAX_TEXT_BYTES"]

MAX_CELLS = 50_000_000
MAX_TEXT_BYTES = 16 << 20  # a world, a map_server YAML: text a person wrote or a tool saved
MAX_IMAGE_BYTES = 256 << 20  # an occupancy image or an ARIA map of MAX_CELLS and more

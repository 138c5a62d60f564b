"""The simulated first-person camera and its JPEG encoder."""

from freelook.sim.camera._camera import Camera
from freelook.sim.camera._render import render_frame

__all__ = ["Camera", "render_frame"]

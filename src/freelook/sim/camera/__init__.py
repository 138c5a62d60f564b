"""The simulated first-person camera and its JPEG encoder."""

from freelook.sim.camera._camera import Camera, decode_jpeg, encode_jpeg
from freelook.sim.camera._render import render_frame

__all__ = ["Camera", "decode_jpeg", "encode_jpeg", "render_frame"]

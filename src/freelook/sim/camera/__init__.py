"""The simulated first-person cameras (the driving camera on the pan-tilt unit, cameras fixed
to an arm link) and their renderer."""

from freelook.sim.camera._camera import Camera
from freelook.sim.camera._link_camera import MAX_TILT, LinkCamera, mount_transform
from freelook.sim.camera._render import render_frame
from freelook.sim.camera._thermal import ThermalCamera

__all__ = ["MAX_TILT", "Camera", "LinkCamera", "ThermalCamera", "mount_transform", "render_frame"]

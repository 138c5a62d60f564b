"""The operator's view over a radio-like link, in simulated time through the experiments'
channel model (seeded: the same run every time): 320 × 240 at 15 fps over 250 kbit/s shared
with telemetry, 10 % of packets lost each way, then 40 %. The acceptance figures of the video
work: ≥ 10 fps with mean SSIM ≥ 0.90 and no freeze over 1 s at 10 %, ≥ 4 × JPEG's frame rate
at the same budget; at 40 % it degrades without a freeze over 2 s, at a lower bitrate."""

from __future__ import annotations

from freelook.link import VideoCodec
from freelook.video._bench import camera
from freelook.video._link_run import run_link


def _loss(t: float) -> float:
    return 0.1 if t < 15.0 else 0.4


def test_vp9_holds_the_picture_on_a_lossy_radio_and_jpeg_does_not() -> None:
    render = camera(320, 240)
    vp9 = run_link(VideoCodec.VP9, render, seconds=30.0, loss=_loss, seed=3)
    jpeg = run_link(VideoCodec.JPEG, render, seconds=30.0, loss=_loss, seed=3)
    fps = vp9.fps(1.0, 15.0)
    assert fps >= 10.0
    assert vp9.mean_ssim(1.0, 15.0) >= 0.90
    assert vp9.longest_freeze(1.0, 15.0) <= 1.0
    assert fps >= 4 * jpeg.fps(1.0, 15.0)
    # 40 % loss: fewer frames, none frozen for over 2 s, and the robot lowered its bitrate
    assert vp9.fps(16.0, 30.0) < fps
    assert vp9.longest_freeze(16.0, 30.0) <= 2.0
    assert vp9.bitrate(20.0, 30.0) < 0.8 * vp9.bitrate(5.0, 15.0)


def test_a_clean_link_needs_no_keyframe_requests() -> None:
    """No loss: every frame shown, the picture close to the camera's, nothing asked for."""
    run = run_link(VideoCodec.VP9, camera(320, 240), seconds=6.0, loss=0.0, seed=0)
    assert run.keyframe_requests == 0
    assert run.fps(1.0, 6.0) >= 14.0
    assert run.mean_ssim(1.0, 6.0) >= 0.93

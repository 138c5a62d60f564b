"""A camera known only by its frames (a ROS 2 topic's: the robot's description says 640 × 480,
the topic sends 64 × 48 JPEGs) goes out with the inter-frame codec at its frames' own size,
not scaled up to the described one; a frame of another size later reopens the encoder at it."""

from __future__ import annotations

import av
import numpy as np
import numpy.typing as npt

from freelook.link import VideoCodec
from freelook.robot._video import InterStream


def frame(width: int, height: int) -> npt.NDArray[np.uint8]:
    image = np.zeros((height, width, 3), np.uint8)
    image[:, : width // 2] = (230, 60, 20)
    return image


def test_the_frames_own_size_wins_over_the_described_one() -> None:
    inter = InterStream(0, object(), VideoCodec.VP9, (640, 480), 10.0, 2e6, shaped=False)  # type: ignore[arg-type]
    decoder = av.CodecContext.create("vp9", "r")
    sizes = []
    for i in range(12):
        image = frame(64, 48) if i < 8 else frame(160, 120)  # then the topic's size changed
        sent = inter._encode([], image, 0.1 * i, 0.1 * i)
        assert sent is not None
        (picture,) = decoder.decode(av.Packet(sent.data))
        sizes.append((sent.width, sent.height, sent.keyframe, picture.width, picture.height))
    assert sizes[0] == (64, 48, True, 64, 48)
    assert all(s[:3] == (64, 48, False) for s in sizes[1:8])
    assert sizes[8] == (160, 120, True, 160, 120)  # reopened at the new size: a keyframe
    assert all(s[:2] == (160, 120) for s in sizes[8:])

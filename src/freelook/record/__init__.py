"""Recording runs to MCAP with ROS 2 schemas, reading them back and repairing cut-off files."""

from freelook.record._arm import ArmRecording
from freelook.record._description import robot_urdf
from freelook.record._figures import (
    draw_grid,
    drop_limits,
    link_figure,
    path_figure,
    path_limits,
)
from freelook.record._reader import (
    RecordedMessage,
    RecordingError,
    RecordingInfo,
    read_messages,
    recording_info,
    topic_counts,
)
from freelook.record._repair import RepairError, RepairReport, repair
from freelook.record._report import build_report
from freelook.record._run_data import RunData, load_run
from freelook.record._run_stats import (
    DirectionFigures,
    SafetyEpisode,
    direction_figures,
    link_table,
    safety_episodes,
    summary_lines,
)
from freelook.record._schemas import DEFINITIONS, full_definition
from freelook.record._stream_sinks import Namespaced, Tee
from freelook.record._streams import Direction, RosSchema, RosStreams, ros_schema
from freelook.record._video import VIDEO_FORMATS, compressed_video, video_topic
from freelook.record._writer import (
    LATCHED_TOPICS,
    BackgroundRecorder,
    Recorder,
    RecorderStats,
    RecorderView,
    StreamWriter,
    latched,
)

__all__ = [
    "DEFINITIONS",
    "LATCHED_TOPICS",
    "VIDEO_FORMATS",
    "ArmRecording",
    "BackgroundRecorder",
    "Direction",
    "DirectionFigures",
    "Namespaced",
    "RecordedMessage",
    "Recorder",
    "RecorderStats",
    "RecorderView",
    "RecordingError",
    "RecordingInfo",
    "RepairError",
    "RepairReport",
    "RosSchema",
    "RosStreams",
    "RunData",
    "SafetyEpisode",
    "StreamWriter",
    "Tee",
    "build_report",
    "compressed_video",
    "direction_figures",
    "draw_grid",
    "drop_limits",
    "full_definition",
    "latched",
    "link_figure",
    "link_table",
    "load_run",
    "path_figure",
    "path_limits",
    "read_messages",
    "recording_info",
    "repair",
    "robot_urdf",
    "ros_schema",
    "safety_episodes",
    "summary_lines",
    "topic_counts",
    "video_topic",
]

"""``freelook robot``'s video options refuse what they cannot use: one line, exit code 2."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from freelook.cli import app


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--video", "mpeg2"], "--video"),
        (["--link-rate", "fast"], "--link-rate"),
        (["--link-rate", "100"], "--link-rate"),
        (["--camera", "http://127.0.0.1/cam"], "--camera"),
        (["--camera", "file:///nonexistent/clip.mp4"], "--camera"),
    ],
)
def test_a_bad_video_option_is_one_line_and_exit_2(args: list[str], needle: str) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["robot", "--insecure", "--listen", "udp://127.0.0.1:0", *args])
    assert result.exit_code == 2, result.output
    assert needle in result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1

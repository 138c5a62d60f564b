"""What an experiment returns: a table of rows, each with the paper's figure beside ours."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["ExperimentResult", "Progress", "Row", "TrialTable"]

Progress = Callable[[int, int], None]


@dataclass
class Row:
    """One line of a table. A row with a paper value runs under the paper's own conditions
    (``conditions`` names the sensors, the controller, the map and the seeds); freelook's
    improvements are rows of their own that say what differs."""

    what: str
    paper: str
    ours: str
    target: str = ""
    ok: bool | None = None
    conditions: str = ""


@dataclass
class TrialTable:
    """Each trial's figures beside the paper's own, one line a trial (the paper's first)."""

    title: str
    header: list[str]
    lines: list[list[str]] = field(default_factory=list)


@dataclass
class ExperimentResult:
    name: str
    title: str
    source: str
    command: str
    rows: list[Row] = field(default_factory=list)
    details: dict[str, object] = field(default_factory=dict)
    #: what the tables need said beside them: how a model was calibrated, why a row does
    #: not land in the paper's band
    notes: list[str] = field(default_factory=list)
    #: each trial beside the paper's, where the paper gives its trials
    trials: list[TrialTable] = field(default_factory=list)
    #: the Markdown section this result is written to ("": its name)
    section: str = ""

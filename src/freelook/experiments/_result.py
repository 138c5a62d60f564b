"""What an experiment returns: a table of rows, each with the paper's figure beside ours."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["ExperimentResult", "Progress", "Row"]

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

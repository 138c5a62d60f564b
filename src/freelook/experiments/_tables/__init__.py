"""The papers' tables, like for like first: each row with a paper value runs under the paper's
own conditions and carries its target; freelook's improvements follow as rows of their own that
say what differs. Every verdict is computed from the runs. One module per source:
:mod:`._laps` and :mod:`._translation` (Ögren 2013's Tables 2–3 and 4; its Figs. 6–7 are
:mod:`freelook.experiments._figures_table`), :mod:`._ellipse` and :mod:`._packet_drop` (the
thesis's Tables 7.2 and 7.1), :mod:`._reckless` (the thesis §7.1.4); and :mod:`._latency`,
ours (driving through delay)."""

from freelook.experiments._tables._ellipse import (
    TABLE_7_2,
    TIME_TOLERANCE,
    ellipse_row,
    ellipse_table,
)
from freelook.experiments._tables._format import Verdict
from freelook.experiments._tables._laps import (
    LAP_SIDE,
    lap_tolerance,
    laps_verdict,
    paper_laps,
    square_laps_table,
)
from freelook.experiments._tables._latency import COCKPITS, latency_jobs, latency_table
from freelook.experiments._tables._packet_drop import packet_drop_row, packet_drop_table
from freelook.experiments._tables._reckless import (
    RecklessJob,
    RecklessVerdict,
    reckless_jobs,
    reckless_sections,
    reckless_table,
    reckless_verdict,
)
from freelook.experiments._tables._translation import (
    TABLE_4,
    translation_table,
    translation_verdict,
)

__all__ = [
    "COCKPITS",
    "LAP_SIDE",
    "TABLE_4",
    "TABLE_7_2",
    "TIME_TOLERANCE",
    "RecklessJob",
    "RecklessVerdict",
    "Verdict",
    "ellipse_row",
    "ellipse_table",
    "lap_tolerance",
    "laps_verdict",
    "latency_jobs",
    "latency_table",
    "packet_drop_row",
    "packet_drop_table",
    "paper_laps",
    "reckless_jobs",
    "reckless_sections",
    "reckless_table",
    "reckless_verdict",
    "square_laps_table",
    "translation_table",
    "translation_verdict",
]

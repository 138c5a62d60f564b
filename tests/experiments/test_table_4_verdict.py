"""Table 4's verdict from the paper's own scatter: the mean within the paper's mean ± 2
standard errors, each run within its mean ± 2 sd of one run, every run covering its 1.6 m."""

from __future__ import annotations

import statistics

from freelook.experiments._scenarios import TranslationResult
from freelook.experiments._tables import TABLE_4, translation_verdict


def _runs(*hs_cm: float, covered: float = 1.8) -> list[TranslationResult]:
    return [TranslationResult(abs(h) / 100, abs(h) / 100, covered, h / 100) for h in hs_cm]


def test_the_papers_own_runs_meet_the_paper_row() -> None:
    assert translation_verdict(_runs(*TABLE_4), like=True).met
    assert statistics.stdev(TABLE_4) > 13.0  # -1...32 cm: a wide scatter, hence the bands


def test_one_run_outside_the_papers_scatter_misses_though_the_mean_is_in_band() -> None:
    # mean 18 cm, in 8.5...27.3 cm; one run at 50 cm, over the mean + 2 sd of 44.4 cm
    runs = _runs(50.0, 14.0, 14.0, 14.0, 14.0, 14.0, 14.0, 10.0)
    assert 8.5 < statistics.fmean(r.signed_offset * 100 for r in runs) < 27.3
    verdict = translation_verdict(runs, like=True)
    assert not verdict.met
    assert "≥ 8 of 8 runs in -9…44 cm" in verdict.target


def test_a_mean_off_the_papers_or_a_short_run_misses() -> None:
    assert not translation_verdict(_runs(*(h + 12 for h in TABLE_4)), like=True).met
    assert not translation_verdict(_runs(*TABLE_4, covered=1.5), like=True).met
    # freelook's row: the mean |h| under half the paper's mean (9 cm)
    assert translation_verdict(_runs(5.0, -5.0, 8.0), like=False).met
    assert not translation_verdict(_runs(10.0, -10.0, 8.0), like=False).met

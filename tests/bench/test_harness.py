"""The benchmark harness judges targets on the same run's figures (on a fake clock)."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

import pytest

from freelook.bench import Case, run_case
from freelook.bench import _harness as harness


@pytest.fixture
def advance(monkeypatch: pytest.MonkeyPatch) -> Callable[[float], Callable[[], None]]:
    """An operation that takes exactly ``seconds`` of the harness's (fake) clock."""
    clock = [0.0]
    monkeypatch.setattr(harness, "time", SimpleNamespace(perf_counter=lambda: clock[0]))

    def taking(seconds: float) -> Callable[[], None]:
        def run() -> None:
            clock[0] += seconds

        return run

    return taking


def test_a_baseline_ratio_target_compares_with_the_baseline_of_the_same_run(
    advance: Callable[[float], Callable[[], None]],
) -> None:
    within = Case(run=advance(0.003), baseline=advance(0.001), max_baseline_ratio=3.0)
    result = run_case("within", within, min_time=0.0)
    assert result.meets_target is True
    assert result.max_baseline_ratio == 3.0
    assert result.speedup == pytest.approx(1 / 3)
    beyond = Case(run=advance(0.0031), baseline=advance(0.001), max_baseline_ratio=3.0)
    assert run_case("beyond", beyond, min_time=0.0).meets_target is False


def test_both_targets_must_hold_when_both_are_given(
    advance: Callable[[float], Callable[[], None]],
) -> None:
    case = Case(run=advance(0.002), baseline=advance(0.002), target_s=0.001, max_baseline_ratio=3.0)
    assert run_case("both", case, min_time=0.0).meets_target is False


def test_no_baseline_leaves_a_ratio_target_unjudged(
    advance: Callable[[float], Callable[[], None]],
) -> None:
    case = Case(run=advance(0.002), max_baseline_ratio=3.0)
    assert run_case("alone", case, min_time=0.0).meets_target is None


def test_a_case_with_fixed_calls_runs_exactly_that_often_without_a_warm_up(
    advance: Callable[[float], Callable[[], None]],
) -> None:
    count = [0]
    step = advance(2.0)

    def run() -> None:
        count[0] += 1
        step()

    result = run_case(
        "soak",
        Case(run=run, calls=1, target_s=200.0, measured=lambda: 150.0, target_label="≤ 200"),
        min_time=10.0,
    )
    assert count[0] == 1
    assert result.median_s == 2.0
    assert result.meets_target is True
    assert result.target_label == "≤ 200"


def test_factories_that_read_options_get_the_run_s_options() -> None:
    from freelook.bench import BenchOptions, benchmark_with_options, registered

    seen: list[float] = []

    @benchmark_with_options("test.options_reader")
    def reader(options: BenchOptions) -> Case:
        seen.append(options.soak_minutes)
        return Case(run=lambda: None)

    registered()["test.options_reader"](BenchOptions(soak_minutes=30.0))
    assert seen == [30.0]

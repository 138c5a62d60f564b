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


def test_an_interleaved_case_alternates_candidate_and_baseline_calls(
    advance: Callable[[float], Callable[[], None]],
) -> None:
    order: list[str] = []

    def side(name: str, seconds: float) -> Callable[[], None]:
        step = advance(seconds)

        def run() -> None:
            order.append(name)
            step()

        return run

    case = Case(run=side("c", 0.002), baseline=side("b", 0.001), interleave=True)
    result = run_case("turns", case, min_time=0.01)
    assert order[:6] == ["c", "b", "c", "b", "c", "b"]
    assert order.count("c") == order.count("b") >= 20
    assert result.median_s == pytest.approx(0.002)
    assert result.baseline_median_s == pytest.approx(0.001)


def test_a_ratio_the_case_measures_itself_is_what_the_ratio_target_judges(
    advance: Callable[[float], Callable[[], None]],
) -> None:
    # the calls' medians say 4 ×, the case's own (e.g. median round trip) ratio says 2 ×
    case = Case(
        run=advance(0.004),
        baseline=advance(0.001),
        max_baseline_ratio=3.0,
        interleave=True,
        ratio=lambda: 2.0,
    )
    assert run_case("own", case, min_time=0.0).meets_target is True
    worse = Case(
        run=advance(0.001), baseline=advance(0.001), max_baseline_ratio=3.0, ratio=lambda: 3.5
    )
    assert run_case("worse", worse, min_time=0.0).meets_target is False


def test_figures_another_package_registers_for_a_case_are_measured_with_its_context(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from freelook.bench import added_figures, figures

    monkeypatch.setattr(harness, "_FIGURES", {})
    assert added_figures("test.case", {"url": "udp://x"}) == {}  # none registered: none
    given: list[dict[str, str]] = []

    @figures("test.case")
    def measure(context: harness.Context) -> dict[str, float]:
        given.append(dict(context))
        return {"fps": 14.9}

    assert added_figures("test.case", {"url": "udp://x"}) == {"fps": 14.9}
    assert given == [{"url": "udp://x"}]
    assert added_figures("other.case", {}) == {}

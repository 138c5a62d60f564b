"""Benchmark harness: median time per operation, and the ratio to a baseline run alongside.

A benchmark is a function registered with :func:`benchmark` that returns a :class:`Case`:
the operation under test, optionally a baseline doing the same work a simpler way, the number
of operations each call performs, and an optional target time per operation. The harness times
both in the same run (so ratios do not depend on how fast the machine is) and reports
``speedup = baseline time / candidate time``.

Cases register themselves: each package that has some keeps them in private modules that its
public ``bench_cases`` module imports, and ``freelook bench`` imports those (so the layers
contracts see every import). This module imports none of them. A figure of a case that needs
a package above the case's own (the link's relay carrying the robot program's video to a
station) is registered with :func:`figures` by that package, and the case asks for it with
:func:`added_figures`, giving it what it set up.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field


@dataclass(frozen=True, slots=True)
class Case:
    """What one benchmark measures."""

    run: Callable[[], object]
    ops_per_call: float = 1
    baseline: Callable[[], object] | None = None
    baseline_ops_per_call: float | None = None
    target_s: float | None = None
    unit: str = "op"
    #: Extra figures a benchmark computes itself (e.g. "sim_s_per_wall_s"), reported verbatim.
    extra: Callable[[], dict[str, float]] | None = None
    #: The figure ``target_s`` applies to when it is not the time per operation (e.g. a p95
    #: latency measured inside each call); read after the runs.
    measured: Callable[[], float] | None = None
    #: Call ``run`` exactly this many times, without a warm-up call (a soak, a subprocess
    #: measured once); None: as many as ``min_time`` asks, after one warm-up.
    calls: int | None = None
    #: What the target says when it is not a time (e.g. "RSS ≤ 200 MB" for a ``measured``
    #: figure in MB).
    target_label: str | None = None
    #: The most the operation may take as a multiple of the baseline's time (e.g. 3.0 for "at
    #: most 3 × a raw socket echo"); judged on the same run's medians.
    max_baseline_ratio: float | None = None
    #: Alternate candidate and baseline calls (after a warm-up of each) instead of timing one
    #: side after the other, so load that comes and goes during the run weighs on both alike.
    interleave: bool = False
    #: The candidate/baseline ratio the benchmark measures itself (e.g. from medians of its
    #: own samples); when given, ``max_baseline_ratio`` judges it instead of the call medians.
    ratio: Callable[[], float] | None = None


@dataclass(slots=True)
class Result:
    """Measured figures of one benchmark."""

    name: str
    unit: str
    median_s: float
    p95_s: float
    baseline_median_s: float | None
    speedup: float | None
    target_s: float | None
    meets_target: bool | None
    extra: dict[str, float] = field(default_factory=dict)
    max_baseline_ratio: float | None = None
    target_label: str | None = None

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class BenchOptions:
    """Settings a run gives the benchmarks that read them (``freelook bench`` options)."""

    #: Simulated minutes of the memory soak (the issue's long form: 30).
    soak_minutes: float = 10.0


Factory = Callable[[BenchOptions], Case]
_REGISTRY: dict[str, Factory] = {}


def _register(name: str, factory: Factory) -> None:
    if name in _REGISTRY:
        raise ValueError(f"benchmark {name!r} registered twice")
    _REGISTRY[name] = factory


def benchmark(name: str) -> Callable[[Callable[[], Case]], Callable[[], Case]]:
    """Register a benchmark factory under ``name`` (e.g. ``kinematics.flc_vectorised``)."""

    def decorate(factory: Callable[[], Case]) -> Callable[[], Case]:
        _register(name, lambda options: factory())
        return factory

    return decorate


def benchmark_with_options(name: str) -> Callable[[Factory], Factory]:
    """Register a factory that reads the run's :class:`BenchOptions`."""

    def decorate(factory: Factory) -> Factory:
        _register(name, factory)
        return factory

    return decorate


#: what a case set up (an address, a file), for the figures another package adds to it
Context = Mapping[str, str]
Figures = Callable[[Context], dict[str, float]]
_FIGURES: dict[str, list[Figures]] = {}


def figures(name: str) -> Callable[[Figures], Figures]:
    """Register a function measuring more figures of the case ``name``, given its context."""

    def decorate(measure: Figures) -> Figures:
        _FIGURES.setdefault(name, []).append(measure)
        return measure

    return decorate


def added_figures(name: str, context: Context) -> dict[str, float]:
    """The figures every function registered for ``name`` measures with ``context`` (none
    when no package registered any: the case alone was imported)."""
    out: dict[str, float] = {}
    for measure in _FIGURES.get(name, []):
        out.update(measure(context))
    return out


def registered() -> dict[str, Factory]:
    """Registered benchmark factories by name."""
    return dict(_REGISTRY)


def _time_calls(
    fn: Callable[[], object], ops: float, min_time: float, max_calls: int, exact: int | None = None
) -> list[float]:
    if exact is None:
        fn()  # warm-up: JIT compilation, caches
    samples: list[float] = []
    start = time.perf_counter()
    while (
        len(samples) < exact
        if exact is not None
        else len(samples) < max_calls
        and (len(samples) < 5 or time.perf_counter() - start < min_time)
    ):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) / ops)
    return samples


def _time_interleaved(
    case: Case, min_time: float, max_calls: int, min_pairs: int = 20
) -> tuple[list[float], list[float]]:
    """Candidate and baseline calls taken in turn: (candidate samples, baseline samples)."""
    assert case.baseline is not None
    sides: tuple[tuple[Callable[[], object], float, list[float]], ...] = (
        (case.run, case.ops_per_call, []),
        (case.baseline, case.baseline_ops_per_call or case.ops_per_call, []),
    )
    for fn, _, _ in sides:
        fn()  # warm-up
    spent = [0.0, 0.0]
    while len(sides[0][2]) < max_calls and (len(sides[0][2]) < min_pairs or min(spent) < min_time):
        for index, (fn, ops, samples) in enumerate(sides):
            t0 = time.perf_counter()
            fn()
            elapsed = time.perf_counter() - t0
            spent[index] += elapsed
            samples.append(elapsed / ops)
    return sides[0][2], sides[1][2]


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def run_case(name: str, case: Case, min_time: float = 0.5, max_calls: int = 10_000) -> Result:
    """Time ``case`` and its baseline; ``min_time`` seconds each at least (5 calls minimum)."""
    base: list[float] | None = None
    if case.interleave and case.baseline is not None:
        samples, base = _time_interleaved(case, min_time, max_calls)
    else:
        samples = _time_calls(case.run, case.ops_per_call, min_time, max_calls, case.calls)
        if case.baseline is not None:
            base_ops = case.baseline_ops_per_call or case.ops_per_call
            base = _time_calls(case.baseline, base_ops, min_time, max_calls, case.calls)
    median = statistics.median(samples)
    base_median: float | None = None
    speedup: float | None = None
    if base is not None:
        base_median = statistics.median(base)
        speedup = base_median / median if median > 0 else None
    judged = case.measured() if case.measured is not None else median
    meets = None if case.target_s is None else judged <= case.target_s
    if case.max_baseline_ratio is not None and base_median is not None:
        if case.ratio is not None:
            within = case.ratio() <= case.max_baseline_ratio
        else:
            within = median <= case.max_baseline_ratio * base_median
        meets = within if meets is None else meets and within
    extra = case.extra() if case.extra is not None else {}
    return Result(
        name,
        case.unit,
        median,
        _p95(samples),
        base_median,
        speedup,
        case.target_s,
        meets,
        extra,
        case.max_baseline_ratio,
        case.target_label,
    )


def iter_selected(patterns: list[str]) -> Iterator[tuple[str, Factory]]:
    """Registered benchmarks whose name starts with any of ``patterns`` (all when empty)."""
    for name in sorted(_REGISTRY):
        if not patterns or any(name.startswith(p) for p in patterns):
            yield name, _REGISTRY[name]

"""The bomb-disposal experiment: seeded trials in turn (every tenth with a takeover, every
tenth with the object carried away), recorded end to end in one MCAP file if asked, then
the table."""

from __future__ import annotations

from pathlib import Path

from freelook.experiments._bomb_disposal._table import disposal_table
from freelook.experiments._bomb_disposal._trial import DisposalResult, disposal_trial
from freelook.experiments._parallel import map_trials, workers
from freelook.experiments._result import ExperimentResult, Progress

__all__ = ["bomb_disposal"]


def _trial_args(trials: int, seed: int, robot: str) -> list[tuple[int, str, bool, bool]]:
    """Every tenth trial has the operator take over and hand back (at a phase drawn from the
    trial's seed), every tenth (offset by four) has the object carried away during the
    approach."""
    return [(seed + k, robot, k % 10 == 3, k % 10 == 7) for k in range(trials)]


def _run(seed: int, robot: str, takeover: bool, move: bool, timeline: bool) -> DisposalResult:
    return disposal_trial(seed, robot, takeover=takeover, move_object=move, timeline=timeline)


def bomb_disposal(
    trials: int,
    seed: int,
    progress: Progress,
    robot: str = "taros",
    *,
    record: Path | None = None,
    jobs: int | None = None,
) -> ExperimentResult:
    """Kievit-Kylar's five-phase task, ``trials`` seeded scenarios on ``robot``; ``record``: the
    trials end to end in one MCAP file (the phase on ``/autonomy/phase``, the objects' true
    poses on ``/sim/objects``, each trial named on ``/bomb_disposal/trials``)."""
    with workers(jobs):
        arguments = [(*a, record is not None) for a in _trial_args(trials, seed, robot)]
        results = map_trials(_run, arguments, progress)
    if record is not None:
        _record(record, results)
        for r in results:  # in the file, not in the table's details
            r.phases, r.objects = [], []
    return disposal_table(results, trials, seed, robot)


def _record(path: Path, results: list[DisposalResult]) -> None:
    from freelook.record import Recorder

    end = 0.0
    recorder = Recorder(path, clock=lambda: end)
    try:
        for k, r in enumerate(results):
            start = end + (1.0 if k else 0.0)
            end = start
            note = f"trial {k}: seed {r.seed} on {r.robot}, starts at {start:.3f} s"
            recorder.write("/bomb_disposal/trials", "std_msgs/String", {"data": note}, start)
            for t, phase in r.phases:
                end = start + t
                recorder.write("/autonomy/phase", "std_msgs/String", {"data": phase}, end)
            for t, objects in r.objects:
                end = max(end, start + t)
                recorder.write("/sim/objects", "std_msgs/String", {"data": objects}, start + t)
    finally:
        recorder.close()

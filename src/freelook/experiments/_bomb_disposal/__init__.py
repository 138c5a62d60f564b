"""Kievit-Kylar's bomb-disposal task, drawn per seed in the ``eod`` room and run on the lock-step
simulator: the robot program in its autonomy mode, seeing only its camera, HAL and arm.

A scenario (:mod:`._scene`) draws the robot's start, the object (a box the gripper can hold, of
a colour from a palette) and the receptacle (a cylinder of another colour) at their places, a
distractor of a colour near the object's, grey clutter off the robot's paths, and the light the
camera sees: its brightness, its colour (a warm or cold light against the camera's fixed white
balance shifts every hue) and the sensor's noise. In a quarter of the scenes the distractor's
hue lies inside the detector's window (a look-alike it cannot tell apart by colour); elsewhere
it lies 28–38° away, outside it. The trial (:mod:`._trial`) measures what the robot never reads
(:mod:`._judge`): the objects' true poses, the base's contacts with fixed obstacles and its
footprint against the box, the arm's collision boxes against the objects, and where the box
ends up; an operator may take over mid-task (:mod:`._takeover`). :mod:`._table` makes the
table of a run, :mod:`._experiment` runs the trials.
"""

from freelook.experiments._bomb_disposal._experiment import bomb_disposal
from freelook.experiments._bomb_disposal._scene import EodScenario, eod_scenario
from freelook.experiments._bomb_disposal._table import disposal_table
from freelook.experiments._bomb_disposal._takeover import TASK_PHASES, Takeover
from freelook.experiments._bomb_disposal._trial import DisposalResult, disposal_trial

__all__ = [
    "TASK_PHASES",
    "DisposalResult",
    "EodScenario",
    "Takeover",
    "bomb_disposal",
    "disposal_table",
    "disposal_trial",
    "eod_scenario",
]

"""The adversarial campaign against real freelook processes on loopback (docs/security.md),
and the floods the ``link.flood…`` benchmarks and tests run: the test rig, not part of the
shipped package. ``python -m tools.attack --help`` runs it from the repository's root.

It reaches freelook only through its packages' faces, as an outside program would."""

from tools.attack._campaign import PROBES, CampaignOptions, campaign_lines, run_campaign
from tools.attack._flood import FloodResult, flood_trial
from tools.attack._forged import (
    MAX_BLIND,
    MIN_SPEED,
    ForgedSourceRun,
    forged_source_run,
    raw_socket,
)
from tools.attack._tally import Tally

__all__ = [
    "MAX_BLIND",
    "MIN_SPEED",
    "PROBES",
    "CampaignOptions",
    "FloodResult",
    "ForgedSourceRun",
    "Tally",
    "campaign_lines",
    "flood_trial",
    "forged_source_run",
    "raw_socket",
    "run_campaign",
]

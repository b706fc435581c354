"""The lockstep table: one peer's engine and crypto session driven by signed envelopes.

Import the table's public types from here (``from p2p.table import LockstepTable, TableSetup``).
The parts, each with one job: :mod:`.loop` (the main loop, decisions, crypto ops),
:mod:`.inbox`, :mod:`.outbox`, :mod:`.acks`, :mod:`.accuser`, :mod:`.aborts`,
:mod:`.verdicts`, :mod:`.deciders`, :mod:`.resume`, :mod:`.waiting`, :mod:`.resolver` (the
resolution script driven live), :mod:`.pacing` (bots that pause); the envelope kinds are
:mod:`p2p.protocol.wire` (see docs/architecture.md).
"""

from .loop import LockstepTable
from .outcome import Refusal, TableResult, TableStopped
from .setup import Agent, HumanDecider, TableSetup, Transport

__all__ = ["Agent", "HumanDecider", "LockstepTable", "Refusal", "TableResult", "TableSetup",
           "TableStopped", "Transport"]

"""How a table ends: its result, or why it stopped, and the messages it refused."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..protocol.table_game import State


class TableStopped(Exception):
    """The table cannot go on: a cheat, a desync or a peer that never answered.

    ``culprit`` is the seat to blame (None if unknown), ``rule`` a stable id.  ``export``
    is the ``game.silkroad`` the table wrote all the same because the game had reached its
    end (:meth:`p2p.table.LockstepTable.run`), None otherwise.
    """

    def __init__(self, culprit: int | None, rule: str, detail: str,
                 stopped_by: int | None = None) -> None:
        who = "unattributed" if culprit is None else f"seat {culprit}"
        super().__init__(f"{who}: {rule}: {detail}")
        self.culprit = culprit
        self.rule = rule
        self.detail = detail
        #: the seat whose signed stop notice stopped the table (not a cheater: it said it
        #: stops, and why; ``detail`` shows its reason as its unverified claim)
        self.stopped_by = stopped_by
        self.export: Path | None = None


@dataclass
class Refusal:
    """An envelope the table refused (never fatal): who sent it and why."""

    sender: int | None
    reason: str


@dataclass
class TableResult:
    """The end of one peer's game."""

    state: State
    state_hash: bytes
    scores: list[int]
    winners: list[int]
    transcript: list[bytes]
    export: Path | None
    refusals: list[Refusal] = field(default_factory=list)
    steps: int = 0
    step_times: list[tuple[str, float, int, int]] = field(default_factory=list)
    #: ``time.monotonic()`` when each step was applied here (system-wide clock, so peers in
    #: different processes on one host compare), and when we decided each of our moves
    applied_at: list[float] = field(default_factory=list)
    decided_at: dict[int, float] = field(default_factory=dict)

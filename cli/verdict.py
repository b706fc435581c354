"""The verdict on a finished game's transcript, as ``silkroad audit`` gives it, for the
end screen and for what ``play``, ``host`` and ``join`` print afterwards."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from p2p.front_door import GameAuditReport


def verdict_of(code: int) -> str:
    return {0: "fair", 1: "unfair", 3: "not certified"}.get(code, "unreadable")


def audit_summary(path: Path) -> dict[str, Any]:
    """Audit a transcript (signatures, proofs, engine replay) and summarise it for JSON."""
    from p2p.front_door import audit_game

    return summarise(audit_game(path))


def summarise(report: GameAuditReport) -> dict[str, Any]:
    """An audit's report as JSON, with the ``verdict`` word of its exit code."""
    from p2p.front_door import summary

    out = summary(report)
    out["verdict"] = verdict_of(report.exit_code)
    return out

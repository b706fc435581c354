"""The verdict on a finished game's transcript, as ``silkroad audit`` gives it, for the
end screen and for what ``play``, ``host`` and ``join`` print afterwards."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from p2p.front_door import CERTIFIED, UNFAIR, GameAuditReport, audit_game, summary

CHECKED = ("every signature and hash chain; every proof and decryption share; every token "
           "decrypted with the secrets published at the end; every claim about hidden "
           "goods; every action against the rules; every ack against the replay")


def verdict_of(code: int) -> str:
    return {0: "fair", 1: "unfair", 3: "not certified"}.get(code, "unreadable")


def audit_summary(path: Path) -> dict[str, Any]:
    """Audit a transcript (signatures, proofs, engine replay) and summarise it for JSON."""
    return summarise(audit_game(path))


def summarise(report: GameAuditReport) -> dict[str, Any]:
    """An audit's report as JSON, with the ``verdict`` word of its exit code."""
    out = summary(report)
    out["verdict"] = verdict_of(report.exit_code)
    return out


def verdict_text(report: GameAuditReport) -> str:
    """The verdict in a player's words: what was checked, who is named, what is missing."""
    names = report.names
    if report.status == CERTIFIED:
        return (f"CERTIFIED: {report.steps} engine steps replayed. Checked: {CHECKED}; and "
                f"every seat signed the final state. Scores: {_scores(report)}.")
    v = report.violation
    if report.status == UNFAIR and v is not None:
        where = "" if v.envelope is None else f" at envelope #{v.envelope}"
        named = who(v.party, names)
        return f"UNFAIR: {named} signed something false{where}: rule {v.rule}: {v.detail}"
    notes = report.notes or ([v.detail] if v is not None else [])
    shown = "; ".join(notes[:6]) + (f" (+{len(notes) - 6} more)" if len(notes) > 6 else "")
    stop = report.stopped or {}
    stopped = f" The table stopped: {stop.get('detail') or stop.get('rule')}." if stop else ""
    return (f"NOT CERTIFIED ({report.status}): nobody is named ({report.steps} engine steps "
            f"replayed): {shown}.{stopped}")


def _scores(report: GameAuditReport) -> str:
    """"Ann 26, Marco 29, …" (seat numbers when the names cannot be read)."""
    if not report.scores:
        return "none"
    names = report.names
    return ", ".join(f"{names[p] if p < len(names) else f'seat {p}'} {v}"
                     for p, v in enumerate(report.scores))


def who(party: int | None, names: list[str], bare: bool = False) -> str | None:
    """"Marco (seat 1)" for a violation's party: a player reads names, not party numbers."""
    if party is None:
        return None if bare else "an unidentified party"
    if 0 <= party < len(names):
        return names[party] if bare else f"{names[party]} (seat {party})"
    return None if bare else f"seat {party}"

"""The live table's verdicts, drawn by the audit's judge from the transcript it holds.

A live table *detects* trouble with its own fast checks (an abort notice arrives, or the
acks of a round differ), but it never decides on its own who is to blame: it audits the
transcript it holds exactly as ``silkroad audit`` would (:func:`p2p.judge.game_audit.audit_wires`,
whose evidence rule is :mod:`p2p.judge.evidence`) and names the seat the audit names, or no one.
So a verdict live and a verdict on the file are drawn by one rule, and the majority of
acks — a disagreement between seats' words — never names anybody.
"""

from __future__ import annotations

from crypto.transcript import Envelope

from ..judge.game_audit import UNFAIR, GameAuditReport, audit_wires
from ..protocol.table_game import Config
from ..sanitize import clean
from .outcome import TableStopped
from .setup import TableSetup


class LiveJudge:
    """Audits a table's held transcript for a verdict (pure: run it in a worker thread)."""

    def __init__(self, setup: TableSetup, config: Config) -> None:
        self.setup = setup
        self.config = config

    def audit(self, wires: list[bytes]) -> GameAuditReport:
        s = self.setup
        return audit_wires(wires, s.keys, s.game_id, s.lam, self.config,
                           shuffle_mode=s.shuffle_mode)

    def accusation(self, wires: list[bytes], accuser: int) -> TableStopped | None:
        """The verdict on ``accuser``'s abort notice: the seat the audit names (the accused,
        an earlier cheater, or the accuser for a false accusation), or None while nobody
        can be named (the notice cannot be checked yet)."""
        report = self.audit(wires)
        v = report.violation
        if report.status != UNFAIR or v is None or v.party is None:
            return None
        if v.rule == "false-abort" and v.party == accuser:
            return TableStopped(accuser, "false-abort", str(v.detail))
        # the accuser's rule is its own words: cleaned before a screen or log (sanitize)
        return TableStopped(v.party, v.rule, f"confirmed from the transcript after seat "
                                             f"{accuser}'s abort notice: {v}")

    def dispute(self, wires: list[bytes], rnd: int, acks: dict[int, Envelope],
                odd: list[int]) -> TableStopped:
        """The verdict on acks of round ``rnd`` that differ (``odd``: the seats whose ack
        differs from ours, or whose heads contradict another's): the seat the audit names
        on what it signed — an ack whose chain value contradicts the replay of the signed
        moves it acknowledged, an ack contradicting its own chain — else nobody, the table
        stopping *disputed* with the seats whose words disagree."""
        report = self.audit(wires)
        v = report.violation
        if report.status == UNFAIR and v is not None and v.party is not None:
            return TableStopped(v.party, v.rule, f"confirmed from the transcript after the "
                                                 f"acks of step {rnd} differed: {v}")
        why = "; ".join(clean(n, 400) for n in report.notes[:3] if "disagree" in n
                        or "another version" in n)
        return TableStopped(
            None, "disputed",
            f"step {rnd}: the acknowledgements of seats {sorted(acks)} differ (seats {odd} "
            "disagree with the others), and the transcript we hold does not show whose "
            f"signed word is false: nobody is named{'; ' + why if why else ''}")

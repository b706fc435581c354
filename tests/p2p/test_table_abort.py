"""Identifiable abort: a cheat that only its victim checks live (docs/security.md "Deferred
checks") is named by *every* peer — the others confirm the victim's signed abort notice by
auditing the public transcript — and a false abort notice names its sender."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from table_kit import play_tables, run

from crypto.protocols.base import Step
from crypto.protocols.deal import Deal
from crypto.protocols.withdraw import Withdraw
from engine.actions import Action
from p2p.lockstep import ABORT_KIND, Table, TableStopped

CHEAT = 1
VICTIM = 2


class OneBadShareDeal(Deal):
    """Correct shares for everybody except VICTIM's first dealt position (a valid point
    with another position's proof): only VICTIM checks that share live."""

    def make_share(self, st: Step) -> list[Any]:
        out = super().make_share(st)
        assert self.ctx.me is not None
        pos = self._others_positions(self.ctx.me)
        js = [j for j, p in enumerate(pos) if self.owner(p) == VICTIM]
        other = next(j for j in range(len(pos)) if j not in js)
        out[js[0]] = list(out[other])
        return out


class BadProofBlinder(Withdraw):
    """Honest blinded values with broken proofs: only the taker checks them live."""

    def make_blind(self, st: Step) -> list[Any]:
        out = super().make_blind(st)
        for row in out:
            for item in row:
                c, z = item[2]
                item[2] = [z, c]
        return out


def _cheat_with(op: str, cls: type) -> Any:
    def prepare(t: Table) -> None:
        if t.me == CHEAT:
            t.session.ops[op] = cls

    return prepare


def _all_name(peers: list[Any], results: list[Any], seat: int, rule: str) -> None:
    for me, r in enumerate(results):
        assert isinstance(r, TableStopped), (me, r)
        assert (r.culprit, r.rule) == (seat, rule), (me, r)
    # the cheat is deferred: somebody learnt it from an abort notice, not from its own check
    confirmed = [p.seat for p in peers if p.table.abort_verdicts]
    assert confirmed, "every peer detected the cheat itself: not a deferred check"
    assert all(v.culprit == seat for p in peers for _a, v in p.table.abort_verdicts)


@pytest.mark.timeout(60)
def test_bad_deal_share_for_one_recipient_is_named_by_every_peer(tmp_path: Path) -> None:
    peers, results = run(lambda: play_tables(tmp_path, 3, prepare=_cheat_with(
        "deal", OneBadShareDeal), abandon=30.0), timeout=55)
    _all_name(peers, results, CHEAT, "dleq-invalid")


@pytest.mark.timeout(90)
def test_bad_withdraw_blinding_proof_is_named_by_every_peer(tmp_path: Path) -> None:
    # bag draws must happen: plain heuristic bots (the first withdraw by a seat other than
    # the cheater stops the game)
    peers, results = run(lambda: play_tables(tmp_path, 3, frugal=False, prepare=_cheat_with(
        "withdraw", BadProofBlinder), abandon=30.0), timeout=85)
    _all_name(peers, results, CHEAT, "pet-blind-invalid")


@pytest.mark.timeout(60)
def test_false_abort_names_the_accuser(tmp_path: Path) -> None:
    liar = 0

    def hook(t: Table, _a: Action) -> None:
        if t.me == liar and t.step == 6:
            wrong = t.log.by_sender[2][0]
            t.emit(ABORT_KIND, [2, "dleq-invalid", "made up", [2, 0, wrong.id]])
            t.stop(2, "dleq-invalid", "made up")

    _peers, results = run(lambda: play_tables(tmp_path, 3, on_step=hook, abandon=30.0),
                          timeout=55)
    for me, r in enumerate(results):
        assert isinstance(r, TableStopped), (me, r)
        if me != liar:
            assert (r.culprit, r.rule) == (liar, "false-abort"), (me, r)

"""A live adversary at a real table: whatever one seat does, no honest seat is named.

Six games of :mod:`bench.live_adversary`, each with one seat armed by
:mod:`bench.live_cheats`: the misbehaviour is fixed here so that the run covers different
ones (a wrong decryption share, a false accusation, an equivocated move, a crypto message
shown to one peer only, a stop notice, delayed envelopes); the cheater, the moment and the
details come from the seed.  Every honest seat's live verdict, its verdicts on abort
notices and the audits of its folder and export must name nobody or the cheater — never an
honest seat, and never "unfair" naming nobody.  The bench runs the same check over many
random games (``silkroad bench live``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.live_adversary import GameReport, run_game

CASES = [(9, "wrong-share"), (6, "false-abort"), (8, "equivocate-action"),
         (7, "partial-crypto"), (17, "stop-silent"), (1, "delay")]
"""(seed, misbehaviour): seeds whose cheater starts early enough for the misbehaviour to
fire in any game, and whose cheaters sit at different seats."""


@pytest.mark.timeout(240)
def test_no_honest_seat_is_named_by_a_live_adversary(tmp_path: Path) -> None:
    reports: list[GameReport] = [run_game(tmp_path / f"game{seed}", seed, 3, (kind,),
                                          timeout=60.0)
                                 for seed, kind in CASES]
    silent = [r.description for r in reports if not r.plan.fired]
    assert not silent, f"misbehaviours that never fired: {silent}"
    found = [f"{r.description}\n    {v}" for r in reports for v in r.violations]
    assert not found, "honest seats named (or games hung):\n" + "\n".join(found)



SALE_CLAIMS = [(7000, 3), (7001, 4), (7008, 3)]
"""(seed, seats) of games whose cheater corrupts a decryption share in a sale's claim op
(run inside a player's step); without an ack round before that op, each of them audited
"disputed" in honest folders."""


@pytest.mark.timeout(240)
def test_a_wrong_share_in_a_sales_claim_is_named_in_every_folder(tmp_path: Path) -> None:
    """A claim's op runs inside a player's step: the seats first acknowledge the state the
    step began in, so the cheater's bad share is judged against a history it signed — named
    live and in every honest folder's audit, not merely "disputed"."""
    for seed, seats in SALE_CLAIMS:
        r = run_game(tmp_path / f"game{seed}", seed, seats, ("wrong-claim-share",),
                     timeout=60.0)
        assert r.plan.fired, r.description
        assert not r.violations, r.violations
        for s in r.seats:
            assert s.culprit == r.plan.cheater, (r.description, s)
            assert s.audit.startswith("unfair") and s.audit_party == r.plan.cheater, \
                (r.description, s)


SHUFFLE_EQUIVOCATIONS = [(8011, 4), (8026, 3)]
"""(seed, seats) of games whose cheater shows one valid shuffle of the deal to some peers
and another valid shuffle of the same deck to the rest: the next seat's honest messages
then fail for one group.  Before peers relayed what they held ahead of a crypto
accusation, these named an honest seat (a share's DLEQ proof, the next shuffle's proof)."""


@pytest.mark.timeout(240)
def test_a_shuffle_shown_in_two_versions_names_its_signer_only(tmp_path: Path) -> None:
    """A crypto message does not name the messages it builds on; the peer whose check fails
    first relays what it holds, the two versions meet, and the equivocation proof names the
    cheater — live and in every folder's audit, never the honest seat whose message failed
    against the other version."""
    for seed, seats in SHUFFLE_EQUIVOCATIONS:
        r = run_game(tmp_path / f"game{seed}", seed, seats, ("equivocate-crypto",),
                     timeout=60.0)
        assert r.plan.fired, r.description
        assert not r.violations, "\n".join(f"{r.description}\n    {v}" for v in r.violations)
        named = [s for s in r.seats if s.culprit is not None or s.audit_party is not None]
        assert named, r.seats
        for s in named:
            assert s.culprit in (None, r.plan.cheater), (r.description, s)
            assert s.audit_party in (None, r.plan.cheater), (r.description, s)

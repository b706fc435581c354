"""Identifiable abort: a cheat that only its victim checks live (docs/security.md "Deferred
checks") is named by *every* peer — the others confirm the victim's signed abort notice by
auditing the public transcript — and a false abort notice names its sender."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, ClassVar

import pytest
from table_kit import Rerouted, play_tables, run

from crypto.protocols.base import Step
from crypto.protocols.deal import Deal
from crypto.protocols.withdraw import Withdraw
from crypto.transcript import parse
from engine.actions import Action, encode
from p2p.judge.game_audit import STOPPED, audit_folder, audit_game
from p2p.protocol.wire import ABORT_KIND, CLOSE_KIND, ENV_TAG, STOP_KIND
from p2p.store import GameStore
from p2p.table import LockstepTable, TableStopped

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
    def prepare(t: LockstepTable) -> None:
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


def _accuser_named(tmp_path: Path, hook: Any, liar: int) -> None:
    """Play with ``hook`` (the liar's false accusation): everybody else names the liar."""
    _peers, results = run(lambda: play_tables(tmp_path, 3, on_step=hook, abandon=30.0),
                          timeout=55)
    for me, r in enumerate(results):
        assert isinstance(r, TableStopped), (me, r)
        if me != liar:
            assert (r.culprit, r.rule) == (liar, "false-abort"), (me, r)


@pytest.mark.timeout(60)
def test_false_abort_names_the_accuser(tmp_path: Path) -> None:
    liar = 0

    def hook(t: LockstepTable, _a: Action) -> None:
        if t.me == liar and t.step == 6:
            wrong = t.log.by_sender[2][0]
            t.emit(ABORT_KIND, [2, "dleq-invalid", "made up", [2, 0, wrong.id]])
            t.stop(2, "dleq-invalid", "made up")

    _accuser_named(tmp_path, hook, liar)


@pytest.mark.timeout(60)
def test_an_accusation_pointing_at_what_nobody_holds_names_no_one(tmp_path: Path) -> None:
    """An abort notice naming an envelope of seat 2 that no peer holds cannot be checked:
    the others fetch, audit again as things arrive, and after the wait stop naming no one
    (not the accused, and not the accuser: what it saw may simply not have reached us)."""
    liar = 0

    def hook(t: LockstepTable, _a: Action) -> None:
        if t.me == liar and t.step == 6:
            t.emit(ABORT_KIND, [2, "dleq-invalid", "made up", [2, 10**6, bytes(32)]])
            t.stop(2, "dleq-invalid", "made up")

    _peers, results = run(lambda: play_tables(tmp_path, 3, on_step=hook, abandon=30.0),
                          timeout=55)
    for me in (1, 2):
        r = results[me]
        assert isinstance(r, TableStopped), (me, r)
        assert (r.culprit, r.rule) == (None, "unchecked-abort"), (me, r)


@pytest.mark.timeout(60)
def test_an_abort_notice_is_confirmed_with_its_words_cleaned(tmp_path: Path) -> None:
    """The rule an abort notice names is its sender's own words: a peer that confirms the
    accusation from the transcript quotes it without escape sequences or bidi overrides."""
    hostile = "\x1b]0;pwned\x07\x1b[2J\u202e"

    def prepare(t: LockstepTable) -> None:
        if t.me == CHEAT:
            t.session.ops["deal"] = OneBadShareDeal
        if t.me == VICTIM:
            emit = t.aborts._emit

            def loud(kind: str, body: Any) -> None:
                if kind == ABORT_KIND:
                    body = [body[0], hostile + body[1], *body[2:]]
                emit(kind, body)

            t.aborts._emit = loud

    peers, results = run(lambda: play_tables(tmp_path, 3, prepare=prepare, abandon=30.0),
                         timeout=55)
    _all_name(peers, results, CHEAT, "dleq-invalid")
    quoted = [v.detail for p in peers for _a, v in p.table.abort_verdicts]
    assert quoted and all("dleq-invalid" in d for d in quoted), quoted
    assert not any(ch in d for d in quoted for ch in "\x1b\x07\u202e"), quoted


def _equivocate(t: LockstepTable, second_to: int, in_order: bool, tasks: list[Any],
                first_to: int | None = None) -> None:
    """Seat ``t.me`` signs two envelopes with one sequence number: the first goes to
    ``first_to`` (everyone if None), the second only to ``second_to``."""
    s = t.signer
    seq, prev = s.seq, s.prev
    # two acks of a round far ahead (never compared live, so harmless but for the fork)
    far = t.step + 1000
    first = t.outbox.sign("ack", [far, b"\x01" * 32, []])
    s.seq, s.prev = seq, prev
    second = s.sign("ack", [far, b"\x02" * 32, []])
    s.seq, s.prev = seq + 1, first.id

    def send() -> None:
        if first_to is None:
            t.transport.broadcast(ENV_TAG + first.wire)
        else:
            t.transport.send(first_to, ENV_TAG + first.wire)
        t.transport.send(second_to, ENV_TAG + second)

    if not in_order:
        send()  # ahead of our queued envelopes: both are held early by the receiver
        return

    async def after_outbox() -> None:
        await t.outbox.drain()
        send()  # in chain order: the second one meets the first in the receiver's log

    tasks.append(asyncio.get_running_loop().create_task(after_outbox()))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("in_order", [True, False])
def test_equivocation_seen_by_one_peer_is_proved_to_all(tmp_path: Path, in_order: bool) -> None:
    """Only seat 0 receives both envelopes; its abort notice carries the two signed
    envelopes, and seat 2 — which saw just one — names the equivocator from the proof."""
    tasks: list[Any] = []

    def hook(t: LockstepTable, _a: Action) -> None:
        if t.me == CHEAT and t.step == 8:
            _equivocate(t, 0, in_order, tasks)

    peers, results = run(lambda: play_tables(tmp_path, 3, on_step=hook, abandon=30.0),
                         timeout=55)
    for me, r in enumerate(results):
        assert isinstance(r, TableStopped), (me, r)
        assert (r.culprit, r.rule) == (CHEAT, "equivocation"), (me, r)
    verdicts = peers[VICTIM].table.abort_verdicts
    assert verdicts and verdicts[0][0] == 0 and verdicts[0][1].culprit == CHEAT, verdicts


@pytest.mark.timeout(60)
def test_forged_equivocation_proof_names_the_accuser(tmp_path: Path) -> None:
    liar = 0

    def hook(t: LockstepTable, _a: Action) -> None:
        if t.me == liar and t.step == 6:
            real = t.log.by_sender[CHEAT][0].wire
            fake = real[:-1] + bytes([real[-1] ^ 1])  # signature no longer valid
            t.emit(ABORT_KIND, [CHEAT, "equivocation", "made up", None, [real, fake]])
            t.stop(CHEAT, "equivocation", "made up")

    _accuser_named(tmp_path, hook, liar)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("players", [3, 4])
def test_equivocation_to_different_peers_is_exposed_by_the_dispute(tmp_path: Path,
                                                                   players: int) -> None:
    """Seat 1 shows one envelope to seat 0 and another (same seq) to seat 2: no peer sees
    both.  Their acks disagree about seat 1's latest envelope; before any majority verdict
    the peers relay what they received, the two signed envelopes meet, and every peer names
    seat 1 for equivocation (not the peer that happened to be in the minority)."""

    tasks: list[Any] = []

    def hook(t: LockstepTable, _a: Action) -> None:
        if t.me == CHEAT and t.step == 8:
            _equivocate(t, VICTIM, True, tasks, first_to=0)

    # (with 4 players seat 3 gets neither version: it fetches one from a peer that has it)
    _peers, results = run(lambda: play_tables(tmp_path, players, on_step=hook, abandon=30.0),
                          timeout=55)
    for me, r in enumerate(results):
        assert isinstance(r, TableStopped), (me, r)
        # seat 2 may first meet seat 1's next envelope, which chains to the version it
        # never got: that fork is proved the same way (rule bad-chain)
        assert r.culprit == CHEAT and r.rule in ("equivocation", "bad-chain"), (me, r)


@pytest.mark.timeout(90)
@pytest.mark.parametrize(("mode", "players"), [("audit", 3), ("verified", 3), ("audit", 4),
                                               ("verified", 4)])
def test_a_bad_share_shown_to_its_victim_only_is_named_by_every_peer(
        tmp_path: Path, mode: str, players: int) -> None:
    """The cheater sends its deal messages — one with a bad share for VICTIM — to VICTIM
    alone.  Seat 0 fetches them from whoever has them (gap sync), VICTIM's abort notice
    carries the cheater's own offending envelope (not the honest message that completed the
    batch), and every peer names the cheater, never the victim, live and in every audit of
    its folder — also when a suffix of one seat's chain is cut from that folder."""

    def prepare(t: LockstepTable) -> None:
        if t.me == CHEAT:
            t.session.ops["deal"] = OneBadShareDeal
            def deal_to_victim(body: bytes) -> int | None:
                cur = t.session.current
                in_deal = body[:1] == ENV_TAG and cur is not None and cur.name == "deal"
                return VICTIM if in_deal else None

            t.transport = Rerouted(t.transport, deal_to_victim)

    peers, results = run(lambda: play_tables(tmp_path, players, mode=mode, prepare=prepare,
                                             abandon=30.0), timeout=85)
    for me, r in enumerate(results):
        assert isinstance(r, TableStopped), (me, r)
        assert (r.culprit, r.rule) == (CHEAT, "dleq-invalid"), (me, r)
        assert all(v.culprit == CHEAT for _a, v in peers[me].table.abort_verdicts), me
    notice = next(e for e in peers[VICTIM].table.log.by_sender[VICTIM] if e.kind == ABORT_KIND)
    carried = [parse(w, peers[0].table.keys, peers[0].table.setup.game_id)
               for w in notice.body[4]]
    assert [e.sender for e in carried] == [CHEAT] and notice.body[3][0] == CHEAT, notice.body
    for p in peers:
        report = audit_folder(p.folder)
        v = report.violation
        assert v is not None and (v.party, v.rule) == (CHEAT, "dleq-invalid"), str(report)
        # located at the cheater's own envelope, not at the message that completed the batch
        assert v.sender_seq is not None and v.sender_seq[0] == CHEAT, str(report)
    # the same transcript cut after the deal started, one seat's chain at a time: the
    # victim's true accusation is never judged false (nobody, or the cheater, is named)
    store = GameStore(peers[0].folder)
    wires = store.load_transcript()
    keys, gid = peers[0].table.keys, peers[0].table.setup.game_id
    envs = [parse(w, keys, gid) for w in wires]
    for seat in range(players):
        deal = [e.seq for e in envs if e.sender == seat and e.kind == "crypto"
                and e.body[1] == "deal"]
        if not deal:
            continue
        cut = [e.wire for e in envs if e.sender != seat or e.seq < deal[-1]]
        (tmp_path / f"cut{seat}").mkdir()
        folder = tmp_path / f"cut{seat}"
        for name in ("meta.json", "board.json"):
            if (peers[0].folder / name).exists():
                (folder / name).write_bytes((peers[0].folder / name).read_bytes())
        cut_store = GameStore(folder)
        for w in cut:
            cut_store.append(w)
        cut_store.close()
        report = audit_folder(folder)
        v = report.violation
        assert report.error is None, str(report)
        assert v is None or v.party in (None, CHEAT), (seat, str(report))


@pytest.mark.timeout(90)
@pytest.mark.parametrize("players", [3, 4])
def test_two_different_moves_shown_to_two_peers_name_the_mover(tmp_path: Path,
                                                               players: int) -> None:
    """Seat 1 signs two different moves for one of its turns (one sequence number) and
    shows one to seat 0 and the other to seat 2: their states part ways.  Every peer still
    names seat 1 — the two signed moves meet (relayed in the dispute, or fetched by a peer
    that waits) — and never an honest seat by majority or by timeout."""
    done: list[int] = []

    class TwoMoves(LockstepTable):
        def emit(self, kind: str, body: Any) -> None:
            if (self.me == CHEAT and kind == "action" and not done and self.step >= 4
                    and len(self.legal(CHEAT)) > 1):
                done.append(self.step)
                s = self.signer
                seq, prev = s.seq, s.prev
                first = self.outbox.sign(kind, body)
                other = next(a for a in self.legal(CHEAT) if encode(a) != body[1])
                s.seq, s.prev = seq, prev
                second = s.sign(kind, [body[0], encode(other), body[2]])
                s.seq, s.prev = seq + 1, first.id
                self._dispatch(first)
                self.transport.send(0, ENV_TAG + first.wire)
                self.transport.send(VICTIM, ENV_TAG + second)
                return
            super().emit(kind, body)

    _peers, results = run(lambda: play_tables(tmp_path, players, table_cls=TwoMoves,
                                              abandon=30.0), timeout=85)
    assert done
    for me, r in enumerate(results):
        assert isinstance(r, TableStopped), (me, r)
        assert r.culprit == CHEAT and r.rule in ("equivocation", "bad-chain"), (me, r)


class _StopsAndLeaves(LockstepTable):
    """CHEAT signs a stop notice (a false reason) at a chosen moment and goes silent."""

    told: ClassVar[list[int]] = []

    def _leave(self) -> None:
        self.told.append(self.step)
        self.emit(STOP_KIND, ["timeout", f"seats [{VICTIM}] never answered"])
        self.stop(None, "left", "went quiet after its stop notice")  # sends nothing more


def _shares_then_stops(t: LockstepTable) -> None:
    if t.me != CHEAT:
        return
    t.session.ops["deal"] = OneBadShareDeal
    original = t.outbox.emit_crypto

    def emit_crypto(out: list[Any], save: Any) -> None:
        original(out, save)
        cur = t.session.current
        if out and cur is not None and cur.name == "deal" and not _StopsAndLeaves.told \
                and any(b[3] == "share" for b in out):
            assert isinstance(t, _StopsAndLeaves)
            t._leave()

    t.outbox.emit_crypto = emit_crypto  # type: ignore[method-assign]  # the cheat's hook


@pytest.mark.timeout(90)
def test_a_stop_notice_right_after_a_bad_share_does_not_save_the_cheater(
        tmp_path: Path) -> None:
    """CHEAT sends a share that is bad for VICTIM and at once a stop notice with a false
    reason, then goes quiet.  Every peer finishes its pending checks before it honours the
    stop: VICTIM's check still runs and names CHEAT, and nobody names VICTIM."""
    _StopsAndLeaves.told = []
    peers, results = run(lambda: play_tables(tmp_path, 3, table_cls=_StopsAndLeaves,
                                             prepare=_shares_then_stops, abandon=30.0),
                         timeout=85)
    assert _StopsAndLeaves.told, "the cheater never sent its share"
    r = results[VICTIM]
    assert isinstance(r, TableStopped) and (r.culprit, r.rule) == (CHEAT, "dleq-invalid"), r
    for me in (0, VICTIM):
        r = results[me]
        assert isinstance(r, TableStopped), (me, r)
        assert r.culprit in (CHEAT, None) and (r.culprit == CHEAT or r.stopped_by == CHEAT), r
        report = audit_folder(peers[me].folder)
        v = report.violation
        assert v is not None and v.party in (CHEAT, None), (me, str(report))


@pytest.mark.timeout(90)
def test_a_stop_notice_instead_of_a_close_names_who_stopped(tmp_path: Path) -> None:
    """A losing seat signs a stop notice (a false reason) instead of its closing
    acknowledgement.  That is an act, not a free exit: every other seat stops naming it as
    the seat that stopped the table (not as a cheater), and the file each of them keeps
    says so — never certified, its reason shown as its unverified claim."""

    class StopsAtTheEnd(_StopsAndLeaves):
        def emit(self, kind: str, body: Any) -> None:
            if self.me == CHEAT and kind == CLOSE_KIND:
                self._leave()
                return
            super().emit(kind, body)

    StopsAtTheEnd.told = []
    _peers, results = run(lambda: play_tables(tmp_path, 3, table_cls=StopsAtTheEnd,
                                             abandon=30.0), timeout=85)
    assert StopsAtTheEnd.told
    for me in (0, VICTIM):
        r = results[me]
        assert isinstance(r, TableStopped), (me, r)
        assert (r.culprit, r.rule, r.stopped_by) == (None, "peer-stopped", CHEAT), (me, r)
        assert "never answered" in r.detail and "unverified" in r.detail, r.detail
        assert r.export is not None, "the game reached its end: its file is written"
        report = audit_game(r.export)
        assert report.status == STOPPED and report.violation is not None, str(report)
        assert report.violation.party is None, str(report)
        assert any(f"seat {CHEAT} stopped the table" in n for n in report.notes), str(report)

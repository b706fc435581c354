"""Cheats and refusals at the table, and tampered transcripts caught by the offline audit."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
from table_kit import FrugalBot, finished, go_silent, play_tables, run, stopped_naming

from engine.actions import Action, Bid, PassBid, Sell, TakeTile, encode
from engine.rules import actors, is_simultaneous
from engine.state import Phase
from engine.tiles import SELLER
from engine.view import PlayerView
from p2p.judge.game_audit import (
    CERTIFIED,
    DAMAGED,
    EXIT_FAIR,
    EXIT_NOT_CERTIFIED,
    EXIT_UNFAIR,
    EXIT_UNREADABLE,
    INCOMPLETE,
    STOPPED,
    audit_folder,
    audit_game,
)
from p2p.protocol.wire import ACTION_KIND, ENV_TAG
from p2p.store import encode_export, read_export
from p2p.table import LockstepTable, TableStopped


def _same_end(results: list[Any]) -> None:
    res = finished(results)
    assert len({r.state_hash for r in res}) == 1
    report = audit_game(res[0].export)
    assert report.fair, str(report)


def _refused(results: list[Any], seat: int, *words: str) -> None:
    """Every other peer refused a message from ``seat`` with one of ``words`` in the reason."""
    for me, r in enumerate(finished(results)):
        if me == seat:
            continue
        assert any(f.sender == seat and any(w in f.reason for w in words)
                   for f in r.refusals), (
            me, [(f.sender, f.reason) for f in r.refusals])


def _named_by_every_audit(peers: list[Any], seat: int, *rules: str) -> None:
    """Each peer's stored transcript audits unfair naming ``seat`` for one of ``rules``."""
    for p in peers:
        report = audit_folder(p.folder)
        v = report.violation
        assert report.exit_code == EXIT_UNFAIR and v is not None, str(report)
        assert v.party == seat and v.rule in rules, str(report)


@pytest.mark.timeout(120)
def test_out_of_turn_action_names_its_signer_live_and_in_the_audit(tmp_path: Path) -> None:
    """An action signed out of turn is evidence: every peer stops naming its signer, and
    the audit of every peer's transcript names it too (it was never merely skipped)."""
    done: list[int] = []

    def hook(t: LockstepTable, _a: Action) -> None:
        # a plain step of another seat (in a simultaneous Vizier step seat 1 would be one
        # of the actors and its extra action a second one)
        if t.me == 1 and not done and t.step >= 5 and actors(t.state)[0] not in (1, -1) \
                and not is_simultaneous(t.state):
            done.append(t.step)
            t.emit(ACTION_KIND, [t.step, encode(PassBid())])

    peers, results = run(lambda: play_tables(tmp_path, 3, on_step=hook), timeout=110)
    assert done
    # out of turn, or stale if the actor's move overtook it, or a second one for the step
    rules = ("out-of-turn", "stale-action", "superseded-action")
    stopped_naming(results, 1, *rules)
    _named_by_every_audit(peers, 1, *rules)


@pytest.mark.timeout(120)
def test_illegal_action_names_its_signer_live_and_in_the_audit(tmp_path: Path) -> None:
    done: list[int] = []

    def hook(t: LockstepTable, _a: Action) -> None:
        if not done and t.state.phase == Phase.BID and actors(t.state) == (t.me,):
            done.append(t.me)
            t.emit(ACTION_KIND, [t.step, encode(Bid(1_000_000))])

    peers, results = run(lambda: play_tables(tmp_path, 3, on_step=hook), timeout=110)
    assert done
    stopped_naming(results, done[0], "illegal-action")
    _named_by_every_audit(peers, done[0], "illegal-action")


@pytest.mark.timeout(120)
def test_replayed_envelope_is_refused(tmp_path: Path) -> None:
    done: list[int] = []

    def hook(t: LockstepTable, _a: Action) -> None:
        if t.me == 2 and not done and t.step >= 8:
            done.append(t.step)
            t.transport.broadcast(ENV_TAG + t.log.entries[3].wire)

    _peers, results = run(lambda: play_tables(tmp_path, 3, on_step=hook), timeout=110)
    assert done
    _refused(results, 2, "replayed envelope")
    _same_end(results)


LIAR = 1


class LyingTable(LockstepTable):
    """Seat LIAR claims every hidden good is of the Seller tile's colour (crypto catches it)."""

    def hand(self) -> dict[int, int]:
        real = super().hand()
        if self.me != LIAR:
            return real
        t = self.state.tile
        if self.state.phase == Phase.PERFORM and t is not None and t.kind == SELLER:
            return {h: (c if h in self.state.known else t.colour) for h, c in real.items()}
        return real


class SellerSeeker:
    """Takes Seller tiles and sells everything it may (with LyingTable's lies)."""

    def __init__(self, seed: int) -> None:
        self.inner = FrugalBot(seed)

    def choose(self, view: PlayerView, legal: list[Action]) -> Action:
        sells = [a for a in legal if isinstance(a, Sell)]
        if sells:
            return max(sells, key=lambda a: len(a.handles))
        tiles = view.state.config.board.tileset.tiles
        for a in legal:
            if isinstance(a, TakeTile) and tiles[a.tile].kind == SELLER:
                return a
        return self.inner.choose(view, legal)


@pytest.mark.timeout(160)
def test_false_sell_claim_stops_the_table_naming_the_cheat(tmp_path: Path) -> None:
    liar = LIAR
    stopped: list[TableStopped] = []
    for attempt in range(4):  # the deal is random: the liar may never hold a wrong colour
        _peers, results = run(lambda a=attempt: play_tables(
            tmp_path / str(a), 3, table_cls=LyingTable, agents={liar: SellerSeeker(a)}),
            timeout=35)
        stopped = [r for r in results if isinstance(r, TableStopped)]
        if stopped:
            break
    assert stopped, "in 4 games the liar never held a good of another colour at a Seller"
    assert len(stopped) == 3
    for r in stopped:
        assert r.culprit == liar and r.rule == "false-claim", r


# --- tampered transcripts ---------------------------------------------------------------
@pytest.fixture(scope="module")
def fair_game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fair")
    _peers, results = run(lambda: play_tables(root, 3, seed=11), timeout=110)
    export = finished(results)[0].export
    assert export is not None
    return export


def _rewrite(src: Path, dst: Path, wires: list[bytes]) -> Path:
    g = read_export(src)
    dst.write_bytes(encode_export(g.roster, g.params, g.game_id, g.lam, wires, g.board))
    return dst


def _sender_seq(wire: bytes) -> tuple[int, int]:
    import msgpack

    env = msgpack.unpackb(msgpack.unpackb(wire)[0])
    return env[2], env[3]


@pytest.mark.timeout(60)
def test_fair_game_audits_fair(fair_game: Path) -> None:
    report = audit_game(fair_game)
    assert report.exit_code == EXIT_FAIR, str(report)


@pytest.mark.timeout(60)
def test_fair_game_is_certified(fair_game: Path) -> None:
    report = audit_game(fair_game)
    assert report.status == "certified" and report.closed_by == [0, 1, 2], str(report)
    assert str(report).startswith("CERTIFIED")


@pytest.mark.timeout(60)
def test_one_byte_changed_is_damage_naming_no_one(fair_game: Path, tmp_path: Path) -> None:
    """A garbled envelope is not validly signed: it is nobody's act, so whoever handed out
    the file cannot choose an accused by garbling one."""
    wires = read_export(fair_game).wires
    i = len(wires) // 2
    w = bytearray(wires[i])
    w[len(w) // 2] ^= 0x01
    wires[i] = bytes(w)
    report = audit_game(_rewrite(fair_game, tmp_path / "t.silkroad", wires))
    assert report.exit_code == EXIT_NOT_CERTIFIED, str(report)
    assert report.violation is not None and report.violation.party is None, str(report)
    assert report.status == DAMAGED and f"envelope #{i}" in str(report), str(report)


@pytest.mark.timeout(60)
def test_one_envelope_removed_names_no_one(fair_game: Path, tmp_path: Path) -> None:
    wires = read_export(fair_game).wires
    i = len(wires) // 3
    sender, seq = _sender_seq(wires[i])
    del wires[i]
    report = audit_game(_rewrite(fair_game, tmp_path / "t.silkroad", wires))
    assert report.exit_code == EXIT_NOT_CERTIFIED, str(report)
    v = report.violation
    assert v is not None and v.party is None, str(report)
    assert f"seat {sender}'s envelope {seq} is not in the file" in str(report), str(report)


@pytest.mark.timeout(60)
def test_envelopes_of_one_sender_reordered_names_no_one(fair_game: Path, tmp_path: Path
                                                        ) -> None:
    """A file's order is its exporter's choice: reordered, the same signed envelopes are
    the same game (the audit reads each sender's chain from the set of envelopes)."""
    wires = read_export(fair_game).wires
    i = len(wires) // 4
    sender, _seq = _sender_seq(wires[i])
    j = next(k for k in range(i + 1, len(wires)) if _sender_seq(wires[k])[0] == sender)
    wires[i], wires[j] = wires[j], wires[i]
    report = audit_game(_rewrite(fair_game, tmp_path / "t.silkroad", wires))
    assert report.status == CERTIFIED, str(report)
    assert report.final_hash == audit_game(fair_game).final_hash


@pytest.mark.timeout(60)
def test_envelope_duplicated_names_no_one(fair_game: Path, tmp_path: Path) -> None:
    wires = read_export(fair_game).wires
    wires.insert(len(wires) // 2, wires[len(wires) // 3])
    report = audit_game(_rewrite(fair_game, tmp_path / "t.silkroad", wires))
    assert report.status == CERTIFIED, str(report)  # a copy signs nothing new


@pytest.mark.timeout(60)
def test_truncated_game_is_incomplete_naming_no_one(fair_game: Path, tmp_path: Path) -> None:
    wires = read_export(fair_game).wires
    report = audit_game(_rewrite(fair_game, tmp_path / "t.silkroad", wires[: len(wires) // 2]))
    assert report.exit_code == EXIT_NOT_CERTIFIED and report.status == INCOMPLETE, str(report)
    assert report.violation is not None and report.violation.party is None, str(report)


@pytest.mark.timeout(60)
def test_a_missing_close_is_not_certified(fair_game: Path, tmp_path: Path) -> None:
    """Everything present checks out but one seat's closing acknowledgement is gone: the
    file says so, and names no one (a seat that leaves before closing is not a cheat)."""
    import msgpack

    wires = read_export(fair_game).wires

    def kind(w: bytes) -> str:
        return str(msgpack.unpackb(msgpack.unpackb(w)[0])[5])

    last = max(i for i, w in enumerate(wires) if _sender_seq(w)[0] == 2)
    assert kind(wires[last]) == "close"
    del wires[last]
    report = audit_game(_rewrite(fair_game, tmp_path / "t.silkroad", wires))
    assert report.status == "not certified", str(report)
    assert report.exit_code == EXIT_NOT_CERTIFIED
    assert "seat 2 never acknowledged the end" in str(report), str(report)


def test_unreadable_file(tmp_path: Path) -> None:
    p = tmp_path / "junk.silkroad"
    p.write_bytes(b"\x00garbage")
    assert audit_game(p).exit_code == EXIT_UNREADABLE
    assert audit_game(tmp_path / "missing.silkroad").exit_code == EXIT_UNREADABLE


@pytest.mark.timeout(120)
def test_desync_stops_the_table_naming_the_odd_peer(tmp_path: Path) -> None:
    """A peer whose state drifts (here: a corrupted money count) is named by everyone, on
    its own signature: the state it acknowledged contradicts the moves it acknowledged."""

    def hook(t: LockstepTable, _a: Action) -> None:
        if t.me == 2 and t.step == 12:
            t.state.money[0] += 1

    _peers, results = run(lambda: play_tables(tmp_path, 3, on_step=hook), timeout=110)
    for r in results:
        assert isinstance(r, TableStopped) and r.culprit == 2, r
        assert r.rule in ("ack-mismatch", "action-state-mismatch"), r
    assert list(tmp_path.rglob("desync-step*")), "no state dump written"


@pytest.mark.timeout(120)
def test_silent_peer_is_named_and_the_table_abandons(tmp_path: Path) -> None:
    """A peer that stops answering (its machine died: it sends nothing more) blocks the
    table: it is named."""

    class Crash(Exception):
        pass

    def hook(t: LockstepTable, _a: Action) -> None:
        if t.me == 0 and t.step == 10:
            go_silent(t)
            raise Crash

    peers, results = run(lambda: play_tables(tmp_path, 3, on_step=hook, abandon=3.0),
                         timeout=110)
    assert isinstance(results[0], Crash)
    for r in results[1:]:
        # named by our own timeout, or told by the peer that timed out first
        assert isinstance(r, TableStopped), r
        assert (r.rule, r.culprit) == ("timeout", 0) or (
            r.rule == "peer-stopped" and "timeout" in r.detail and "[0]" in r.detail), r
    # the stored transcript audits up to where the table stopped: no violation, incomplete
    report = audit_folder(peers[1].folder)
    assert not report.fair and report.violation is not None
    # the others' timeout notices: the table was stopped by them (their claim, unverified)
    assert report.violation.rule in ("incomplete", "stopped"), str(report)
    assert report.violation.party is None, str(report)


@pytest.mark.timeout(120)
def test_a_peer_that_fails_tells_the_others_at_once(tmp_path: Path) -> None:
    """A local failure (here an exception in the peer's program) is said to the others in a
    stop notice: they stop within seconds, naming no one, instead of waiting for it."""

    class Crash(Exception):
        pass

    def hook(t: LockstepTable, _a: Action) -> None:
        if t.me == 0 and t.step == 10:
            raise Crash("disk on fire")

    _peers, results = run(lambda: play_tables(tmp_path, 3, on_step=hook, abandon=60.0),
                          timeout=40)
    assert isinstance(results[0], Crash)
    for r in results[1:]:
        assert isinstance(r, TableStopped) and r.rule == "peer-stopped", r
        assert r.culprit is None and "disk on fire" in r.detail, r


HOSTILE = "\x1b]0;pwned\x07\x1b[2J\u202e"
"""Terminal escapes (retitle, clear the screen) and a right-to-left override."""


def _is_clean(text: str) -> bool:
    return not any(ch in text for ch in "\x1b\x07\u202e")


@pytest.mark.timeout(120)
def test_a_stop_notice_reaches_the_others_cleaned(tmp_path: Path,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    """A stop notice's reason is its sender's own words: the other seats show and log it
    without its escape sequences or bidi overrides (p2p.sanitize), the words kept."""

    class Crash(Exception):
        pass

    def hook(t: LockstepTable, _a: Action) -> None:
        if t.me == 0 and t.step == 10:
            raise Crash(HOSTILE + "disk on fire")

    with caplog.at_level(logging.INFO, logger="p2p"):
        _peers, results = run(lambda: play_tables(tmp_path, 3, on_step=hook, abandon=60.0),
                              timeout=40)
    assert isinstance(results[0], Crash)
    for r in results[1:]:
        assert isinstance(r, TableStopped) and r.rule == "peer-stopped", r
        assert "disk on fire" in r.detail and _is_clean(r.detail), repr(r.detail)
    told = [x.getMessage() for x in caplog.records
            if x.getMessage().startswith(("seat 1 ", "seat 2 "))]
    assert any("disk on fire" in line for line in told), told
    assert all(_is_clean(line) for line in told), told


@pytest.mark.timeout(120)
def test_garbage_never_crashes_a_peer(tmp_path: Path) -> None:
    """Unsigned junk, truncated envelopes and bad sync requests are refused with reasons
    (nobody signed them, so nobody is named); the game still ends fair."""
    import random

    rng = random.Random(4)
    sent: list[int] = []

    def hook(t: LockstepTable, _a: Action) -> None:
        if t.me != 1 or t.step % 7 or len(sent) > 6:
            return
        sent.append(t.step)
        good = t.log.entries[-1].wire
        for junk in (b"", b"E", b"E" + bytes(rng.randrange(256) for _ in range(40)),
                     b"E" + good[: len(good) // 2], b"S\xc1", b"S" + encode(PassBid()),
                     b"Z123", b"E" + good[:-1] + bytes([good[-1] ^ 1])):
            t.transport.broadcast(junk)

    _peers, results = run(lambda: play_tables(tmp_path, 3, on_step=hook), timeout=110)
    assert sent
    res = finished(results)
    for me in (0, 2):
        reasons = " | ".join(f.reason for f in res[me].refusals if f.sender in (1, None))
        for words in ("malformed envelope", "malformed sync", "unknown message tag"):
            assert words in reasons, (words, reasons[:2000])
    _same_end(results)


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("kind", "body", "rule"), [
    (ACTION_KIND, ["not a step", b"\x00"], "malformed-action"),
    (ACTION_KIND, [1, b"\xc1\xc1", b""], "stale-action"),
    ("no-such-kind", [1, 2, 3], "unknown-kind"),
    ("ack", ["bad"], "malformed-ack"),
    ("abort", ["nobody", 1, 2, 3], "malformed-abort"),
])
def test_signed_junk_names_its_signer_live_and_in_the_audit(
        tmp_path: Path, kind: str, body: list[Any], rule: str) -> None:
    """Whatever a seat signs that no honest table sends is evidence against it: every peer
    stops naming it, and every stored transcript audits unfair naming it."""
    sent: list[int] = []

    def hook(t: LockstepTable, _a: Action) -> None:
        if t.me == 1 and not sent and t.step >= 6:
            sent.append(t.step)
            t.emit(kind, body)

    peers, results = run(lambda: play_tables(tmp_path, 3, on_step=hook), timeout=110)
    assert sent
    stopped_naming(results, 1, rule)
    if kind == "no-such-kind":
        # never stored (it could be large): the abort notices carry it instead
        for p in peers:
            report = audit_folder(p.folder)
            v = report.violation
            assert v is not None and v.party == 1 and v.rule == "unknown-kind", str(report)
    else:
        _named_by_every_audit(peers, 1, rule)


@pytest.mark.timeout(60)
def test_weak_roster_key_in_a_transcript_is_named(fair_game: Path, tmp_path: Path) -> None:
    """A file whose roster gives a seat a small-order key (one that "verifies" any forged
    signature) is unfair naming that seat, even with a matching game id."""
    import dataclasses

    from p2p.game import compute_game_id

    g = read_export(fair_game)
    roster = list(g.roster)
    roster[1] = dataclasses.replace(roster[1], key=bytes([1]) + bytes(31))
    bad = tmp_path / "weak.silkroad"
    bad.write_bytes(encode_export(roster, g.params, compute_game_id(roster, g.params), g.lam,
                                  g.wires, g.board))
    report = audit_game(bad)
    v = report.violation
    assert report.exit_code == EXIT_UNFAIR and v is not None, str(report)
    assert (v.party, v.rule) == (1, "weak-key"), str(report)


@pytest.mark.timeout(120)
def test_a_seat_that_withholds_its_secrets_is_named(tmp_path: Path) -> None:
    """Seat 1 plays to the end and acknowledges it, then never sends its secrets (without
    them nobody can check its shuffles or its "none available" claims).  The others name it
    (`secrets-withheld`); their transcripts name no one — the file alone cannot show that
    seat 1 withheld rather than that the file was cut — and say who stopped the table (the
    others, with their reason as their claim) and whose secrets are missing."""
    class Withholder(LockstepTable):
        async def op(self, start: Any, what: str) -> Any:
            if what == "secrets" and self.me == 1:
                await asyncio.sleep(8)  # never signs them; leaves once the others are gone
                raise TableStopped(1, "left", "kept its secrets")
            return await super().op(start, what)

    peers, results = run(lambda: play_tables(tmp_path, 3, table_cls=Withholder, abandon=3.0),
                         timeout=110)
    for me in (0, 2):
        r = results[me]
        assert isinstance(r, TableStopped), (me, r)
        assert (r.culprit, r.rule) == (1, "secrets-withheld"), (me, r)
        report = audit_folder(peers[me].folder)
        assert report.status == STOPPED and report.violation is not None, str(report)
        assert report.violation.party is None and "seats [1]" in str(report), str(report)
        assert any(n.startswith("the secrets of seats [1] are not in the file")
                   for n in report.notes), str(report)

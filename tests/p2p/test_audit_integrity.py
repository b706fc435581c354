"""The audit certifies only the game that was played.

Forged files are made the way a cheating seat would make them: it holds its own signing key
(from its game folder), so it can re-sign its own chain from any point and append whatever
it likes; it cannot sign for anyone else.  Every test checks the seat named, or that no
seat is named where the evidence is only the file's order or completeness.  Live cases
(selective delivery, a cheat shown to one peer only) check the verdict of every peer and
of every peer's stored transcript.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import msgpack
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from table_kit import LAM, Rerouted, finished, play_tables, run

from cli.main import main
from crypto.transcript import DOMAIN, VERSION, Signer, envelope_id
from engine.actions import Action, Bid, PassBid, decode, encode
from engine.rules import actors
from p2p.judge.game_audit import (
    CERTIFIED,
    DAMAGED,
    EXIT_FAIR,
    EXIT_NOT_CERTIFIED,
    EXIT_UNFAIR,
    audit_folder,
    audit_game,
)
from p2p.local_table import LocalPeer, make_local_setup
from p2p.protocol.wire import ENV_TAG, MAX_EARLY, STOP_KIND
from p2p.store import GameStore, encode_export, read_export
from p2p.table import LockstepTable, TableStopped

FORGER = 1


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[LocalPeer]]:
    """A fair, certified 3-seat game and its peers (whose keys a forger may use)."""
    root = tmp_path_factory.mktemp("integrity")
    peers, results = run(lambda: play_tables(root, 3, seed=5), timeout=110)
    res = finished(results)
    assert res[0].export is not None
    assert audit_game(res[0].export).exit_code == EXIT_FAIR
    return res[0].export, peers


def _envelope(wire: bytes) -> list[Any]:
    return list(msgpack.unpackb(msgpack.unpackb(wire)[0]))


def _sign(key: Ed25519PrivateKey, env: list[Any]) -> bytes:
    raw = msgpack.packb(env, use_bin_type=True)
    return msgpack.packb([raw, key.sign(DOMAIN + raw)], use_bin_type=True)


def _key(peers: list[LocalPeer], seat: int) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(peers[seat].identity.to_bytes())


def _write(src: Path, dst: Path, wires: list[bytes]) -> Path:
    g = read_export(src)
    dst.write_bytes(encode_export(g.roster, g.params, g.game_id, g.lam, wires, g.board))
    return dst


def _resign_from(wires: list[bytes], key: Ed25519PrivateKey, seat: int, seq: int,
                 change: Any) -> list[bytes]:
    """``seat`` rewrites its own chain from ``seq`` on: ``change(env)`` edits that envelope
    (or returns None to drop it), and every later one of its envelopes is re-signed to
    chain to the new history; everybody else's envelopes stay byte for byte."""
    out: list[bytes] = []
    prev: bytes | None = None
    next_seq = seq
    for w in wires:
        env = _envelope(w)
        if env[2] != seat or env[3] < seq:
            out.append(w)
            if env[2] == seat:
                prev = envelope_id(w)
            continue
        if env[3] == seq:
            env = change(env)
            if env is None:
                continue
        env[3], env[4] = next_seq, prev if prev is not None else bytes(32)
        nw = _sign(key, env)
        out.append(nw)
        prev, next_seq = envelope_id(nw), next_seq + 1
    return out


def _append(wires: list[bytes], key: Ed25519PrivateKey, seat: int, kind: str,
            body: Any) -> list[bytes]:
    """``seat`` signs one more envelope after its last one and adds it to the file."""
    last = [w for w in wires if _envelope(w)[2] == seat][-1]
    env = _envelope(last)
    game_id = env[1]
    return [*wires, _sign(key, [VERSION, game_id, seat, env[3] + 1, envelope_id(last),
                                kind, body])]


def _unfair(path: Path, seat: int | None, rule: str) -> None:
    report = audit_game(path)
    v = report.violation
    assert report.exit_code == EXIT_UNFAIR and v is not None, str(report)
    assert (v.party, v.rule) == (seat, rule), str(report)


@pytest.mark.timeout(120)
def test_a_rewritten_bid_is_named_as_the_forgers_two_histories(
        game: tuple[Path, list[LocalPeer]], tmp_path: Path) -> None:
    """The forger changes one of its own past bids and re-signs its chain from there: the
    others' signed acks name its original envelopes, so the audit names the forger instead
    of certifying another winner."""
    src, peers = game
    wires = read_export(src).wires
    moves = [w for w in wires if _envelope(w)[2] == FORGER and _envelope(w)[5] == "action"]
    bids = [w for w in moves if isinstance(decode(_envelope(w)[6][1]), Bid | PassBid)]
    chosen = bids or moves  # a game may deal the forger no auction to bid in
    target = _envelope(chosen[len(chosen) // 2])

    def rebid(env: list[Any]) -> list[Any]:
        a = decode(env[6][1])
        env[6] = [env[6][0], encode(PassBid() if isinstance(a, Bid) else Bid(1)), *env[6][2:]]
        return env

    forged = _resign_from(wires, _key(peers, FORGER), FORGER, target[3], rebid)
    _unfair(_write(src, tmp_path / "forged.silkroad", forged), FORGER, "rewritten-history")


@pytest.mark.timeout(120)
def test_acks_deleted_by_their_signer_are_a_rewritten_history(
        game: tuple[Path, list[LocalPeer]], tmp_path: Path) -> None:
    src, peers = game
    wires = read_export(src).wires
    acks = [_envelope(w)[3] for w in wires
            if _envelope(w)[2] == FORGER and _envelope(w)[5] == "ack"]
    forged = _resign_from(wires, _key(peers, FORGER), FORGER, acks[len(acks) // 2],
                          lambda env: None)
    _unfair(_write(src, tmp_path / "noacks.silkroad", forged), FORGER, "rewritten-history")


@pytest.mark.timeout(120)
def test_acks_zeroed_are_damage_naming_no_one(game: tuple[Path, list[LocalPeer]],
                                              tmp_path: Path) -> None:
    """Zeroing an ack's bytes breaks its signature: the file is damaged; nobody signed it."""
    src, _peers = game
    wires = read_export(src).wires
    for i, w in enumerate(wires):
        if _envelope(w)[2] == FORGER and _envelope(w)[5] == "ack":
            wires[i] = w[:40] + bytes(len(w) - 40)
    report = audit_game(_write(src, tmp_path / "zero.silkroad", wires))
    assert report.status == "damaged" and report.violation is not None, str(report)
    assert report.violation.party is None, str(report)


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("kind", "body", "rule"), [
    ("abort", [0, "dleq-invalid", "made up", None], "false-abort"),
    ("junk", [1, 2, 3], "unknown-kind"),
    ("close", None, "second-close"),
    ("ack", None, "ack-mismatch"),
])
def test_what_a_seat_appends_to_its_own_chain_is_judged(
        game: tuple[Path, list[LocalPeer]], tmp_path: Path, kind: str, body: Any,
        rule: str) -> None:
    """A false abort notice, a junk envelope, a second close, a lying ack: each signed by
    the forger after its last envelope, each its own violation."""
    src, peers = game
    wires = read_export(src).wires
    if kind == "close":
        body = [10**6, bytes(32), []]
    elif kind == "ack":
        body = [3, bytes(32), []]
    forged = _append(wires, _key(peers, FORGER), FORGER, kind, body)
    _unfair(_write(src, tmp_path / f"{kind}.silkroad", forged), FORGER, rule)


@pytest.mark.timeout(120)
def test_a_lying_head_names_the_liar_not_the_seat_it_accuses(
        game: tuple[Path, list[LocalPeer]], tmp_path: Path) -> None:
    """The forger appends an ack whose heads claim one of seat 2's envelopes has another id:
    seat 2's own signature and seat 0's close contradict it, so the liar is named."""
    src, peers = game
    wires = read_export(src).wires
    close0 = next(_envelope(w) for w in wires
                  if _envelope(w)[2] == 0 and _envelope(w)[5] == "close")
    q = next(q for s, q, _id in close0[6][2] if s == 2)  # seat 0 signed that it held this
    body = [1, bytes(32), [[2, q, bytes(32)]]]
    forged = _append(wires, _key(peers, FORGER), FORGER, "ack", body)
    report = audit_game(_write(src, tmp_path / "liar.silkroad", forged))
    v = report.violation
    assert report.exit_code == EXIT_UNFAIR and v is not None, str(report)
    # outvoted (head-mismatch), or caught contradicting its own earlier close
    assert v.party == FORGER and v.rule in ("head-mismatch", "contradictory-acks"), str(report)


@pytest.mark.timeout(120)
def test_a_close_without_secrets_is_named(game: tuple[Path, list[LocalPeer]],
                                          tmp_path: Path) -> None:
    """The forger drops its secrets and re-signs its close after them: it signed the end of
    the game without revealing what the audit needs to check its shuffles and claims."""
    src, peers = game
    wires = read_export(src).wires
    secrets = [_envelope(w)[3] for w in wires if _envelope(w)[2] == FORGER
               and _envelope(w)[5] == "crypto" and _envelope(w)[6][1] == "secrets"]
    assert len(secrets) == 1
    forged = _resign_from(wires, _key(peers, FORGER), FORGER, secrets[0], lambda env: None)
    report = audit_game(_write(src, tmp_path / "nosecrets.silkroad", forged))
    v = report.violation
    # the others' closes name its secrets envelope: that contradiction comes first
    assert v is not None and v.party == FORGER, str(report)
    assert v.rule in ("rewritten-history", "closed-without-secrets"), str(report)


@pytest.mark.timeout(120)
def test_an_action_sent_to_one_peer_only_is_fetched_and_the_game_is_certified(
        tmp_path: Path) -> None:
    """Selective delivery: seat 1 sends a valid action to seat 0 only.  Seat 2 fetches it
    from whoever has it (gap sync while waiting) and nobody is blamed."""
    done: list[int] = []

    class Selective(LockstepTable):
        def emit(self, kind: str, body: Any) -> None:
            if self.me == 1 and kind == "action" and not done and self.step >= 6:
                env = self.outbox.sign(kind, body)
                done.append(self.step)
                inner = self.transport
                self.transport = Rerouted(inner, lambda b: 0 if b == ENV_TAG + env.wire
                                          else None)
                self._dispatch(env)
                self.outbox.send_own([env.wire], urgent=True)
                self.transport = inner
                return
            super().emit(kind, body)

    _peers, results = run(lambda: play_tables(tmp_path, 3, table_cls=Selective), timeout=110)
    assert done
    res = finished(results)
    assert len({r.state_hash for r in res}) == 1
    for r in res:
        assert r.export is not None and audit_game(r.export).exit_code == EXIT_FAIR


@pytest.mark.timeout(120)
def test_a_cheat_shown_to_one_peer_only_is_judged_by_all(tmp_path: Path) -> None:
    """Seat 1 signs an illegal move and shows it to seat 0 only.  Seat 0 stops naming seat
    1 in an abort notice that carries the move; seat 2, which never received it, checks the
    carried envelope itself and names seat 1 too — never the accuser."""
    done: list[int] = []

    class ShowOne(LockstepTable):
        def emit(self, kind: str, body: Any) -> None:
            if (self.me == 1 and kind == "action" and not done and self.step >= 6
                    and actors(self.state) == (1,)):
                done.append(self.step)
                env = self.outbox.sign(kind, [body[0], encode(Bid(10**6)), body[2]])
                self.transport.send(0, ENV_TAG + env.wire)
                return
            super().emit(kind, body)

    peers, results = run(lambda: play_tables(tmp_path, 3, table_cls=ShowOne, abandon=20.0),
                         timeout=110)
    assert done
    for seat in (0, 2):
        r = results[seat]
        assert r.culprit == 1 and r.rule == "illegal-action", (seat, r)
    for seat in (0, 2):
        report = audit_folder(peers[seat].folder)
        v = report.violation
        assert v is not None and v.party == 1 and v.rule == "illegal-action", str(report)


@pytest.mark.timeout(120)
def test_a_flood_of_early_envelopes_costs_its_sender_not_the_others(tmp_path: Path) -> None:
    """Seat 1 sends hundreds of validly signed envelopes far ahead of its chain.  The room
    for held envelopes is per sender: the flood never refuses another seat's message, and
    seat 1 is named (its flood contradicts the chain it goes on signing)."""
    done: list[int] = []

    def hook(t: LockstepTable, _a: Action) -> None:
        if t.me == 1 and not done and t.step >= 6:
            done.append(t.step)
            s = t.signer
            seq, prev = s.seq, s.prev
            s.seq += 5  # leave a gap: everything after it is held (or dropped past the window)
            for i in range(MAX_EARLY + 100):
                t.transport.broadcast(ENV_TAG + s.sign("stop", ["r", str(i)]))
            s.seq, s.prev = seq, prev

    tables: dict[int, LockstepTable] = {}

    def prepare(t: LockstepTable) -> None:
        tables[t.me] = t

    _peers, results = run(lambda: play_tables(tmp_path, 3, on_step=hook, abandon=30.0,
                                              prepare=prepare), timeout=110)
    assert done
    for seat in (0, 2):
        r = results[seat]
        assert isinstance(r, TableStopped) and r.culprit == 1, (seat, r)
        assert r.rule in ("equivocation", "bad-chain"), (seat, r)
        # no other seat's message is refused: a copy of one we hold (the notices are
        # relayed to all on arrival, so honest copies come back) loses nothing
        lost = [f for f in tables[seat].refusals if f.sender not in (1, None)
                and not f.reason.startswith("replayed envelope")]
        assert lost == [], lost
        assert any("too far ahead" in f.reason for f in tables[seat].refusals)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("lam", [1, -5, 40, True])
def test_a_files_lambda_is_the_protocols_own(game: tuple[Path, list[LocalPeer]],
                                             tmp_path: Path, lam: Any) -> None:
    """λ (cut-and-choose rounds) is a constant of protocol version 4, so the game id binds
    it; a file that says otherwise is damaged (λ is nobody's signed word: no one named)."""
    src, _peers = game
    g = read_export(src)
    bad = tmp_path / "lam.silkroad"
    bad.write_bytes(encode_export(g.roster, g.params, g.game_id, lam, g.wires, g.board))
    report = audit_game(bad)
    assert report.status == "damaged" and report.violation is not None, str(report)
    assert report.violation.party is None and "λ" in str(report), str(report)


HOSTILE = "\x1b]0;pwned\x07\x1b[2J\u202e"
"""Terminal escapes (retitle, clear the screen) and a right-to-left override."""


def test_a_files_names_and_stop_reasons_are_shown_cleaned(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Whoever writes a game file chooses its roster names and the words of its stop
    notices: the audit (its report and ``silkroad audit``) shows them without escape
    sequences or bidi overrides, and still checks the game id over the raw names."""
    async def setup() -> list[LocalPeer]:
        peers = await make_local_setup(3, "audit", tmp_path, lam=LAM,
                                       names=[HOSTILE + "Ann", "Bo", "Cy"])
        for p in peers:
            await p.listener.close()
        return peers

    peers = run(setup)
    gid = peers[0].game_id
    stop = Signer(gid, 0, _key(peers, 0)).sign(STOP_KIND, ["local" + HOSTILE,
                                                           HOSTILE + "disk on fire"])
    GameStore(peers[1].folder).append(stop)
    report = audit_folder(peers[1].folder)
    assert report.error is None and not report.fair, str(report)
    shown = [*report.names, *report.notes, str(report)]
    assert report.names[0] == "?Ann", report.names  # the override shows as a visible "?"
    assert any("disk on fire" in line for line in report.notes), report.notes
    assert not any(ch in line for line in shown for ch in "\x1b\x07\u202e"), shown
    assert main(["audit", str(peers[1].folder)]) == 3
    out = capsys.readouterr()
    assert "disk on fire" in out.out, out
    assert not any(ch in out.out + out.err for ch in "\x1b\x07\u202e"), out


def _truncated_rewrite(wires: list[bytes], key: Ed25519PrivateKey, seat: int,
                       target: list[Any]) -> list[bytes]:
    """``seat`` re-signs its envelope ``target`` (a bid) with another amount, keeps nothing
    of its own after it, and every other seat's envelopes end with that seat's next action
    after the rewrite: the history those seats acknowledged is simply absent."""
    out: list[bytes] = []
    cut: dict[int, int] = {}  # seat -> seq of its next action after the rewrite
    seen_target = False
    for w in wires:
        env = _envelope(w)
        who, seq = env[2], env[3]
        if who == seat:
            if seq < target[3]:
                out.append(w)
            elif seq == target[3]:
                a = decode(env[6][1])
                env[6] = [env[6][0], encode(PassBid() if isinstance(a, Bid) else Bid(1)),
                          *env[6][2:]]
                out.append(_sign(key, env))
                seen_target = True
            continue
        if seen_target and who not in cut and env[5] == "action":
            cut[who] = seq
        if who in cut and seq > cut[who]:
            continue
        out.append(w)
    return out


@pytest.mark.timeout(120)
def test_a_truncated_rewrite_names_no_one(game: tuple[Path, list[LocalPeer]],
                                          tmp_path: Path) -> None:
    """A seat re-signs one of its past bids and drops what followed; each other seat's
    envelopes stop at its next action, whose honest state hash now disagrees with the
    replay.  The file holds the forger's move and the next seat's hash, not the history the
    next seat acknowledged: nobody is named (it used to name the next player)."""
    src, peers = game
    wires = read_export(src).wires
    # the game's coin differs from run to run: the forger is the seat with the most bids
    # (a bid rewritten as a pass is legal, so the disagreement is what the audit meets)
    bids = {p: [_envelope(w) for w in wires if _envelope(w)[2] == p
                and _envelope(w)[5] == "action" and isinstance(decode(_envelope(w)[6][1]), Bid)]
            for p in range(3)}
    forger = max(bids, key=lambda p: len(bids[p]))
    assert bids[forger], "nobody bid in this game"
    unnamed = 0
    chosen = bids[forger][:: max(1, len(bids[forger]) // 4)][:4]
    for k, target in enumerate(chosen):
        forged = _truncated_rewrite(wires, _key(peers, forger), forger, target)
        report = audit_game(_write(src, tmp_path / f"cut{k}.silkroad", forged))
        v = report.violation
        assert report.exit_code != EXIT_FAIR and v is not None, str(report)
        # an illegal rewritten bid is the forger's own; nobody else is ever named
        assert v.party in (None, forger), str(report)
        unnamed += v.party is None
    assert unnamed, "no rewrite was legal: the case of a disagreement was not tried"


@pytest.fixture(scope="module")
def busy_game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fair 3-seat game of bots that draw from the bag (many crypto messages per seat)."""
    root = tmp_path_factory.mktemp("busy")
    _peers, results = run(lambda: play_tables(root, 3, seed=2, frugal=False), timeout=110)
    export = finished(results)[0].export
    assert export is not None
    return export


@pytest.mark.timeout(120)
@pytest.mark.parametrize("first", [0, 1, 2])
def test_one_seats_envelopes_written_first_is_the_same_game(
        busy_game: Path, tmp_path: Path, first: int) -> None:
    """The interleaving of a file is its exporter's choice: one seat's envelopes written
    first (each seat's own order kept) is the same certified game, never that seat's
    flooding."""
    src = busy_game
    wires = read_export(src).wires
    moved = ([w for w in wires if _envelope(w)[2] == first]
             + [w for w in wires if _envelope(w)[2] != first])
    report = audit_game(_write(src, tmp_path / "first.silkroad", moved))
    assert report.status == CERTIFIED, str(report)
    assert report.final_hash == audit_game(src).final_hash


@pytest.mark.timeout(60)
def test_unsigned_edits_are_damage_naming_no_one(game: tuple[Path, list[LocalPeer]],
                                                 tmp_path: Path) -> None:
    """The roster's names and the parameters are nobody's signed words: edited with the
    game id kept, the file is damaged (exit 3), not "unfair" with nobody named."""
    src, _peers = game
    g = read_export(src)
    roster = [replace(e, name=e.name + "x") if i == 0 else e for i, e in enumerate(g.roster)]
    params = replace(g.params, money="hidden" if g.params.money != "hidden" else "open")
    for k, (r, p) in enumerate([(roster, g.params), (g.roster, params)]):
        bad = tmp_path / f"edit{k}.silkroad"
        bad.write_bytes(encode_export(r, p, g.game_id, g.lam, g.wires, g.board))
        report = audit_game(bad)
        v = report.violation
        assert report.status == DAMAGED and report.exit_code == EXIT_NOT_CERTIFIED, str(report)
        assert v is not None and v.party is None, str(report)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("where", ["before-close", "after-close"])
def test_a_stop_notice_in_a_finished_game_is_reported(
        game: tuple[Path, list[LocalPeer]], tmp_path: Path, where: str) -> None:
    """A stop notice is its signer's act: in a game every seat closed, one the forger slips
    in before its close (re-signing the close after it) or appends after it keeps the game
    from being certified, and the audit says who stopped the table and why (its claim)."""
    src, peers = game
    wires = read_export(src).wires
    key = _key(peers, FORGER)
    if where == "after-close":
        forged = _append(wires, key, FORGER, STOP_KIND, ["timeout", "seat 2 never answered"])
    else:
        close = next(_envelope(w) for w in wires
                     if _envelope(w)[2] == FORGER and _envelope(w)[5] == "close")
        stop = [VERSION, close[1], FORGER, close[3], close[4], STOP_KIND,
                ["timeout", "seat 2 never answered"]]
        stop_wire = _sign(key, stop)
        close[3], close[4] = close[3] + 1, envelope_id(stop_wire)
        forged = [w for w in wires if not (_envelope(w)[2] == FORGER
                                           and _envelope(w)[5] == "close")]
        forged += [stop_wire, _sign(key, close)]
    report = audit_game(_write(src, tmp_path / "stop.silkroad", forged))
    v = report.violation
    assert report.exit_code == EXIT_NOT_CERTIFIED and v is not None, str(report)
    assert v.party is None, str(report)
    assert any(f"seat {FORGER} stopped the table" in n and "never answered" in n
               for n in report.notes), str(report)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("how", ["repeated", "own-head-lowered"])
def test_a_close_has_one_spelling(game: tuple[Path, list[LocalPeer]], tmp_path: Path,
                                  how: str) -> None:
    """The forger re-signs its close saying the same thing another way — a head repeated
    (one head per seat, in seat order, is the only spelling an honest peer writes: named
    ``malformed-close``), or its own head moved back to a true but earlier envelope (it
    then no longer acknowledges its own last envelope: not certified).  Either way the
    file is never certified with signed content the game did not have."""
    src, peers = game
    wires = read_export(src).wires
    close = next(_envelope(w) for w in wires
                 if _envelope(w)[2] == FORGER and _envelope(w)[5] == "close")
    heads = close[6][2]
    if how == "repeated":
        close[6][2] = [*heads[:1], heads[0], *heads[1:]]
    else:
        mine = [w for w in wires if _envelope(w)[2] == FORGER][close[3] - 2]
        close[6][2] = [[s, q, i] if s != FORGER else [s, q - 1, envelope_id(mine)]
                       for s, q, i in heads]
    forged = [w for w in wires if not (_envelope(w)[2] == FORGER
                                       and _envelope(w)[5] == "close")]
    report = audit_game(_write(src, tmp_path / "close.silkroad", [*forged,
                                                                   _sign(_key(peers, FORGER),
                                                                         close)]))
    v = report.violation
    assert report.status != CERTIFIED and v is not None, str(report)
    if how == "repeated":
        assert (v.party, v.rule) == (FORGER, "malformed-close"), str(report)
    else:
        assert v.party is None, str(report)

"""Crypto messages are judged against the history their signer acknowledged.

A crypto body signs what its sender computed, not which input it computed it on.  A
forger holding one seat's key re-signs its shuffle with a fresh *valid* shuffle of the
same deck (:func:`bench.forge._apply_fresh_shuffle`) and drops its later envelopes: the
next seat's honest proof, made on the forger's original deck, fails against the file's.
Since protocol version 6 every crypto body carries its signer's heads, so the judge sees
that the failing message rested on another version of the forger's envelope and names
no one (docs/security.md, "What the heads buy").
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from table_kit import play_tables, run, stopped_naming

from bench import forge as fg
from crypto.transcript import CRYPTO_KIND, parse, signing_key
from engine.actions import Action
from p2p.judge.game_audit import CERTIFIED, EXIT_UNFAIR, UNFAIR, audit_folder, audit_game
from p2p.net.handshake import PROTOCOL_VERSION
from p2p.protocol.wire import HEADS_SINCE, crypto_heads_problem
from p2p.store import read_export
from p2p.table import LockstepTable, TableStopped


@pytest.fixture(scope="module", params=[3, 4])
def honest(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> fg.HonestGame:
    players = request.param
    return fg.make_honest_game(tmp_path_factory.mktemp(f"honest{players}"), players,
                               "verified", seed=11)


def _shuffles(f: fg.Forge) -> list[fg.Env]:
    return [e for e in f.chain(f.forger) if fg._is_shuffle(e, f.forger)
            and fg._shuffle_input(f, e) is not None]


def test_every_crypto_body_carries_the_heads_of_the_others(honest: fg.HonestGame) -> None:
    game = read_export(honest.path)
    assert game.params.protocol_version == PROTOCOL_VERSION >= HEADS_SINCE
    keys = [signing_key(e.key) for e in game.roster]
    envs = [parse(w, keys, game.game_id) for w in game.wires]
    crypto = [e for e in envs if e.kind == CRYPTO_KIND]
    assert crypto
    for e in crypto:
        assert crypto_heads_problem(e.body, honest.players, e.sender) is None
    # a seat's answer to a shuffle names the shuffle it answered
    by = {(e.sender, e.seq): e for e in envs}
    answered = 0
    for e in crypto:
        if isinstance(e.body[3], str) and e.body[3].startswith("shuffle_") and e.sender > 0:
            prev = {h[0]: (h[1], h[2]) for h in e.body[5]}[e.sender - 1]
            assert by[(e.sender - 1, prev[0])].id == prev[1]
            answered += 1
    assert answered > 0


@pytest.mark.timeout(600)
@pytest.mark.parametrize("others", ["before-ack", "keep", "next-action"])
def test_a_fresh_valid_shuffle_never_names_the_honest_next_seat(
        honest: fg.HonestGame, tmp_path: Path, others: str) -> None:
    """Every forger that has a shuffle with an input in the file, each of its shuffles
    (the deal's and the bag's), with the others' envelopes kept, hidden from their first
    ack naming the forgery, or kept up to their next move."""
    tried = 0
    for forger in range(1, honest.players):
        f0 = fg.Forge(honest, forger, honest.wires)
        for env in _shuffles(f0)[:3]:
            f = fg.Forge(honest, forger, honest.wires)
            fg.apply_step(f, "fresh_shuffle", {"seq": env[3], "seed": 7 + env[3],
                                                "others": others, "cut": 0.5})
            path = f.write(tmp_path / f"fresh-{forger}-{env[3]}.silkroad")
            report = audit_game(path)
            problem = fg.check(report, forger, honest, path)
            assert problem is None, f"{f.text()}\n  -> {problem}"
            assert report.status != CERTIFIED
            if report.status == UNFAIR:  # only on the forger's own signed envelopes
                assert report.violation is not None and report.violation.party == forger
            tried += 1
    assert tried >= 2


def test_the_honest_seat_is_spared_by_its_heads(honest: fg.HonestGame,
                                                tmp_path: Path) -> None:
    """The next seat's proof fails against the forged deck: the file is disputed, naming
    no one, and says the failing message rested on another version of the forger's."""
    forger = 1
    f = fg.Forge(honest, forger, honest.wires)
    env = _shuffles(f)[0]
    fg.apply_step(f, "fresh_shuffle", {"seq": env[3], "seed": 3, "others": "before-ack",
                                        "cut": 0.5})
    report = audit_game(f.write(tmp_path / "fresh.silkroad"))
    assert report.status == "disputed", str(report)
    assert report.violation is not None and report.violation.party is None
    text = " ".join(report.notes)
    assert "another version of seat 1's envelope" in text, text
    assert "shuffle-proof-invalid" in text or "dleq" in text, text


def test_a_crypto_body_without_heads_names_its_signer(honest: fg.HonestGame,
                                                      tmp_path: Path) -> None:
    """A version-6 crypto body of five elements (or with malformed heads) is its signer's
    violation whatever else the file holds: ``malformed-crypto``."""
    forger = 2
    f = fg.Forge(honest, forger, honest.wires)
    crypto = [e for e in f.chain(forger) if e[5] == CRYPTO_KIND]
    target = crypto[len(crypto) // 2]
    for cut, name in ((lambda b: b[:5], "no heads"),
                      (lambda b: [*b[:5], [[forger, 0, bytes(32)]]], "own head"),
                      (lambda b: [*b[:5], list(reversed(b[5]))], "unordered")):
        g = fg.Forge(honest, forger, honest.wires)
        g.wires = fg.resign_from(g.wires, g.key, forger, target[3],
                                 lambda e, cut=cut: [[*e[:6], cut(e[6])]])
        g.wires = [w for w in g.wires  # its later acks would name the original (rewritten)
                   if not ((e := fg.try_envelope(w)) is not None and e[2] == forger
                           and e[3] > target[3])]
        report = audit_game(g.write(tmp_path / "no-heads.silkroad"))
        if name == "unordered" and len(target[6][5]) < 2:
            continue
        assert report.status == UNFAIR, (name, str(report))
        assert report.violation is not None
        assert (report.violation.party, report.violation.rule) == (forger, "malformed-crypto")


def test_the_operator_is_in_the_adversarys_search() -> None:
    assert "fresh_shuffle" in fg.OPS and "fresh_shuffle" in fg.weighted_op_names()
    assert fg.OPS["fresh_shuffle"].draw is not None
    rng = random.Random(1)
    assert "fresh_shuffle" in fg.pick_ops(rng, 400)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("heads", [None, "own"], ids=["no-heads", "own-head"])
def test_a_crypto_body_without_heads_names_its_signer_live(tmp_path: Path,
                                                           heads: str | None) -> None:
    """Seat 1 signs a crypto body whose heads are missing or name its own chain: every
    peer stops naming it ``malformed-crypto``, and every folder audits so."""
    sent: list[int] = []

    def hook(t: LockstepTable, _a: Action) -> None:
        if t.me == 1 and not sent and t.step >= 6:
            sent.append(t.step)
            body: list[object] = [99, "keys", [], "key", []]
            if heads == "own":
                body.append([[1, 0, bytes(32)]])
            env = t.ctx.log.append_own(t.signer.sign(CRYPTO_KIND, body), t.me)
            t.outbox.send_own([env.wire], urgent=True)

    peers, results = run(lambda: play_tables(tmp_path, 3, on_step=hook), timeout=110)
    assert sent
    stopped_naming(results, 1, "malformed-crypto")
    for p in peers:
        report = audit_folder(p.folder)
        v = report.violation
        assert report.exit_code == EXIT_UNFAIR and v is not None, str(report)
        assert (v.party, v.rule) == (1, "malformed-crypto"), str(report)


@pytest.mark.timeout(120)
def _spoil_a_proof(body: Any) -> Any:
    """A copy of a crypto body whose first proof ``[c, z]`` has its two scalars swapped:
    still well formed (both canonical), no longer valid -- a wrong message that only its
    proof check can tell, never a malformed one.  None if the body has no such proof."""
    from crypto import group

    def scalar(x: Any) -> bool:
        return isinstance(x, bytes) and len(x) == 32 and \
            0 < int.from_bytes(x, "little") < group.L

    def walk(x: Any) -> tuple[Any, bool]:
        if isinstance(x, list):
            if len(x) == 2 and scalar(x[0]) and scalar(x[1]) and x[0] != x[1]:
                return [x[1], x[0]], True
            out, done = [], False
            for item in x:
                if done:
                    out.append(item)
                else:
                    item, done = walk(item)
                    out.append(item)
            return out, done
        return x, False

    new, done = walk(list(body))
    return new if done else None


def test_a_failing_message_whose_heads_name_another_history_names_no_one_live(
        tmp_path: Path) -> None:
    """Seat 1 signs a wrong decryption share whose heads name a version of seat 0's
    envelope seat 0 never signed.  Whoever checks the share cannot tell seat 1's lie
    from seat 0 having shown it another version: live and in every folder's audit the
    failure names no one (the rule of :func:`p2p.judge.evidence.crypto_rests_on`)."""
    lied: list[str] = []

    def prepare(t: LockstepTable) -> None:
        if t.me != 1:
            return
        honest_body = t.outbox.signed_body

        def lying(kind: str, body: Any) -> Any:
            out = honest_body(kind, body)
            if kind != CRYPTO_KIND or lied or body[3] != "share":
                return out
            changed = _spoil_a_proof(body)
            if changed is None:
                return out
            heads = [[h[0], h[1], bytes(32)] if h[0] == 0 else h for h in out[5]]
            lied.append("a DLEQ proof's c and z swapped")
            return [*changed, heads]

        t.outbox.signed_body = lying  # type: ignore[method-assign]

    peers, results = run(lambda: play_tables(tmp_path, 3, prepare=prepare), timeout=110)
    assert lied
    for me, r in enumerate(results):
        assert isinstance(r, TableStopped) and r.culprit is None, (me, r)
    assert any(r.rule == "crypto-disputed" for r in results), results
    for p in peers:
        report = audit_folder(p.folder)
        assert report.status != UNFAIR, str(report)
        assert "another version of seat 0's envelope" in " ".join(report.notes), str(report)


def test_the_shape_of_a_crypto_bodys_heads() -> None:
    core = [3, "open", [0, [1]], "share", []]
    h0, h2 = [0, 4, b"\x01" * 32], [2, 0, b"\x02" * 32]
    assert crypto_heads_problem([*core, [h0, h2]], 3, 1) is None
    assert crypto_heads_problem([*core, []], 3, 1) is None  # took nothing in yet
    bad = {
        "five elements": core,
        "seven elements": [*core, [h0], []],
        "not a list": [*core, "heads"],
        "own seat": [*core, [h0, [1, 0, b"\x03" * 32]]],
        "out of order": [*core, [h2, h0]],
        "twice": [*core, [h0, h0]],
        "seat out of range": [*core, [[3, 0, b"\x03" * 32]]],
        "short id": [*core, [[0, 0, b"\x03"]]],
        "negative seq": [*core, [[0, -1, b"\x03" * 32]]],
        "bool seq": [*core, [[0, True, b"\x03" * 32]]],
    }
    for why, body in bad.items():
        assert crypto_heads_problem(body, 3, 1) is not None, why

"""Proof checks spread over worker processes (crypto.parallel): the verdict is
the same with 1 or N processes — the first failing check in transcript order — and the
observer keeps the checks that look redundant but are not (docs/security.md, "Audit
speed")."""

from __future__ import annotations

from typing import Any

import pytest
from crypto_testkit import count_multiplications, dealt_bus
from test_crypto_deferred import WrongPShare, _bag_labels, _blinder

from crypto import dleq, parallel, remembered
from crypto import group as g
from crypto import shuffle as sh
from crypto.audit import audit
from crypto.errors import CheatDetected, InvalidPoint, ProofInvalid
from crypto.protocols.base import Step
from crypto.protocols.withdraw import Withdraw

ORDER8 = bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")


def _proofs(n: int, bad: dict[int, str]) -> list[tuple[Any, ...]]:
    """``n`` DLEQ statements; ``bad[k]`` spoils item k ("proof" or "point")."""
    items: list[tuple[Any, ...]] = []
    for k in range(n):
        w = g.random_scalar()
        a, q = g.base_mul(g.random_scalar()), g.base_mul(g.random_scalar())
        a2, q2 = g.mul(w, a), g.mul(w, q)
        proof = dleq.prove(w, a, a2, q, q2, ["t", k])
        if bad.get(k) == "proof":
            proof = [proof[1], proof[0]]
        elif bad.get(k) == "point":
            a2 = g.add(a2, ORDER8)
        items.append((a, a2, q, q2, proof, ["t", k]))
    return items


@pytest.mark.parametrize("processes", [None, 1, 2, 3])
def test_the_first_failure_in_item_order_whatever_the_workers(processes: int | None) -> None:
    items = _proofs(48, {7: "proof", 30: "point", 41: "proof"})
    if processes is None:
        fail = parallel.first_failure(dleq.verify, items)
    else:
        with parallel.workers(processes):
            fail = parallel.first_failure(dleq.verify, items)
            assert parallel.first_failure(dleq.verify, items[8:]) is not None
            later = parallel.first_failure(dleq.verify, items[8:])
            assert later is not None and later[0] == 22 and isinstance(later[1], InvalidPoint)
            assert parallel.first_failure(dleq.verify, items[:7] + items[8:30]) is None
    assert fail is not None
    assert fail[0] == 7 and isinstance(fail[1], ProofInvalid)
    assert str(fail[1]) == "DLEQ proof does not verify"


def test_map_ordered_keeps_the_order_and_raises_the_first_error() -> None:
    pts = [g.base_mul(k + 1) for k in range(40)]
    items = [(3, p) for p in pts]
    with parallel.workers(2):
        assert parallel.map_ordered(g.mul, items) == [g.mul(3, p) for p in pts]
        spoilt = list(items)
        spoilt[25] = (3, ORDER8)
        spoilt[33] = (3, b"\x00" * 31)
        with pytest.raises(InvalidPoint):
            parallel.map_ordered(g.mul, spoilt)


def test_workers_are_refused_below_one() -> None:
    with pytest.raises(ValueError):
        parallel.Workers(0)


def _verdict(bus: Any, processes: int) -> str:
    with parallel.workers(processes):
        return str(audit(bus.transcript, bus.keys, bus.sessions[0].ctx.game_id, lam=8))


def _two_cheaters_bus() -> Any:
    """Seat 1 spoils blinding proofs of positions nobody takes, seat 2 a PET share: the
    auditor must name seat 1 (its envelope comes first) with any number of workers."""
    bus = dealt_bus(3, per_label=8, k=1)
    labels = _bag_labels(bus)
    other = {i for i, lab in enumerate(labels) if lab not in ("silk", None)}
    assert len(labels) >= 2 * parallel.MIN_CHUNK
    for s in bus.sessions:
        s.ops["withdraw"] = (_blinder(set(sorted(other)[-3:])) if s.me == 1
                             else WrongPShare if s.me == 2 else Withdraw)
    # live: the wrong shares hide the taker's matches, its short count makes it check all
    with pytest.raises(CheatDetected) as e:
        bus.run(lambda s: s.withdraw(0, [("silk", 1)], False))
    assert (e.value.culprit, e.value.rule) == (1, "pet-blind-invalid")
    return bus


def test_verdicts_are_identical_with_one_or_two_workers() -> None:
    bus = _two_cheaters_bus()
    one, two = _verdict(bus, 1), _verdict(bus, 2)
    assert one == two
    assert "party 1" in one and "pet-blind-invalid" in one, one


class ProofSpoilingPShare(Withdraw):
    """Right PET shares, right batched proof, but every per-share proof is spoilt."""

    def make_pshare(self, st: Step) -> list[Any]:
        out = super().make_pshare(st)
        for items, _batch in out:
            for item in items:
                c, z = item[1]
                item[1] = [z, c]
        return out


def test_a_spoilt_per_share_proof_is_named_by_the_taker_and_the_auditor() -> None:
    """The per-share PET proofs look redundant next to the batched proof (both prove the same
    shares) but are not: the taker checks the per-share proofs of what it means to take
    and aborts *before* choosing, so the transcript never says which position; the auditor
    can confirm the taker's accusation only by checking every per-share proof."""
    bus = dealt_bus(3, per_label=4, k=1, cheats={1: {"withdraw": ProofSpoilingPShare}})
    with pytest.raises(CheatDetected) as e:
        bus.run(lambda s: s.withdraw(0, [("tea", 1)], False))
    assert (e.value.culprit, e.value.rule) == (1, "dleq-invalid")
    for processes in (1, 2):
        with parallel.workers(processes):
            report = audit(bus.transcript, bus.keys, bus.sessions[0].ctx.game_id, lam=8)
        assert report.violation is not None
        assert (report.violation.party, report.violation.rule) == (1, "dleq-invalid")


def test_a_wrong_pet_share_is_named_by_the_auditor_whatever_the_workers() -> None:
    """A wrong share is named from its own proofs (not the taker's choice), with 1 or 2
    processes."""
    bus = dealt_bus(3, per_label=4, k=1, cheats={2: {"withdraw": WrongPShare}})
    labels = _bag_labels(bus)
    assert "jade" in labels
    # the taker asks for one jade: all but one position are untaken, the count is not short
    # (seat 2's wrong shares are caught live at the taken position by every party)
    with pytest.raises(CheatDetected):
        bus.run(lambda s: s.withdraw(0, [("jade", 1)], False))
    for processes in (1, 2):
        with parallel.workers(processes):
            report = audit(bus.transcript, bus.keys, bus.sessions[0].ctx.game_id, lam=8)
        assert report.violation is not None
        assert (report.violation.party, report.violation.rule) == (2, "dleq-invalid")
        assert "pet-share" in report.violation.detail


# --- the auditor's known key shares (TokenSession.know_secrets) ------------------------------

def _observe(bus: Any, secrets: dict[int, int] | None, processes: int = 1) -> str:
    """Feed the bus transcript to an observer session; its verdict as text."""
    from crypto.session import TokenSession
    from crypto.transcript import TranscriptLog

    gid = bus.sessions[0].ctx.game_id
    obs = TokenSession(gid, len(bus.sessions), None, lam=8)
    if secrets is not None:
        obs.know_secrets(secrets)
    log = TranscriptLog(gid, bus.keys)
    with parallel.workers(processes):
        try:
            for wire in bus.transcript:
                env = log.add(wire)
                obs.receive(env.sender, env.body)
        except CheatDetected as exc:
            return f"{exc.culprit} {exc.rule} {exc.detail}"
    return f"ok {len(obs.history)} ops"


@pytest.mark.parametrize("cheat", ["none", "wrong-pshare", "spoilt-proof", "wrong-open"])
def test_known_key_shares_change_no_verdict(cheat: str) -> None:
    from test_crypto_cheats import WrongShareOpen

    from crypto.ledger import BAG

    cheats: dict[int, dict[str, Any]] = {
        "none": {}, "wrong-pshare": {1: {"withdraw": WrongPShare}},
        "spoilt-proof": {2: {"withdraw": ProofSpoilingPShare}},
        "wrong-open": {1: {"open": WrongShareOpen}}}[cheat]
    bus = dealt_bus(3, per_label=6, k=1, cheats=cheats)
    try:
        bus.run(lambda s: s.withdraw(0, [("silk", 2)], False))
        bus.run(lambda s: s.open(BAG, [0, 1, 2]))
    except CheatDetected:
        pass
    xs = {s.me: s.ctx.x for s in bus.sessions}
    plain = _observe(bus, None)
    assert _observe(bus, xs) == plain
    assert _observe(bus, xs, 2) == plain
    wrong = dict(xs)
    wrong[1] = (wrong[1] + 1) % g.L  # a share that does not match its key is not used
    assert _observe(bus, wrong) == plain
    if cheat == "none":
        assert plain.startswith("ok")
    else:
        assert plain.split()[:2] == [{"wrong-pshare": "1", "spoilt-proof": "2",
                                      "wrong-open": "1"}[cheat], "dleq-invalid"], plain


def test_only_an_observer_is_given_the_secrets() -> None:
    from crypto.errors import ProtocolStateError
    from crypto.session import TokenSession

    with pytest.raises(ProtocolStateError):
        TokenSession(b"g" * 16, 3, 0, lam=8).know_secrets({0: 5})


def test_verify_share_known_agrees_with_verify_on_every_tampering() -> None:
    x = g.random_scalar()
    y = g.base_mul(x)
    a = g.base_mul(g.random_scalar())
    d = g.mul(x, a)
    proof = dleq.prove(x, g.G, y, a, d, ["c"])
    cases = [(a, d, proof, ["c"]), (a, d, proof, ["other"]), (a, d, [proof[1], proof[0]], ["c"]),
             (a, g.add(d, g.G), proof, ["c"]), (a, g.add(d, ORDER8), proof, ["c"]),
             (g.add(a, ORDER8), d, proof, ["c"]), (a, d, [proof[0]], ["c"]),
             (a, d, [proof[0], b"\xff" * 32], ["c"])]
    for base2, pub2, prf, ctx in cases:
        outcomes = []
        for fn, args in ((dleq.verify, (g.G, y, base2, pub2, prf, ctx)),
                         (dleq.verify_share_known, (x, y, base2, pub2, prf, ctx))):
            try:
                fn(*args)  # type: ignore[operator]  # two signatures, one loop
                outcomes.append("ok")
            except Exception as exc:
                outcomes.append(f"{type(exc).__name__}: {exc}")
        assert outcomes[0] == outcomes[1], (base2, pub2, outcomes)


def test_known_key_shares_save_multiplications(monkeypatch: pytest.MonkeyPatch) -> None:
    bus = dealt_bus(3, per_label=6, k=1)
    bus.run(lambda s: s.withdraw(0, [("silk", 2)], False))
    xs = {s.me: s.ctx.x for s in bus.sessions}
    calls = count_multiplications(monkeypatch)
    counts = []
    for secrets in (None, xs):
        calls["n"] = 0
        remembered.forget()  # the second run must not reuse the first's checks
        assert _observe(bus, secrets).startswith("ok")
        counts.append(calls["n"])
    # per share 3 -> 2 multiplications, per batched share 2 -> 1
    assert counts[1] < counts[0] * 0.85, counts


def test_tw_verification_has_the_same_verdict_with_workers() -> None:
    from crypto import twproof
    from crypto.elgamal import public_token

    y = g.base_mul(g.random_scalar())
    deck = [public_token(f"t{i % 5}", y) for i in range(24)]
    out, w = sh.shuffle(deck, y)
    proof = twproof.prove(deck, out, w.perm, w.scalars, y, ["ctx"])
    cases: list[tuple[list[Any], Any]] = [(out, proof), (out, proof[:2] + proof[2:])]
    swapped = list(proof)
    swapped[0] = [proof[0][1], proof[0][0], *proof[0][2:]]
    cases.append((out, swapped))
    bad_out = list(out)
    bad_out[17] = (bad_out[17][0], g.add(bad_out[17][1], ORDER8))
    cases.append((bad_out, proof))
    chain = list(proof)
    chain[1] = [*proof[1][:5], g.add(proof[1][5], ORDER8), *proof[1][6:]]
    cases.append((out, chain))

    def outcome(o: list[Any], p: Any) -> str:
        try:
            twproof.verify(deck, o, p, y, ["ctx"])
            return "ok"
        except (ProofInvalid, InvalidPoint) as exc:
            return f"{type(exc).__name__}: {exc}"

    serial = [outcome(o, p) for o, p in cases]
    with parallel.workers(2):
        assert [outcome(o, p) for o, p in cases] == serial
    assert serial[0] == serial[1] == "ok"
    assert serial[2].startswith("ProofInvalid") and serial[3].startswith("InvalidPoint")
    assert serial[4].startswith("InvalidPoint")


def _explode(k: int) -> int:
    if k == 3:
        raise ZeroDivisionError("a bug, not a failed check")
    return k


def test_a_bug_in_a_check_is_raised_and_the_workers_stay_usable() -> None:
    items = [(k,) for k in range(40)]
    with parallel.workers(2):
        with pytest.raises(ZeroDivisionError):  # in this process's chunk
            parallel.map_ordered(_explode, items)
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):  # in a worker's chunk
            parallel.map_ordered(_explode, [(k + 4,) for k in range(36)] + [(3,)] * 4)
        assert parallel.map_ordered(_explode, [(k + 4,) for k in range(40)]) == \
            list(range(4, 44))

"""The memory of passed checks (crypto.remembered): a check that passed is not redone, and
nothing about a verdict changes — a failing check fails again, a changed argument is checked
afresh, the first failure in item order is the same with workers, and the memory is
bounded."""

from __future__ import annotations

import threading

import pytest
from crypto_testkit import count_multiplications, dealt_bus
from test_crypto_parallel import ORDER8, _proofs

from crypto import dleq, parallel, remembered
from crypto import group as g
from crypto.audit import audit
from crypto.errors import CheatDetected, ProofInvalid


def test_a_passed_check_is_not_redone(monkeypatch: pytest.MonkeyPatch) -> None:
    item = _proofs(1, {})[0]
    calls = count_multiplications(monkeypatch)
    dleq.verify(*item)
    first = calls["n"]
    dleq.verify(*item)
    assert first > 0 and calls["n"] == first  # no multiplication the second time
    assert remembered.stats()["hits"] == 1


def test_a_failing_check_fails_again_and_a_changed_argument_is_checked() -> None:
    good, bad = _proofs(2, {1: "proof"})
    for _ in range(2):
        with pytest.raises(ProofInvalid):
            dleq.verify(*bad)
    dleq.verify(*good)
    a, a2, q, q2, proof, ctx = good
    for changed in ((a, a2, q, q2, proof, ["t", 99]), (a, g.add(a2, g.G), q, q2, proof, ctx),
                    (a, a2, q, q2, [proof[1], proof[0]], ctx)):
        with pytest.raises(ProofInvalid):
            dleq.verify(*changed)


def test_an_int_and_its_bytes_are_different_arguments() -> None:
    """The encoding is typed: an argument that prints alike is not the same argument."""
    seen = []

    @remembered.remembered
    def check(x: object) -> None:
        seen.append(x)

    args = (1, b"\x01", "1", [1], (1,), True, None, [b"\x01"], [(1,)], [[1]], 2**70,
            -(2**70), [2**70], "\ud800", b"", "", [], ())
    for x in args:
        check(x)
    assert seen == list(args)
    for x in args:  # each was remembered under its own key
        check(x)
    assert seen == list(args)


@pytest.mark.parametrize("processes", [1, 2])
def test_the_first_failure_is_the_same_with_a_partly_filled_memory(processes: int) -> None:
    items = _proofs(40, {7: "proof", 23: "point"})
    cold = parallel._serial(dleq.verify, items)
    with parallel.workers(processes):
        for k in (0, 5, 30, 31, 39):  # some passed before (7 and 23 cannot have)
            dleq.verify(*items[k])
        warm = parallel.run_all(dleq.verify, items)
        again = parallel.run_all(dleq.verify, items[8:20])  # checked, some in a worker
        hits = remembered.stats()["hits"]
        assert parallel.run_all(dleq.verify, items[8:20]) == again
    assert cold[1] is not None and warm[1] is not None
    assert warm[1][0] == cold[1][0] == 7
    assert type(warm[1][1]) is type(cold[1][1]) and str(warm[1][1]) == str(cold[1][1])
    assert warm[0] == cold[0] and again == ([None] * 12, None)
    assert remembered.stats()["hits"] == hits + 12  # the worker's passes came back here


def test_items_after_a_failure_are_left_unchecked_as_before() -> None:
    items = _proofs(20, {3: "point"})
    with parallel.workers(2):
        res, fail = parallel.run_all(dleq.verify, items)
    assert fail is not None and fail[0] == 3 and len(res) == 3


def test_a_proof_passed_live_makes_the_known_share_check_cheaper(
        monkeypatch: pytest.MonkeyPatch) -> None:
    x = g.random_scalar()
    y = g.base_mul(x)
    a = g.base_mul(g.random_scalar())
    d = g.mul(x, a)
    proof = dleq.prove(x, g.G, y, a, d, ["c"])
    dleq.verify(g.G, y, a, d, proof, ["c"])
    calls = count_multiplications(monkeypatch)
    assert dleq.verify_share_known(x, y, a, d, proof, ["c"]) is True
    assert calls["n"] == 1  # only the share itself: x·A = D
    wrong = g.add(d, ORDER8)
    with pytest.raises(Exception) as cold:
        dleq.verify(g.G, y, a, wrong, proof, ["c"])
    with pytest.raises(type(cold.value)):
        dleq.verify_share_known(x, y, a, wrong, proof, ["c"])


def test_the_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(remembered, "LIMIT", 5)
    for item in _proofs(12, {}):
        dleq.verify(*item)
    assert remembered.stats()["entries"] == 5


def test_an_auditors_verdicts_are_the_same_warm_and_cold() -> None:
    """A transcript audited twice in one process, the second time with most checks from
    memory: the same report, for an honest game and for one with a wrong share (named)."""
    from test_crypto_deferred import WrongPShare, _bag_labels

    honest = dealt_bus(3, per_label=4, k=2, verified=True)
    honest.run(lambda s: s.withdraw(1, [("silk", 1)], False))
    cheat = dealt_bus(3, per_label=4, k=1, cheats={2: {"withdraw": WrongPShare}})
    assert "jade" in _bag_labels(cheat)
    with pytest.raises(CheatDetected):
        cheat.run(lambda s: s.withdraw(0, [("jade", 1)], False))
    for bus in (honest, cheat):
        gid = bus.sessions[0].ctx.game_id
        remembered.forget()
        cold = audit(bus.transcript, bus.keys, gid, lam=8)
        with parallel.workers(2):
            warm = audit(bus.transcript, bus.keys, gid, lam=8)
        assert remembered.stats()["hits"] > 0
        assert repr(warm) == repr(cold)
    assert cold.violation is not None and (cold.violation.party, cold.violation.rule) == \
        (2, "dleq-invalid")


def test_a_closure_or_a_subclass_is_never_taken_for_another() -> None:
    """Arguments whose value their encoding would not fix are not remembered: the check
    runs every time."""
    ran = []

    @remembered.remembered
    def check(x: object) -> None:
        ran.append(x)

    class Bytes(bytes):
        pass

    first, second = (lambda: 1), (lambda: 2)
    for x in (first, second, first, Bytes(b"a"), Bytes(b"a")):
        check(x)
    assert len(ran) == 5


def test_an_abandoned_thread_stops_at_its_next_check_and_no_other_does() -> None:
    """An audit done ahead is given up when the game ends: its thread raises at the next
    check (a BaseException, which no ``except Exception`` turns into a verdict); the same
    checks elsewhere, and in that thread after the block, run as ever."""
    items = _proofs(4, {})
    stop = threading.Event()
    with remembered.abandonable(stop):
        dleq.verify(*items[0])  # not asked to stop yet: it runs
        stop.set()
        with pytest.raises(remembered.Abandoned):
            dleq.verify(*items[1])
        with pytest.raises(remembered.Abandoned):  # the path of crypto.parallel too
            parallel.run_all(dleq.verify, items[2:])
        assert not issubclass(remembered.Abandoned, Exception)
        other: list[object] = []
        t = threading.Thread(target=lambda: other.append(dleq.verify(*items[1])))
        t.start()
        t.join()
        assert other == [None]  # another thread is not asked to stop
    dleq.verify(*items[2])  # after the block, this thread checks again
    res, fail = parallel.run_all(dleq.verify, items)
    assert fail is None and len(res) == 4

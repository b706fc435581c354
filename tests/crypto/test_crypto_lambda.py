"""λ, the cut-and-choose parameter: validated wherever it enters, and no
cut-and-choose proof below MIN_LAMBDA outside tests (its Fiat–Shamir challenge can be ground).
These tests run with the production floor (``production_lambda_floor``) unless they say."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from crypto_testkit import make_bus, spec

from crypto import group as g
from crypto import shuffle as sh
from crypto.audit import audit
from crypto.elgamal import public_token
from crypto.errors import MalformedInput
from crypto.session import TokenSession

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("lam", [1, -5, 0, 40, 127, 257, 10**9, True, "128", None, 128.0])
def test_check_lambda_refuses_weak_or_absurd_values(production_lambda_floor: None,
                                                    lam: object) -> None:
    with pytest.raises(sh.LambdaRefused):
        sh.check_lambda(lam)


@pytest.mark.parametrize("lam", [128, 200, 256])
def test_check_lambda_accepts_the_production_range(production_lambda_floor: None,
                                                   lam: int) -> None:
    assert sh.check_lambda(lam) is None
    assert sh.MIN_LAMBDA == sh.DEFAULT_LAMBDA == 128


@pytest.mark.parametrize("lam", [-5, 0, 257, True, "8"])
def test_a_session_refuses_an_absurd_lambda(lam: object) -> None:
    with pytest.raises(sh.LambdaRefused):
        TokenSession(b"g" * 16, 3, 0, lam=lam)  # type: ignore[arg-type]  # wrong on purpose


def test_restore_refuses_a_snapshot_with_an_absurd_lambda() -> None:
    s = TokenSession(b"g" * 16, 3, 0, lam=8)
    s.ctx.lam = -5
    with pytest.raises(MalformedInput, match="lambda"):
        TokenSession.restore(s.snapshot())


def test_no_cut_and_choose_proof_is_made_or_accepted_below_the_floor(
        production_lambda_floor: None) -> None:
    y = g.base_mul(g.random_scalar())
    deck = [public_token(f"t{i}", y) for i in range(4)]
    out, w = sh.shuffle(deck, y)
    with pytest.raises(sh.LambdaRefused):
        sh.prove(deck, out, w, y, ["ctx"], 40)
    with sh.lambda_floor_for_tests(16):
        weak = sh.prove(deck, out, w, y, ["ctx"], 16)
        assert sh.verify(deck, out, weak, y, ["ctx"], 16) is None
    with pytest.raises(sh.LambdaRefused):  # the same (valid) proof, outside the test floor
        sh.verify(deck, out, weak, y, ["ctx"], 16)


def test_a_session_refuses_to_start_a_cut_and_choose_op_below_the_floor() -> None:
    bus = make_bus(3, lam=40)
    with sh.lambda_floor_for_tests(sh.MIN_LAMBDA):
        with pytest.raises(sh.LambdaRefused):
            bus.sessions[0].deal(spec(2), 1, True, proof="cut-and-choose")
        assert not bus.sessions[0].busy
        bus.run(lambda s: s.deal(spec(2), 1, True))  # the TW proof ignores λ
        with pytest.raises(sh.LambdaRefused):
            bus.sessions[0].steal(1, 0, proof="cut-and-choose")


def test_the_auditor_names_the_seat_that_started_a_cut_and_choose_op_under_a_weak_lambda(
        ) -> None:
    bus = make_bus(3, lam=8)
    bus.run(lambda s: s.deal(spec(2), 1, True, proof="cut-and-choose"))  # test floor: fine
    gid = bus.sessions[0].ctx.game_id
    assert audit(bus.transcript, bus.keys, gid, lam=8).fair
    with sh.lambda_floor_for_tests(sh.MIN_LAMBDA):
        report = audit(bus.transcript, bus.keys, gid, lam=8)
    assert report.violation is not None, str(report)
    assert (report.violation.party, report.violation.rule) == (0, "weak-lambda"), str(report)


def test_the_test_floor_cannot_be_lowered_outside_pytest(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    monkeypatch.delitem(sys.modules, "pytest")
    with pytest.raises(RuntimeError, match="test suite only"):
        with sh.lambda_floor_for_tests(1):
            pass  # pragma: no cover - never entered
    assert sh.lambda_floor() == 1  # the conftest's floor for this test, untouched


def test_no_product_code_lowers_the_floor() -> None:
    """Only tests call lambda_floor_for_tests: no module of the product or the benchmarks."""
    for top in ("crypto", "p2p", "cli", "engine", "bench"):
        for path in sorted((ROOT / top).rglob("*.py")):
            text = path.read_text("utf-8")
            if path == ROOT / "crypto" / "shuffle.py":
                continue
            assert "lambda_floor_for_tests" not in text, path


def test_restore_refuses_a_cut_and_choose_op_in_progress_under_a_weak_lambda() -> None:
    bus = make_bus(3, lam=8)
    bus.sessions[1].deal(spec(2), 1, True, proof="cut-and-choose")  # started, not finished
    data = bus.sessions[1].snapshot()
    assert TokenSession.restore(data).busy  # fine under the test floor
    with sh.lambda_floor_for_tests(sh.MIN_LAMBDA):
        with pytest.raises(MalformedInput, match="lambda 8 is below 128"):
            TokenSession.restore(data)


def test_a_weak_lambda_met_in_a_verification_is_a_local_error_never_the_provers() -> None:
    """Belt and braces: should a cut-and-choose op under a weak λ be running (it cannot be
    started or restored so), verifying a peer's proof stops us locally, blaming no one."""
    from crypto.errors import CheatDetected, ProtocolStateError

    bus = make_bus(3, lam=8)
    first = bus.sessions[0].deal(spec(2), 1, True, proof="cut-and-choose")
    bus.sessions[1].deal(spec(2), 1, True, proof="cut-and-choose")
    with sh.lambda_floor_for_tests(sh.MIN_LAMBDA):
        with pytest.raises(ProtocolStateError, match="below 128") as e:
            bus.sessions[1].receive(0, first[0])
    assert not isinstance(e.value, CheatDetected)

"""Join-code guessing is slowed per address, then shut out.

Each failed PAKE used to cost a guesser one connection and nothing more: hundreds of
guesses a second.  Now every guess from an address waits a growing delay after the last
wrong one, guesses from one address are taken one at a time, and after a few wrong codes
the lobby is closed to the address.  Real connections on 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from p2p_testutil import LOOPBACK, run

from p2p.errors import LobbyError
from p2p.game import wordlist
from p2p.identity import Identity
from p2p.lobby.code_guard import CodeGuard, estimate_bits, generate_code
from p2p.lobby.seating import LobbyTable, join_table
from p2p.net.connection import Listener

CODE = "silk 7"


async def _try(host: Listener, code: str) -> tuple[str, float]:
    """One join attempt with ``code``; (refusal reason or "seated", seconds taken)."""
    me = await Listener(Identity.generate(), host=LOOPBACK).start()
    t0 = time.monotonic()
    try:
        await join_table(me, LOOPBACK, host.port, name="guesser", join_code=code,
                         timeout=5, start_timeout=0.2)
        return "started", time.monotonic() - t0
    except LobbyError as exc:
        took = time.monotonic() - t0
        if "timed out waiting for the host" in exc.reason:
            return "seated", took
        return exc.reason, took
    finally:
        await me.close()


@pytest.mark.timeout(40)
def test_wrong_codes_back_off_then_the_lobby_closes_to_the_address() -> None:
    guard = CodeGuard(base_delay=0.3, max_delay=5.0, lockout_after=4, max_hold=3.0)

    async def body() -> None:
        host = await Listener(Identity.generate(), host=LOOPBACK).start()
        table = await LobbyTable(host, name="Tea", seats=4, join_code=CODE,
                            code_guard=guard).open()
        try:
            # the right code first: it is not counted against the address
            assert (await _try(host, "SILK-7"))[0] == "seated"
            assert guard.failures(LOOPBACK) == 0
            waits = []
            for _ in range(4):  # bounded: exactly the guesses allowed
                reason, took = await _try(host, "wrong code")
                assert "wrong or missing join code" in reason, reason
                waits.append(took)
            assert guard.failures(LOOPBACK) == 4 and guard.locked(LOOPBACK)
            # each guess waited for the delay after the previous wrong one: 0.3, 0.6, 1.2
            for got, want in zip(waits[1:], (0.3, 0.6, 1.2), strict=True):
                assert got >= want * 0.9, waits
            assert waits[3] > waits[1] + 0.5, waits
            # closed: even the right code is refused at once, naming why
            reason, took = await _try(host, CODE)
            assert "closed to 127.0.0.1 after 4 wrong join codes" in reason, reason
            assert took < 1.0
            assert len(table.seated) == 1
        finally:
            await table.close()
            await host.close()

    run(body, 35)


@pytest.mark.timeout(40)
def test_parallel_guesses_are_taken_one_at_a_time() -> None:
    """Eight guesses at once from one address (the listener's limit of handshakes per
    address; more would push out the oldest): three are looked at, each after its
    backoff, the others are refused as the lobby closes; no burst gets through."""
    guard = CodeGuard(base_delay=0.2, max_delay=5.0, lockout_after=3, max_hold=3.0)

    async def body() -> None:
        host = await Listener(Identity.generate(), host=LOOPBACK).start()
        table = await LobbyTable(host, name="Tea", seats=4, join_code=CODE,
                            code_guard=guard).open()
        try:
            t0 = time.monotonic()
            results = await asyncio.gather(*(_try(host, f"guess {i}") for i in range(8)))
            took = time.monotonic() - t0
            reasons = [r for r, _t in results]
            wrong = [r for r in reasons if "wrong or missing join code" in r]
            closed = [r for r in reasons if "closed to 127.0.0.1" in r]
            assert len(wrong) == 3 and len(closed) == 5, reasons
            assert guard.failures(LOOPBACK) == 3
            assert took >= 0.2 + 0.4 - 0.05  # the 2nd and 3rd guess waited their turn
        finally:
            await table.close()
            await host.close()

    run(body, 35)


@pytest.mark.timeout(20)
def test_a_long_wait_is_refused_at_once_with_the_time_left() -> None:
    guard = CodeGuard(base_delay=30.0, max_delay=60.0, lockout_after=10, max_hold=2.0)

    async def body() -> None:
        host = await Listener(Identity.generate(), host=LOOPBACK).start()
        table = await LobbyTable(host, name="Tea", seats=4, join_code=CODE,
                            code_guard=guard).open()
        try:
            assert "wrong or missing" in (await _try(host, "nope"))[0]
            reason, took = await _try(host, "nope again")
            assert "too many wrong join codes from 127.0.0.1: try again in" in reason
            assert took < 1.5 and guard.failures(LOOPBACK) == 1  # not held, not counted
        finally:
            await table.close()
            await host.close()

    run(body)


def test_guard_memory_is_bounded() -> None:
    guard = CodeGuard(lockout_after=2)
    for i in range(5000):
        guard.guessed(f"10.{i // 65536}.{(i // 256) % 256}.{i % 256}")
    assert len(guard._seen) <= 4096


def test_generated_codes_and_strength() -> None:
    words = set(wordlist())
    codes = {generate_code() for _ in range(50)}
    assert len(codes) == 50  # 32 bits: no repeats in 50
    for code in codes:
        parts = code.split("-")
        assert len(parts) == 4 and set(parts) <= words
        assert estimate_bits(code) == 32.0
    assert 20 < estimate_bits("silk7") < 30
    assert estimate_bits("1234") < 14
    assert estimate_bits("") == 0.0

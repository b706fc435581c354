"""The table's parts on their own: wire shapes, the inbox's chain order and early buffer,
the outbox's write-ahead order.  Real signatures and a real store; the transport is a list
(nothing here needs a network: whole games over sockets are in the other test_table_*)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import msgpack
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from crypto import transcript
from crypto.transcript import Envelope, Equivocation, Signer, TranscriptLog
from p2p.net.mesh import Received
from p2p.protocol.wire import (
    ENV_TAG,
    SYNC_TAG,
    abort_body_ok,
    ack_body_ok,
    action_body_ok,
    sync_counts_ok,
)
from p2p.store import GameStore
from p2p.table import inbox as inbox_module
from p2p.table.context import TableContext
from p2p.table.inbox import Inbox
from p2p.table.outbox import Outbox
from p2p.table.setup import TableSetup
from p2p.table.waiting import Waiter

GAME = b"G" * 32


class ListTransport:
    """Records what the table sends."""

    def __init__(self) -> None:
        self.sent: list[tuple[int | None, bytes]] = []

    def broadcast(self, body: bytes) -> None:
        self.sent.append((None, body))

    def send(self, seat: int, body: bytes) -> None:
        self.sent.append((seat, body))

    async def next_event(self) -> Any:
        await asyncio.sleep(3600)


def _no_violation(env: Envelope, rule: str, detail: str) -> None:
    raise AssertionError(f"unexpected violation {rule}: {detail}")


def _parts(store: GameStore | None = None) -> tuple[TableContext, list[Signer], ListTransport]:
    keys = [Ed25519PrivateKey.generate() for _ in range(3)]
    signers = [Signer(GAME, i, k) for i, k in enumerate(keys)]
    raw = [s.public_key.public_bytes_raw() for s in signers]
    setup = TableSetup(GAME, raw, 0)
    pubs = setup.public_keys()
    transport = ListTransport()
    ctx = TableContext(setup, pubs, transport, store, Waiter(0, 5.0, 60.0),
                       TranscriptLog(GAME, pubs))
    return ctx, signers, transport


def test_wire_shapes() -> None:
    assert action_body_ok([3, b"x"]) and action_body_ok([3, b"x", b"h"])
    assert not action_body_ok([True, b"x"]) and not action_body_ok([3, "x"])
    assert not action_body_ok([3, b"x", "h"]) and not action_body_ok("nope")
    assert abort_body_ok([1, "dleq-invalid", "why", [1, 0, b"i" * 32]])
    assert abort_body_ok([None, "equivocation", "", None, [b"a", b"b"]])
    assert not abort_body_ok([1, "dleq-invalid", "why", None, [b"a", b"b"]])  # no proof rule
    assert not abort_body_ok([True, "r", "d", None]) and not abort_body_ok([1, "r" * 65, "", None])
    assert ack_body_ok([4, b"c", [[0, 2, b"i" * 32]]], 3)
    assert not ack_body_ok([4, b"c", [[3, 2, b"i" * 32]]], 3)  # no seat 3
    assert not ack_body_ok([4, b"c", [[0, -1, b"i" * 32]]], 3)
    assert not ack_body_ok([4, b"c", [[0, 1, b"short"]]], 3)
    assert sync_counts_ok([0, 4, 2], 3) and not sync_counts_ok([0, 4], 3)
    assert not sync_counts_ok([0, -1, 2], 3)


def test_inbox_takes_each_chain_in_order_and_holds_early_envelopes() -> None:
    ctx, signers, _t = _parts()
    got: list[tuple[int, int]] = []

    def dispatch(env: Envelope) -> bool:
        got.append((env.sender, env.seq))
        return False

    inbox = Inbox(ctx, dispatch, lambda eq: None, _no_violation)
    w = [signers[1].sign("stop", ["r", str(i)]) for i in range(3)]
    inbox.accept(w[2], 1)
    inbox.accept(w[1], 1)
    assert got == [] and inbox.held == 2
    inbox.accept(w[0], 1)  # the missing first one releases the held ones in order
    assert got == [(1, 0), (1, 1), (1, 2)] and inbox.held == 0
    inbox.accept(w[1], 1)  # a duplicate is refused, not dispatched again
    assert got == [(1, 0), (1, 1), (1, 2)]
    assert "replayed envelope 1/1" in ctx.refusals[-1].reason


def test_an_early_envelope_is_verified_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Held early, an envelope is parsed and its signature checked; released into the log
    when its predecessor comes, it is not checked again."""
    checked: list[bytes] = []

    def counting(wire: object, *args: Any, **kwargs: Any) -> Envelope:
        assert isinstance(wire, bytes)
        checked.append(wire)
        return real_parse(wire, *args, **kwargs)

    real_parse = transcript.parse
    monkeypatch.setattr(transcript, "parse", counting)
    monkeypatch.setattr(inbox_module, "parse", counting)
    ctx, signers, _t = _parts()
    inbox = Inbox(ctx, lambda env: False, lambda eq: None, _no_violation)
    w = [signers[1].sign("stop", ["r", str(i)]) for i in range(3)]
    inbox.accept(w[2], 1)
    inbox.accept(w[1], 1)
    inbox.accept(w[0], 1)
    assert [e.wire for e in ctx.log.entries] == w
    assert sorted(checked) == sorted(w)  # each once


def test_inbox_refuses_junk_and_forged_early_envelopes() -> None:
    ctx, _signers, _t = _parts()
    inbox = Inbox(ctx, lambda env: False, lambda eq: None, _no_violation)
    inbox.on_bytes(2, b"Zjunk")
    assert ctx.refusals[-1].reason == "unknown message tag"
    inbox.on_bytes(2, ENV_TAG + b"\x93\x01")
    assert ctx.refusals[-1].reason.startswith("malformed envelope")
    forged = Signer(GAME, 1, Ed25519PrivateKey.generate())
    forged.sign("stop", ["r", "0"])
    inbox.accept(forged.sign("stop", ["r", "1"]), 2)  # early and not seat 1's signature
    assert inbox.held == 0 and ctx.refusals[-1].sender == 2


def test_inbox_turns_two_early_envelopes_for_one_slot_into_an_equivocation() -> None:
    ctx, signers, _t = _parts()
    seen: list[Equivocation] = []
    inbox = Inbox(ctx, lambda env: False, seen.append, _no_violation)
    s = signers[2]
    s.sign("stop", ["r", "0"])  # seq 0 never delivered: both seq-1 envelopes are held early
    seq, prev = s.seq, s.prev
    first = s.sign("stop", ["r", "first"])
    s.seq, s.prev = seq, prev
    second = s.sign("stop", ["r", "second"])
    inbox.accept(first, 1)
    inbox.accept(second, 0)
    assert [e.culprit for e in seen] == [2]


def test_inbox_answers_a_sync_request_with_what_the_asker_lacks() -> None:
    ctx, signers, transport = _parts()
    inbox = Inbox(ctx, lambda env: False, lambda eq: None, _no_violation)
    wires = [signers[1].sign("stop", ["r", str(i)]) for i in range(3)]
    for w in wires:
        inbox.accept(w, 1)
    inbox.on_bytes(2, SYNC_TAG + msgpack.packb([0, 1, 0]))
    assert transport.sent == [(2, ENV_TAG + wires[1]), (2, ENV_TAG + wires[2])]


def test_prioritise_puts_each_senders_move_first_keeping_its_chain_order() -> None:
    _ctx, signers, _t = _parts()
    ack = ENV_TAG + signers[1].sign("ack", [1, b"c", []])
    move = ENV_TAG + signers[1].sign("action", [0, b"m"])
    other = ENV_TAG + signers[2].sign("ack", [1, b"c", []])
    events = [Received(2, other), Received(1, ack), Received(1, move)]
    assert [e.body for e in Inbox.prioritise(events)] == [ack, move, other]


def test_outbox_sends_nothing_before_it_is_on_disk(tmp_path: Path) -> None:
    store = GameStore(tmp_path / "g")
    ctx, signers, transport = _parts(store)
    dispatched: list[Envelope] = []
    outbox = Outbox(ctx, signers[0], dispatched.append)

    async def go() -> None:
        flusher = asyncio.get_running_loop().create_task(outbox.flusher())
        outbox.emit("action", [0, b"m"])  # urgent: fsynced and sent inline
        assert store.synced >= 1 and len(transport.sent) == 1
        outbox.emit("stop", ["r", "later"])  # through the flusher
        await outbox.drain()
        flusher.cancel()

    asyncio.run(go())
    assert [e.kind for e in dispatched] == ["action", "stop"]
    assert [w for _s, w in transport.sent] == [ENV_TAG + e.wire for e in ctx.log.entries]
    assert store.load_transcript() == [e.wire for e in ctx.log.entries]


def test_outbox_snapshots_before_crypto_output_leaves(tmp_path: Path) -> None:
    store = GameStore(tmp_path / "g")
    ctx, signers, transport = _parts(store)
    outbox = Outbox(ctx, signers[0], lambda env: None)
    order: list[str] = []

    def snapshot(wires: list[bytes]) -> None:
        order.append(f"snapshot {len(wires)} with {len(transport.sent)} sent")

    outbox.emit_crypto([[0, "keys", [], "commit", b"x"]], snapshot)
    assert order == ["snapshot 1 with 0 sent"]
    assert ctx.log.entries[0].kind == "crypto"

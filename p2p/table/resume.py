"""Resume after a crash: the write-ahead snapshot, and rebuilding a table from its folder.

A peer snapshots *before* any of its crypto output leaves (:meth:`Outbox.emit_crypto`), so
the snapshot always explains what it sent.  It records where the current step started —
as the engine actions applied before it (the engine is deterministic, so replaying them
rebuilds the state; the state's hash is kept to check that) and the zone map — plus the
session and what we were sending.  A restarted peer restores the snapshot, re-reads its
stored transcript and re-runs the current step from its start (ops are addressed by index:
one already in the session's history is reused, see :mod:`p2p.table.loop`).  Versioned
msgpack, no pickle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgpack

from crypto.session import TokenSession

from ..protocol.ack_chain import chain_next, chain_start
from ..protocol.table_game import Config, State, TableGame, Zones
from .outcome import TableStopped

SNAPSHOT_VERSION = 1
"""Version of the resume snapshot in ``secrets.bin``."""


@dataclass
class StepStart:
    """What a resumed peer restarts the current step from.  The state itself is not
    copied at every step (a snapshot rebuilds it from the applied actions); its hash is
    kept to check that rebuild."""

    step: int
    state_hash: bytes
    zones: Zones
    cursor: int


def encode_snapshot(session: TokenSession, start: StepStart, applied: list[bytes],
                    processed: int, own: int, outgoing: list[bytes]) -> bytes:
    """The snapshot written with our secrets just before ``outgoing`` leaves."""
    return msgpack.packb({
        "v": SNAPSHOT_VERSION,
        "session": session.snapshot(),
        "step": start.step,
        "cursor": start.cursor,
        "actions": applied[:start.step],
        "hash": start.state_hash,
        "zones": [start.zones.bag, start.zones.hands],
        "processed": processed,
        "own": own,
        "outgoing": outgoing,
    }, use_bin_type=True)


@dataclass
class Restored:
    """A decoded snapshot: the session, the state and chain at the step start, and what
    the stored transcript must be completed with."""

    session: TokenSession
    state: State
    start: StepStart
    applied: list[bytes]
    chain: bytes
    processed: int
    own: int
    outgoing: list[bytes]


def decode_snapshot(data: bytes, me: int, game: TableGame, config: Config, game_id: bytes,
                    op_classes: dict[str, Any]) -> Restored:
    """Parse our own snapshot and rebuild the session, the step start and the state at
    that start from it (raises :class:`TableStopped` naming us if it does not hold)."""
    snap = msgpack.unpackb(data, raw=False)
    if not isinstance(snap, dict) or snap.get("v") != SNAPSHOT_VERSION:
        raise TableStopped(me, "resume", "secrets.bin holds no snapshot we can read")
    session = TokenSession.restore(snap["session"], op_classes=op_classes)
    state = game.new_state(config)
    chain = chain_start(game_id, state.hash())
    for enc in snap["actions"]:
        game.apply(state, game.decode(enc))
        chain = chain_next(chain, state.hash())
    if state.hash() != snap["hash"]:
        raise TableStopped(me, "resume", "replayed actions do not give the snapshot's state")
    zones = game.new_zones(config.players)
    zones.bag, zones.hands = snap["zones"]
    start = StepStart(snap["step"], snap["hash"], zones, snap["cursor"])
    return Restored(session, state, start, list(snap["actions"]), chain, snap["processed"],
                    snap["own"], snap["outgoing"])

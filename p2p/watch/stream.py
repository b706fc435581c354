"""The watch stream: what a host sends a watcher over an authenticated connection.

A watcher dials the host's listener with the purpose :data:`PURPOSE` and the same signed,
encrypted handshake as a seat (its own fresh key, no seat; the table's join code applies
through the same PAKE).  Then the host speaks, and the watcher only listens, but for
table talk::

    H→W  ["table", name, roster, params, board, game_id, lam, nonces]  once the game starts
    H→W  ["env", [wire, ...]]             envelopes: first all the host holds, then live
    H→W  ["end", reason]                  the host's table ended (finished, or stopped)
    H→W  ["drop", reason]                 this watcher is dropped (it fell behind, …)
    H→W  ["refuse", reason]               not admitted (the table has enough watchers)
    W→H  ["talk", text, name]             a line for the table (``name`` may be "")
    H→W  ["unsaid", reason]               that line was not relayed (too fast, game over)

Nothing a host sends is taken on trust (:mod:`p2p.watch.client`): the roster and params
must hash to the game id, and each envelope must verify under its sender's roster key and
that game id, which every seat's signature binds.  A watcher's line of talk is relayed
by the host's table under the host's signature, marked as the watcher's
(:meth:`p2p.table.LockstepTable.relay_talk`), so it reaches every seat and watcher in the
transcript like any line; the host bounds each watcher's pace.  A watcher that sends
anything else is dropped: watchers have nothing else to say to a table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ProtocolError
from ..game import NONCE_LEN, GameParams
from ..net.mesh import RosterEntry
from ..sanitize import clean

PURPOSE = b"watch"
"""The listener's service a watcher dials (one per host, for the game it is playing)."""
MAX_WATCHERS = 8
"""Watchers a table admits at once; the next is refused with the reason."""
QUEUE_BYTES = 32 * 1024 * 1024
"""Live envelopes queued for one watcher, in bytes, before it is dropped as too slow.  The
catch-up (what the table held when the watcher came) is not counted: it is sent from the
table's own log, which costs the host no copy."""
BATCH_BYTES = 1024 * 1024
"""Envelopes packed into one frame (a single larger one travels alone: the mesh frame
limit bounds every envelope already)."""
MAX_ENVELOPES = 1 << 20
MAX_TRANSCRIPT_BYTES = 1 << 30
"""What a watcher keeps at most: a host that sends more is not showing a game."""


@dataclass(frozen=True)
class GameInfo:
    """What the ``table`` message says (parsed; checked against the game id by the client)."""

    table: str
    roster: list[RosterEntry]
    params: GameParams
    board: str
    game_id: bytes
    lam: int
    nonces: list[bytes]

    def to_wire(self) -> list[Any]:
        return ["table", self.table, [e.to_wire() for e in self.roster], self.params.to_wire(),
                self.board, self.game_id, self.lam, list(self.nonces)]

    @classmethod
    def from_wire(cls, msg: Any) -> GameInfo:
        """Parse a ``table`` message; :class:`ProtocolError` names the bad field."""
        if not isinstance(msg, list) or len(msg) != 8 or msg[0] != "table":
            raise ProtocolError("expected ['table', name, roster, params, board, game id, "
                                "lam, nonces]")
        _, name, roster_w, params_w, board, game_id, lam, nonces = msg
        if not isinstance(name, str) or not isinstance(board, str):
            raise ProtocolError("bad table name or board")
        if not isinstance(roster_w, list) or not 0 < len(roster_w) <= 16:
            raise ProtocolError("bad roster")
        roster = [RosterEntry.from_wire(e, weak_key_ok=True) for e in roster_w]
        params = GameParams.from_wire(params_w)
        if not isinstance(game_id, bytes) or len(game_id) != 32:
            raise ProtocolError("bad game id")
        if not isinstance(lam, int) or isinstance(lam, bool):
            raise ProtocolError("bad lambda")
        if not isinstance(nonces, list) or len(nonces) not in (0, len(roster)) or not all(
                isinstance(n, bytes) and len(n) == NONCE_LEN for n in nonces):
            raise ProtocolError("bad nonces")
        return cls(name, roster, params, board, game_id, lam, nonces)


def envelopes_of(msg: Any) -> list[bytes] | None:
    """The wires of an ``env`` message, or None if ``msg`` is not one."""
    if isinstance(msg, list) and len(msg) == 2 and msg[0] == "env" and isinstance(msg[1], list) \
            and all(isinstance(w, bytes) for w in msg[1]):
        return list(msg[1])
    return None


WATCHER_NAME = 16
"""Characters of the name a watcher gives its lines; a watcher without one is named by its
key's fingerprint."""


def watcher_name(name: str) -> str:
    """A watcher's name as its lines carry it: cleaned, cut, without the marks a log line
    uses to say who speaks (``»``, ``:``), so it cannot pose as another speaker."""
    return clean(clean(name).replace(":", "").replace("»", ""), WATCHER_NAME)


MAX_TALK_MESSAGE = 4096
"""Characters of a watcher's ``talk`` message the host reads at all (it relays at most
:data:`p2p.protocol.wire.MAX_TALK_CHARS` of them, cleaned); a longer one is garbage."""


def talk_of(msg: Any) -> tuple[str, str] | None:
    """``(text, name)`` of a watcher's ``talk`` message, or None if ``msg`` is not one."""
    if isinstance(msg, list) and len(msg) == 3 and msg[0] == "talk" \
            and isinstance(msg[1], str) and isinstance(msg[2], str) \
            and len(msg[1]) <= MAX_TALK_MESSAGE and len(msg[2]) <= MAX_TALK_MESSAGE:
        return msg[1], msg[2]
    return None


def said(msg: Any, tag: str) -> str | None:
    """The reason of a ``[tag, reason]`` message (``end``, ``drop``, ``refuse``,
    ``unsaid``), or None."""
    if isinstance(msg, list) and len(msg) == 2 and msg[0] == tag and isinstance(msg[1], str):
        return msg[1]
    return None

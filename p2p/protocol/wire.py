"""What travels between table peers: envelope kinds, mesh tags, body shapes, limits.

One place for the wire vocabulary, imported by the live table, the offline audit
(:mod:`p2p.judge.game_audit`) and the fuzzer, so that what the table accepts and what the audit
replays can never drift apart.  Every test here is pure (no state): a body that fails it is
refused by the table, and skipped or reported by the audit.
"""

from __future__ import annotations

import itertools
from typing import Any

from crypto.transcript import ACK_KIND, CRYPTO_KIND

ACTION_KIND = "action"
"""A seat's move: ``[step, encoded engine action, state hash before]``."""
ABORT_KIND = "abort"
"""A seat stops the table accusing someone (:func:`abort_body_ok`)."""
CLOSE_KIND = "close"
"""A seat's closing acknowledgement, signed after the secrets: ``[final round, chain value,
heads]`` like an ack.  A game is certified when every seat's close covers the final state
(protocol version 4 on)."""
STOP_KIND = "stop"
"""A seat tells the others why its table stopped when it accuses no one (a silent seat, a
local error, the player abandoning): ``[rule, detail]``.  Accusations are abort notices."""
TALK_KIND = "talk"
"""A line of table talk: ``[text]``, or ``[text, watcher]`` for a line a watcher of the
signer's table said, relayed under the signer's key (:data:`RELAYED_TALK_SINCE`).  Signed
and kept in the transcript (so what was said is on record), it changes no state; every
screen shows it cleaned (:func:`p2p.sanitize.clean`).  From protocol version
:data:`TALK_SINCE` on."""
KINDS = (CRYPTO_KIND, ACTION_KIND, ACK_KIND, ABORT_KIND, CLOSE_KIND, STOP_KIND, TALK_KIND)
"""Every envelope kind a table understands; any other is its signer's violation."""

ENV_TAG = b"E"
"""Mesh message prefix: a signed envelope follows."""
SYNC_TAG = b"S"
"""Mesh message prefix: a sync request (how many envelopes we hold of each sender)."""

MAX_EARLY = 512
"""Envelopes *of one sender* held back because an earlier one of it has not arrived yet.
An honest sender cannot get this far ahead of us: every step needs our ack within
``ACK_LAG`` steps and every crypto op needs our messages, so its chain stalls after a few
dozen envelopes; the bound is per sender so that one seat's flood never refuses another
seat's messages."""
MAX_QUEUED_ACTIONS = 64
"""Action envelopes one sender may have pending for future steps."""
MAX_ACK_AHEAD = 4096
"""Ack rounds further ahead of our step than this are refused (memory bound)."""

TALK_SINCE = 5
"""The first protocol version with table talk; before it a talk envelope is an unknown kind."""
MAX_TALK_CHARS = 200
"""Characters in one line of talk (a longer body is its signer's violation)."""
RELAYED_TALK_SINCE = 7
"""The first protocol version in which a seat may relay a watcher's line of talk
(``[text, watcher]``); before it a second element is a malformed line."""
MAX_WATCHER_TAG = 24
"""Characters of the ``watcher`` a relayed line names (its chosen name, or its key's
fingerprint): a label for the screen, never a seat."""
MAX_TALK_LINES = 600
"""Lines of talk one seat may sign in a game: the bound on what talk adds to every peer's
store and transcript (600 × 200 characters).  Per game and counted in the sender's own
chain, so the live table and the audit count the same; the pace of talk on screen is
bounded by each sender's own table and by each screen (see :mod:`p2p.table.talk`)."""

HEADS_SINCE = 6
"""The first protocol version whose crypto bodies carry the signer's heads
(:func:`crypto_heads_problem`); before it a crypto body is crypto's five elements."""

PROOF_RULES = ("equivocation", "bad-chain")
"""Abort rules proved by two signed envelopes (:class:`crypto.transcript.EquivocationProof`)."""
MAX_EVIDENCE = 2
"""Signed envelopes an abort notice may carry: the proof of :data:`PROOF_RULES`, or the one
offending envelope, so that a peer that never received it can judge for itself."""

__all__ = [
    "ABORT_KIND",
    "ACK_KIND",
    "ACTION_KIND",
    "CLOSE_KIND",
    "CRYPTO_KIND",
    "ENV_TAG",
    "HEADS_SINCE",
    "KINDS",
    "MAX_ACK_AHEAD",
    "MAX_EARLY",
    "MAX_EVIDENCE",
    "MAX_QUEUED_ACTIONS",
    "MAX_TALK_CHARS",
    "MAX_TALK_LINES",
    "MAX_WATCHER_TAG",
    "PROOF_RULES",
    "RELAYED_TALK_SINCE",
    "STOP_KIND",
    "SYNC_TAG",
    "TALK_KIND",
    "TALK_SINCE",
    "abort_body_ok",
    "abort_evidence",
    "ack_body_ok",
    "action_body_ok",
    "crypto_core",
    "crypto_heads",
    "crypto_heads_problem",
    "head_ok",
    "stop_body_ok",
    "sync_counts_ok",
    "talk_problem",
]


def _int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def action_body_ok(body: Any) -> bool:
    """Shape of an action body: ``[step, encoded action]`` or ``[step, encoded action,
    state hash before]``."""
    return (isinstance(body, list) and len(body) in (2, 3) and _int(body[0])
            and isinstance(body[1], bytes)
            and (len(body) == 2 or isinstance(body[2], bytes)))


def abort_body_ok(body: Any) -> bool:
    """Shape of an abort notice: ``[culprit|None, rule, detail, [sender, seq, id]|None]``,
    plus a fifth element, the evidence: for :data:`PROOF_RULES` the proof ``[wire, wire]``,
    else ``[wire]`` (the offending envelope) or ``[]``."""
    if not (isinstance(body, list) and len(body) in (4, 5)):
        return False
    culprit, rule, detail, ref = body[:4]
    if rule in PROOF_RULES and len(body) != 5:
        return False
    if len(body) == 5 and not (isinstance(body[4], list) and len(body[4]) <= MAX_EVIDENCE
                               and all(isinstance(w, bytes) for w in body[4])
                               and (len(body[4]) == 2) == (rule in PROOF_RULES)):
        return False
    if not (culprit is None or _int(culprit)):
        return False
    if not (isinstance(rule, str) and isinstance(detail, str) and len(rule) <= 64):
        return False
    return ref is None or (isinstance(ref, list) and len(ref) == 3
                           and all(_int(x) for x in ref[:2]) and isinstance(ref[2], bytes))


def head_ok(head: Any, players: int) -> bool:
    """One ``[sender, seq, envelope id]`` entry of an ack's heads."""
    return (isinstance(head, list) and len(head) == 3 and all(_int(x) for x in head[:2])
            and 0 <= head[0] < players and head[1] >= 0
            and isinstance(head[2], bytes) and len(head[2]) == 32)


def ack_body_ok(body: Any, players: int) -> bool:
    """Shape of an ack: ``[round, chain value, heads]`` (:func:`crypto.transcript.ack_body`),
    the heads one per seat in seat order, as every honest peer writes them
    (:meth:`crypto.transcript.TranscriptLog.heads`): an ack or close is one statement with
    one spelling, so nobody can re-sign it in another that says the same."""
    return (isinstance(body, list) and len(body) == 3 and isinstance(body[0], int)
            and isinstance(body[1], bytes) and isinstance(body[2], list)
            and all(head_ok(h, players) for h in body[2])
            and all(a[0] < b[0] for a, b in zip(body[2], body[2][1:], strict=False)))


def crypto_heads(log_heads: list[list[Any]], me: int) -> list[list[Any]]:
    """The heads a crypto body carries (version :data:`HEADS_SINCE` on): ``log_heads``
    (:meth:`crypto.transcript.TranscriptLog.heads`, by seat) without the signer's own."""
    return [list(h) for h in log_heads if h[0] != me]


def crypto_heads_problem(body: Any, players: int, sender: int) -> str | None:
    """What is wrong with a version-6 crypto body's shape, or None: crypto's five elements
    (checked by crypto itself) and a sixth, the heads: ``[seat, seq, id]`` of the last
    envelope of each *other* seat the signer had taken in when it made the body, as
    :func:`head_ok` spells an ack's, in seat order, at most one per seat.  A seat it had
    taken nothing from yet has no head.  One spelling, so a body cannot be re-signed in
    another that says the same; a wrong shape is its signer's violation
    (``malformed-crypto``) whatever the history."""
    if not (isinstance(body, list) and len(body) == 6):
        return "signed a crypto body without its heads (version 6 bodies have six elements)"
    heads = body[5]
    if not (isinstance(heads, list) and all(head_ok(h, players) for h in heads)):
        return "signed a crypto body whose heads are malformed"
    if not all(a[0] < b[0] for a, b in itertools.pairwise(heads)):
        return "signed a crypto body whose heads are not one per seat in seat order"
    if any(h[0] == sender for h in heads):
        return "signed a crypto body with a head of its own chain"
    return None


def crypto_core(body: list[Any]) -> list[Any]:
    """The part of a checked version-6 crypto body that crypto reads (its five elements):
    the heads are the protocol's, never the crypto session's."""
    return body[:5]


def sync_counts_ok(counts: Any, players: int) -> bool:
    """A sync request: how many envelopes of each seat the asker holds."""
    return (isinstance(counts, list) and len(counts) == players
            and all(isinstance(c, int) and c >= 0 for c in counts))


def abort_evidence(body: Any) -> list[bytes]:
    """The signed envelopes an abort notice carries (empty for a malformed notice)."""
    if abort_body_ok(body) and len(body) == 5:
        return list(body[4])
    return []


def stop_body_ok(body: Any) -> bool:
    """Shape of a stop notice: ``[rule, detail]``."""
    return (isinstance(body, list) and len(body) == 2 and isinstance(body[0], str)
            and len(body[0]) <= 64 and isinstance(body[1], str) and len(body[1]) <= 1000)


def talk_problem(body: Any, lines_before: int, relayed: bool = True
                 ) -> tuple[str, str] | None:
    """``(rule, detail)`` if a talk envelope is its signer's violation, else None:
    ``[text]`` (or, when ``relayed`` lines exist in the game's protocol, ``[text, watcher]``
    with a ``watcher`` of 1 to :data:`MAX_WATCHER_TAG` characters) with at most
    :data:`MAX_TALK_CHARS` characters, and at most :data:`MAX_TALK_LINES` lines per seat,
    relayed ones included (``lines_before``: the sender's talk envelopes earlier in its own
    chain)."""
    shapes = (1, 2) if relayed else (1,)
    if not (isinstance(body, list) and len(body) in shapes and isinstance(body[0], str)):
        return "malformed-talk", "signed a malformed line of talk"
    if len(body) == 2 and not (isinstance(body[1], str)
                               and 0 < len(body[1]) <= MAX_WATCHER_TAG):
        return "malformed-talk", "signed a relayed line of talk naming no proper watcher"
    if len(body[0]) > MAX_TALK_CHARS:
        return "malformed-talk", f"signed a line of talk over {MAX_TALK_CHARS} characters"
    if lines_before >= MAX_TALK_LINES:
        return "talk-flood", f"signed more than {MAX_TALK_LINES} lines of talk"
    return None

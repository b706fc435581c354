"""What travels between table peers: envelope kinds, mesh tags, body shapes, limits.

One place for the wire vocabulary, imported by the live table, the offline audit
(:mod:`p2p.game_audit`) and the fuzzer, so that what the table accepts and what the audit
replays can never drift apart.  Every test here is pure (no state): a body that fails it is
refused by the table, and skipped or reported by the audit.
"""

from __future__ import annotations

from typing import Any

from crypto.transcript import ACK_KIND, CRYPTO_KIND

ACTION_KIND = "action"
"""A seat's move: ``[step, encoded engine action, state hash before]``."""
ABORT_KIND = "abort"
"""A seat stops the table accusing someone (:func:`abort_body_ok`)."""
KINDS = (CRYPTO_KIND, ACTION_KIND, ACK_KIND, ABORT_KIND)
"""Every envelope kind a table understands."""

ENV_TAG = b"E"
"""Mesh message prefix: a signed envelope follows."""
SYNC_TAG = b"S"
"""Mesh message prefix: a sync request (how many envelopes we hold of each sender)."""

MAX_EARLY = 4096
"""Envelopes held back because an earlier one of the same sender has not arrived yet."""
MAX_QUEUED_ACTIONS = 64
"""Action envelopes one sender may have pending for future steps."""
MAX_ACK_AHEAD = 4096
"""Ack rounds further ahead of our step than this are refused (memory bound)."""

PROOF_RULES = ("equivocation", "bad-chain")
"""Abort rules proved by two signed envelopes (:class:`crypto.transcript.EquivocationProof`)."""

__all__ = ["ABORT_KIND", "ACK_KIND", "ACTION_KIND", "CRYPTO_KIND", "ENV_TAG", "KINDS",
           "MAX_ACK_AHEAD", "MAX_EARLY", "MAX_QUEUED_ACTIONS", "PROOF_RULES", "SYNC_TAG",
           "abort_body_ok", "ack_body_ok", "action_body_ok", "head_ok", "sync_counts_ok"]


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
    plus for :data:`PROOF_RULES` a fifth element, the proof ``[wire, wire]``."""
    if not (isinstance(body, list) and len(body) in (4, 5)):
        return False
    culprit, rule, detail, ref = body[:4]
    if len(body) == 5 and not (rule in PROOF_RULES and isinstance(body[4], list)
                               and len(body[4]) == 2
                               and all(isinstance(w, bytes) for w in body[4])):
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
    """Shape of an ack: ``[round, chain value, heads]`` (:func:`crypto.transcript.ack_body`)."""
    return (isinstance(body, list) and len(body) == 3 and isinstance(body[0], int)
            and isinstance(body[1], bytes) and isinstance(body[2], list)
            and all(head_ok(h, players) for h in body[2]))


def sync_counts_ok(counts: Any, players: int) -> bool:
    """A sync request: how many envelopes of each seat the asker holds."""
    return (isinstance(counts, list) and len(counts) == players
            and all(isinstance(c, int) and c >= 0 for c in counts))

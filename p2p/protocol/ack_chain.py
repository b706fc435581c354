"""Cumulative acknowledgements: when a round is acknowledged, and what an ack commits to.

Acking every step cost each peer one signature and n - 1 verifications per move — most of
a plain move's CPU (docs/table.md, "Latency").  Instead every peer folds each step's state
hash into a running chain, ``chain[r] = H(chain[r - 1] ‖ state_hash[r])``, and signs an ack
only at *ack points*; an ack of round ``r`` therefore acknowledges every step up to ``r``.

Ack points (the same on every peer that is in sync):

* every :data:`ACK_EVERY`-th round;
* the round before a crypto step or a simultaneous step, and the final round: diverged
  peers must never start different crypto ops, so those rounds are always confirmed first;
* **closure**: any round some other peer acknowledged.  A peer whose state drifted may
  disagree about the points above; since every honest peer answers any ack with its own
  ack of that round, a round one peer acks is acked by all, and a difference is judged
  (:mod:`p2p.table.verdicts`) instead of stalling.  A peer that sees an action whose "state hash
  before" differs from its own acks that round, which brings the others in the same way.
"""

from __future__ import annotations

import hashlib

ACK_EVERY = 8
"""Plain rounds between scheduled acks (an ack covers all rounds before it)."""

_DOMAIN = b"silkroad/ack-chain/v1\0"


def chain_start(game_id: bytes, state_hash: bytes) -> bytes:
    """Chain value of round 0 (the initial state), bound to the game."""
    return hashlib.sha256(_DOMAIN + game_id + state_hash).digest()


def chain_next(prev: bytes, state_hash: bytes) -> bytes:
    """Chain value after one more step whose resulting state hashes to ``state_hash``."""
    return hashlib.sha256(_DOMAIN + prev + state_hash).digest()


def scheduled(rnd: int, crypto_next: bool) -> bool:
    """Whether round ``rnd`` is an ack point by schedule (closure is the caller's part)."""
    return crypto_next or rnd % ACK_EVERY == 0

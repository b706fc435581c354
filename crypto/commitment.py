"""Hash commitments with a nonce and a context.

``C = SHA-256(tag ‖ game_id ‖ round ‖ party ‖ purpose ‖ value ‖ nonce)`` with every field
length prefixed (group.hash_fields). The 32-byte nonce is needed because committed values
are tiny (a few positions, a count) and would otherwise be brute-forced; the party and
context are included so that a copied commitment cannot be opened by the copier and a
commitment cannot be replayed in another game, round or purpose.
"""

from __future__ import annotations

import hmac
import secrets

from .errors import MalformedInput
from .group import hash_fields

NONCE_BYTES = 32


def _digest(game_id: bytes, rnd: int, party: int, purpose: str, value: object,
            nonce: bytes) -> bytes:
    return hash_fields("commit", [game_id, rnd, party, purpose, value, nonce], "sha256")


def commit(game_id: bytes, rnd: int, party: int, purpose: str,
           value: object) -> tuple[bytes, bytes]:
    """Return ``(commitment, nonce)``; ``value`` is any hashable field (see hash_fields)."""
    nonce = secrets.token_bytes(NONCE_BYTES)
    return _digest(game_id, rnd, party, purpose, value, nonce), nonce


def check_opening(commitment: bytes, game_id: bytes, rnd: int, party: int, purpose: str,
                  value: object, nonce: object) -> bool:
    """Constant-time check that ``(value, nonce)`` opens ``commitment`` for this context."""
    if not isinstance(nonce, bytes) or len(nonce) != NONCE_BYTES:
        raise MalformedInput(f"commitment nonce must be {NONCE_BYTES} bytes")
    return hmac.compare_digest(commitment, _digest(game_id, rnd, party, purpose, value, nonce))

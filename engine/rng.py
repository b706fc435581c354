"""A project-owned deterministic RNG: SHA-256 in counter mode, rejection sampling.

Why not :mod:`random`: its algorithms for ``randrange``/``shuffle`` are not promised
stable across Python versions, and every peer of a table must compute the same
tile layout from the shared seed on whatever interpreter it runs.

The stream is the concatenation of ``sha256(seed' || counter)`` blocks; ``below(n)``
reads ``bytes_for(n)`` big-endian bytes per attempt. The implementation keeps a read
position into a buffer (instead of re-slicing it) and caches the per-``n`` constants,
because bots and the dealer call it on every simulated step; the output is unchanged.
"""

from __future__ import annotations

import hashlib
from collections.abc import MutableSequence
from typing import TypeVar

T = TypeVar("T")

_sha256 = hashlib.sha256
_from_bytes = int.from_bytes

_BLOCKS_PER_REFILL = 8
"""Blocks hashed per refill: amortises the refill; the stream is the same either way."""

_LIMITS: dict[int, tuple[int, int]] = {}
"""n -> (bytes per draw, rejection limit); a small cache for the hot path."""


def _limits(n: int) -> tuple[int, int]:
    lim = _LIMITS.get(n)
    if lim is None:
        nbytes = (n.bit_length() + 7) // 8 + 1
        lim = (nbytes, (256**nbytes // n) * n)
        if len(_LIMITS) < 4096:
            _LIMITS[n] = lim
    return lim


class DetRng:
    """Deterministic stream of integers derived from ``seed`` (any bytes)."""

    __slots__ = ("_buf", "_counter", "_pos", "_seed")

    def __init__(self, seed: bytes, domain: bytes = b"silkroad/rng/v1") -> None:
        self._seed = _sha256(len(domain).to_bytes(2, "big") + domain + seed).digest()
        self._counter = 0
        self._buf = b""
        self._pos = 0

    def _refill(self, n: int) -> None:
        """Make at least ``n`` unread bytes available after ``_pos``."""
        rest = self._buf[self._pos :]
        seed, c = self._seed, self._counter
        parts = [rest]
        have = len(rest)
        while have < n or len(parts) <= _BLOCKS_PER_REFILL:
            parts.append(_sha256(seed + c.to_bytes(8, "big")).digest())
            c += 1
            have += 32
        self._counter = c
        self._buf = b"".join(parts)
        self._pos = 0

    def _bytes(self, n: int) -> bytes:
        pos = self._pos
        if pos + n > len(self._buf):
            self._refill(n)
            pos = 0
        self._pos = pos + n
        return self._buf[pos : pos + n]

    def below(self, n: int) -> int:
        """Uniform integer in ``[0, n)`` by rejection sampling (no modulo bias)."""
        if n <= 1:
            if n <= 0:
                raise ValueError("below() needs n >= 1")
            return 0
        nbytes, limit = _LIMITS.get(n) or _limits(n)
        while True:
            pos = self._pos
            end = pos + nbytes
            if end > len(self._buf):
                self._refill(nbytes)
                pos, end = 0, nbytes
            self._pos = end
            buf = self._buf
            if nbytes == 2:  # every n < 256: two byte reads beat slicing + from_bytes
                x = (buf[pos] << 8) | buf[pos + 1]
            else:
                x = _from_bytes(buf[pos:end], "big")
            if x < limit:
                return x % n

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher–Yates, in place: ``j = below(i + 1)`` for i from the top down.

        ``below`` is inlined for n < 256 (every shuffle a game makes): the dealer and
        the tile layout shuffle ~200 times per game, and the call was half the cost.
        """
        for i in range(len(items) - 1, 0, -1):
            n = i + 1
            if n >= 256:
                j = self.below(n)
            else:
                limit = (_LIMITS.get(n) or _limits(n))[1]
                while True:
                    pos = self._pos
                    if pos + 2 > len(self._buf):
                        self._refill(2)
                        pos = 0
                    self._pos = pos + 2
                    buf = self._buf
                    x = (buf[pos] << 8) | buf[pos + 1]
                    if x < limit:
                        j = x % n
                        break
            items[i], items[j] = items[j], items[i]

    def bytes_below_256(self, k: int) -> bytes:
        """The same as ``bytes(self.below(256) for _ in range(k))``, in one read:
        ``below(256)`` reads 3 bytes, never rejects (256**3 is a multiple of 256) and
        keeps the last byte."""
        return self._bytes(3 * k)[2::3]

    def choice(self, items: list[T]) -> T:
        return items[self.below(len(items))]

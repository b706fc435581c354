"""A project-owned deterministic RNG: SHA-256 in counter mode, rejection sampling.

Why not :mod:`random`: its algorithms for ``randrange``/``shuffle`` are not promised
stable across Python versions, and every peer of a table must compute the same
tile layout from the shared seed on whatever interpreter it runs.
"""

from __future__ import annotations

import hashlib
from collections.abc import MutableSequence
from typing import TypeVar

T = TypeVar("T")


class DetRng:
    """Deterministic stream of integers derived from ``seed`` (any bytes)."""

    __slots__ = ("_buf", "_counter", "_seed")

    def __init__(self, seed: bytes, domain: bytes = b"silkroad/rng/v1") -> None:
        self._seed = hashlib.sha256(len(domain).to_bytes(2, "big") + domain + seed).digest()
        self._counter = 0
        self._buf = b""

    def _bytes(self, n: int) -> bytes:
        while len(self._buf) < n:
            block = hashlib.sha256(self._seed + self._counter.to_bytes(8, "big")).digest()
            self._counter += 1
            self._buf += block
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def below(self, n: int) -> int:
        """Uniform integer in ``[0, n)`` by rejection sampling (no modulo bias)."""
        if n <= 0:
            raise ValueError("below() needs n >= 1")
        if n == 1:
            return 0
        nbytes = (n.bit_length() + 7) // 8 + 1
        limit = (256**nbytes // n) * n
        while True:
            x = int.from_bytes(self._bytes(nbytes), "big")
            if x < limit:
                return x % n

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher–Yates, in place."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]

    def choice(self, items: list[T]) -> T:
        return items[self.below(len(items))]

"""Online guessing of a table's join code: slowed per address, then shut out; strong codes.

Why: the PAKE (:mod:`p2p.net.join_pake`) leaves a guesser one guess per connection, but a
connection cost nothing, so a LAN peer could try hundreds of codes a second against a
short typed code.  Now, per remote address (the IP, not the port):

* every guess is counted **before** the table's proof is sent (that proof already tells
  the guesser whether its one guess was right, so a guesser that hangs up after reading
  it has still guessed); a right code takes its count back;
* guesses from one address are taken **one at a time**, and after ``n`` wrong ones the
  next waits ``base_delay · 2^(n-1)`` seconds (capped at ``max_delay``) after the last
  failure.  A wait longer than ``max_hold`` is not held open: that connection is refused
  at once with the time left;
* after ``lockout_after`` wrong codes the lobby is **closed to the address** for the
  table's lifetime, right after its hello (before any key derivation or PAKE work).

With the defaults an address gets 8 guesses in about 30 s, then none.  Against that, a
code from :func:`generate_code` (4 words of ``p2p/data/words.txt``, 32 bits) cannot be
guessed online: an attacker would need hundreds of millions of addresses.  A typed code
is as strong as it is unpredictable; :func:`estimate_bits` gives an upper bound that the
host's screen shows.

The table of addresses is bounded (:data:`MAX_ADDRESSES`, least recently seen forgotten
first, locked-out addresses last), so a flood of addresses cannot grow it.
"""

from __future__ import annotations

import asyncio
import math
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from ..game import wordlist
from ..net.handshake import normalize_code

MAX_ADDRESSES = 4096
"""Addresses remembered at most (each record is a few dozen bytes)."""
AUTO = "auto"
"""``--code auto``: let the host generate the code."""
CODE_WORDS = 4


@dataclass
class _Record:
    failures: int = 0
    last_failure: float = 0.0
    turn: asyncio.Lock = field(default_factory=asyncio.Lock)


class CodeGuard:
    """Per-address accounting of join-code guesses for one table (see the module doc)."""

    def __init__(self, *, base_delay: float = 0.25, max_delay: float = 16.0,
                 lockout_after: int = 8, max_hold: float = 2.5,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if lockout_after < 1:
            raise ValueError("lockout_after must be at least 1")
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.lockout_after = lockout_after
        self.max_hold = max_hold
        self._clock = clock
        self._seen: OrderedDict[str, _Record] = OrderedDict()

    # --- queries ----------------------------------------------------------------------
    def failures(self, host: str) -> int:
        rec = self._seen.get(host)
        return rec.failures if rec is not None else 0

    def locked(self, host: str) -> bool:
        """True once ``host`` gave ``lockout_after`` wrong codes: the lobby is closed to it."""
        return self.failures(host) >= self.lockout_after

    def lockout_reason(self, host: str) -> str:
        return (f"this table's lobby is closed to {host} after {self.failures(host)} wrong "
                "join codes")

    def delay_after(self, failures: int) -> float:
        """The pause before the next guess after ``failures`` wrong ones."""
        if failures <= 0:
            return 0.0
        return min(self.base_delay * 2 ** (failures - 1), self.max_delay)

    def wait(self, host: str) -> float:
        """Seconds ``host`` must still wait before its next guess is looked at."""
        rec = self._seen.get(host)
        if rec is None or rec.failures == 0:
            return 0.0
        return max(0.0, rec.last_failure + self.delay_after(rec.failures) - self._clock())

    # --- one guess ------------------------------------------------------------------------
    def _record(self, host: str) -> _Record:
        rec = self._seen.get(host)
        if rec is None:
            if len(self._seen) >= MAX_ADDRESSES:
                self._forget_one()
            rec = self._seen[host] = _Record()
        self._seen.move_to_end(host)
        return rec

    def _forget_one(self) -> None:
        """Drop the least recently seen address, preferring one that is not locked out."""
        for host, rec in self._seen.items():
            if rec.failures < self.lockout_after and not rec.turn.locked():
                del self._seen[host]
                return
        self._seen.popitem(last=False)

    @asynccontextmanager
    async def turn(self, host: str) -> AsyncIterator[str | None]:
        """Take ``host``'s turn to guess (one at a time per address) and wait out its
        backoff.  Yields None to go ahead, or a refusal reason (locked out, or a wait
        longer than ``max_hold``: the connection is refused with the time left rather than
        held open)."""
        rec = self._record(host)
        async with rec.turn:
            if self.locked(host):
                yield self.lockout_reason(host)
                return
            left = self.wait(host)
            if left > self.max_hold:
                yield (f"too many wrong join codes from {host}: try again in "
                       f"{math.ceil(left)} s")
                return
            if left > 0:
                await asyncio.sleep(left)
            yield None

    def guessed(self, host: str) -> None:
        """A guess was made (counted before the table's proof goes out)."""
        rec = self._record(host)
        rec.failures += 1
        rec.last_failure = self._clock()

    def right(self, host: str) -> None:
        """The guess was the code: its count is taken back."""
        rec = self._seen.get(host)
        if rec is not None and rec.failures > 0:
            rec.failures -= 1


# --- codes --------------------------------------------------------------------------------
def generate_code(words: int = CODE_WORDS) -> str:
    """A random code of ``words`` words from the 256-word list (8 bits each), joined by
    ``-``: easy to read aloud, 32 bits with the default 4."""
    pool = wordlist()
    return "-".join(secrets.choice(pool) for _ in range(words))


def estimate_bits(code: str) -> float:
    """An upper bound on a typed code's strength in bits, as if every character (after
    :func:`p2p.net.handshake.normalize_code`) were chosen at random from its class; a code of
    list words counts 8 bits per word.  Real typed codes (names, words, dates) are weaker."""
    norm = normalize_code(code)
    if not norm:
        return 0.0
    pool = set(wordlist())
    parts = [p for p in code.replace("_", "-").replace(" ", "-").split("-") if p]
    if parts and all(p.casefold() in pool for p in parts):
        return 8.0 * len(parts)
    alphabet = 0
    if any(c.isdigit() for c in norm):
        alphabet += 10
    if any(c.isalpha() for c in norm):
        alphabet += 26
    if any(not c.isalnum() for c in norm):
        alphabet += 32
    return len(norm) * math.log2(max(alphabet, 2))

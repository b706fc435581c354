"""N-party coin flip: commit → reveal → SHA-512 of the contributions in seat order.

Args ``[purpose]``. Steps ``commit`` (all): ``[C]``; ``reveal`` (all, after every commitment):
``[r_j, nonce]`` with a 32-byte ``r_j``. Output ``SHA-512(tag, game, op, purpose, r_0 … r_{N−1})``
(hashing, not XOR, so no contributor can cancel another). The last revealer can see the
outcome and refuse to reveal; that is an identifiable abort (``waiting_for()`` names it) and
must never be answered by a silent re-flip, which would hand the aborter a re-roll.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from typing import Any

from . import commitment
from .errors import CheatDetected, MalformedInput
from .group import hash_fields
from .protocols.base import Op, Step, StepHandlers, check_list

CONTRIBUTION_BYTES = 32


def combine(game_id: bytes, op_index: int, purpose: str, contributions: Sequence[bytes]) -> bytes:
    """The coin: SHA-512 over the context and all contributions in seat order."""
    return hash_fields("coinflip", [game_id, op_index, purpose, list(contributions)])


def below(coin: bytes, bound: int) -> int:
    """Map a coin to ``[0, bound)`` by rejection sampling over SHA-512(coin ‖ counter)."""
    if bound < 1:
        raise MalformedInput("bound must be positive")
    limit = (2**512 // bound) * bound
    ctr = 0
    while True:
        v = int.from_bytes(hashlib.sha512(coin + ctr.to_bytes(4, "big")).digest(), "big")
        if v < limit:
            return v % bound
        ctr += 1  # pragma: no cover - probability < 2^-500 for small bounds


class CoinFlip(Op):
    """Op ``coinflip``."""

    name = "coinflip"

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        (purpose,) = check_list(self.args, "coinflip args", 1)
        if not isinstance(purpose, str):
            raise MalformedInput("coin purpose must be a string")
        self.purpose = purpose
        n = self.ctx.n
        self.steps = [Step("commit", list(range(n))), Step("reveal", list(range(n)))]
        self.commits = [b""] * n
        self.contrib = [b""] * n
        self._mine = secrets.token_bytes(CONTRIBUTION_BYTES)
        self._nonce = b""

    def step_handlers(self) -> dict[str, StepHandlers]:
        """Handlers of this op's steps (see :meth:`Op.step_handlers`)."""
        return {
            "commit": StepHandlers(self.make_commit, self.on_commit),
            "reveal": StepHandlers(self.make_reveal, self.on_reveal),
        }

    def make_commit(self, st: Step) -> list[Any]:
        assert self.ctx.me is not None
        c, self._nonce = commitment.commit(self.ctx.game_id, self.index, self.ctx.me,
                                           "coin:" + self.purpose, self._mine)
        return [c]

    def on_commit(self, st: Step, sender: int, payload: Any) -> None:
        (c,) = check_list(payload, "commitment", 1)
        if not isinstance(c, bytes) or len(c) != 32:
            raise MalformedInput("commitment must be 32 bytes")
        self.commits[sender] = c

    def make_reveal(self, st: Step) -> list[Any]:
        return [self._mine, self._nonce]

    def on_reveal(self, st: Step, sender: int, payload: Any) -> None:
        r, nonce = check_list(payload, "coin reveal", 2)
        if not isinstance(r, bytes) or len(r) != CONTRIBUTION_BYTES:
            raise MalformedInput(f"coin contribution must be {CONTRIBUTION_BYTES} bytes")
        if not commitment.check_opening(self.commits[sender], self.ctx.game_id, self.index,
                                        sender, "coin:" + self.purpose, r, nonce):
            raise CheatDetected(sender, "commitment-mismatch",
                                "coin reveal does not match the commitment")
        self.contrib[sender] = r

    def finish(self) -> None:
        coin = combine(self.ctx.game_id, self.index, self.purpose, self.contrib)
        self.result = {"purpose": self.purpose, "coin": coin}

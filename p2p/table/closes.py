"""Closing acknowledgements: how a game ends certified (protocol version 4).

After the secrets, every seat signs a ``close`` — the final round, the state chain's value
there and the heads of every chain, everybody's secrets included — and waits for everyone
else's before it exports its transcript, so that every exported file holds every seat's
close.  ``silkroad audit`` certifies a game only then (docs/security.md).  A close naming
another final state than the one every seat acknowledged before the secrets is its
signer's violation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from crypto.transcript import Envelope, ack_body

from ..protocol.wire import CLOSE_KIND
from .context import TableContext


class Closes:
    """The closes received (seat → envelope) and the final state they must name."""

    def __init__(self, ctx: TableContext, emit: Callable[[str, Any], None],
                 violation: Callable[[Envelope, str, str], object]) -> None:
        self.ctx = ctx
        self._emit = emit
        self._violation = violation
        self._got: dict[int, Envelope] = {}
        self._final: tuple[int, bytes] | None = None

    def mine_sent(self, me: int) -> bool:
        """Whether our close is signed (our last word on the game: nothing may follow)."""
        return me in self._got

    def received(self, env: Envelope) -> None:
        """A seat's close (well-formed: :func:`p2p.protocol.wire.ack_body_ok`)."""
        if env.sender in self._got:
            self._violation(env, "second-close", f"seat {env.sender} signed a second close")
            return
        self._got[env.sender] = env
        self._check(env)

    def _check(self, env: Envelope) -> None:
        if self._final is not None and [env.body[0], env.body[1]] != list(self._final):
            self._violation(env, "close-mismatch", f"seat {env.sender} closed the game on "
                                                   "another state than the one all acknowledged")

    async def close(self, rnd: int, chain: bytes) -> None:
        """Sign our close of round ``rnd`` (chain value ``chain``) and wait for everyone's."""
        self._final = (rnd, chain)
        for env in list(self._got.values()):
            self._check(env)
        ctx = self.ctx
        if ctx.me not in self._got:
            self._emit(CLOSE_KIND, ack_body(rnd, chain, ctx.log))
        await ctx.waiter.wait(lambda: len(self._got) == ctx.n, "the closing acknowledgements",
                              lambda: [p for p in range(ctx.n) if p not in self._got])

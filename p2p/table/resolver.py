"""The networked resolver: drives the resolution script (:mod:`p2p.protocol.resolution`) live.

This is the table's counterpart of :class:`engine.dealer.LocalDealer`: it settles the
table's own steps and checks a player's hidden claims, as coroutines, because every answer
is a crypto op that every peer runs together (it does not implement the engine's
synchronous :class:`engine.resolver.Resolver`, which an omniscient dealer answers at once).
The scripts are the game's (:class:`p2p.protocol.table_game.TableGame`); the resolver
reaches the table only through :class:`OpRunner`: start (or, on resume, re-find) the next
op and await its result.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from crypto.errors import CheatDetected

from ..protocol.resolution import ClaimScript, OpCall, Script
from ..protocol.table_game import Move, State, TableGame, Zones


class OpRunner(Protocol):
    """What the resolver needs from the table."""

    async def run_op(self, call: OpCall) -> dict[str, Any]:
        """Run the next op of this step (started by us and the peers alike) and return its
        result; the table decides its private part (a sealed choice) itself."""
        ...

    def stop(self, culprit: int | None, rule: str, detail: str) -> Exception:
        """Stop the table; returns the reason, to raise."""
        ...

    async def agree(self) -> None:
        """Wait until every seat acknowledged the state this step began in."""
        ...


@dataclass(frozen=True)
class _Live:
    """An op's result as the live table sees it: nobody learns hidden colours from it."""

    result: dict[str, Any]

    def learned(self) -> None:
        """Live, a token's colour is known only to whoever holds it."""


def _unknown(_handle: int) -> int | None:
    return None


class NetResolver:
    """Resolves engine steps and claims with crypto ops (see the module docstring)."""

    def __init__(self, runner: OpRunner, game: TableGame, mode: bool | str) -> None:
        """``mode`` is the deal's shuffle mode (:func:`p2p.protocol.resolution.deal_mode`)."""
        self.runner = runner
        self.game = game
        self.mode = mode

    async def resolve(self, s: State, zones: Zones) -> Move:
        """The resolution of the table's own step."""
        return await self._drive(self.game.resolve(s, zones, _unknown, self.mode))

    async def reveal(self, s: State, zones: Zones, deciding: tuple[int, ...]) -> Move:
        """The resolution of a simultaneous step (every deciding seat's sealed choice)."""
        return await self._drive(self.game.reveal(s, zones, deciding))

    async def check(self, s: State, zones: Zones, actor: int, a: Move) -> None:
        """Verify ``actor``'s hidden claims in ``a`` before it is applied.

        A claim's op runs inside a player's step, where no ack round precedes it: every
        seat first acknowledges the state the step began in (:meth:`OpRunner.agree`), so
        that a bad proof or share in the op is attributable in the file too — the evidence
        rule (:mod:`p2p.judge.evidence`) names a seat only for what it did in a history it
        acknowledged."""
        script = self.game.claims(s, zones, actor, a, _unknown)
        await self._drive(script, self.runner.agree)

    async def _drive(self, script: Script | ClaimScript,
                     before: Callable[[], Awaitable[None]] | None = None) -> Any:
        try:
            call = next(script)
            if before is not None:
                await before()
            while True:
                call = script.send(_Live(await self.runner.run_op(call)))
        except StopIteration as done:
            return done.value
        except CheatDetected as exc:
            raise self.runner.stop(exc.culprit, exc.rule, exc.detail) from exc

"""Helpers of the table tests: real peers over 127.0.0.1, real crypto, real bots."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench.frugal_bot import BAG_ACTIONS, FrugalBot
from crypto.shuffle import DEFAULT_LAMBDA
from engine.actions import Action, ExchangeDone, ExchangePair
from engine.bots import make_bot
from engine.view import PlayerView
from p2p.local_table import LocalPeer, finish_peer, make_local_setup, start_peer
from p2p.table import LockstepTable, TableResult, TableStopped

LAM = DEFAULT_LAMBDA
"""λ of the tables in tests: the protocol's own (it only weighs on cut-and-choose proofs,
which tables do not use)."""

def run(coro_fn: Callable[[], Awaitable[Any]], timeout: float = 60.0) -> Any:
    """Run one async test body with a hard timeout (no pytest-asyncio needed)."""

    async def bounded() -> Any:
        async with asyncio.timeout(timeout):
            return await coro_fn()

    return asyncio.run(bounded())


class OneDrawBot:
    """The heuristic bot until it has chosen one bag draw (Buy/Trade/Exchange), then the
    frugal bot: a game with a few withdraw ops (all one needs to kill a peer during one)
    that does not pay for a dozen more afterwards."""

    def __init__(self, seed: int) -> None:
        self.inner = make_bot("heuristic", seed)
        self.frugal = FrugalBot(seed)
        self.drew = False

    def choose(self, view: PlayerView, legal: list[Action]) -> Action:
        # never switch in the middle of an exchange (Decline is listed there but refused)
        mid = any(isinstance(a, ExchangePair | ExchangeDone) for a in legal)
        if self.drew and not mid:
            return self.frugal.choose(view, legal)
        a = self.inner.choose(view, legal)
        if isinstance(a, BAG_ACTIONS):
            self.drew = True
        return a


async def play_tables(root: Path, players: int, mode: str = "audit", frugal: bool = True,
                      seed: int = 1, table_cls: type[LockstepTable] = LockstepTable,
                      on_step: Any = None, agents: dict[int, Any] | None = None,
                      abandon: float = 60.0, prepare: Callable[[LockstepTable], None] | None = None,
                      ) -> tuple[list[LocalPeer], list[Any]]:
    """Play one game among ``players`` local peers; returns peers and results/exceptions."""
    peers = await make_local_setup(players, mode, root, lam=LAM)
    tables: list[LockstepTable] = []
    for p in peers:
        agent = (agents or {}).get(p.seat) or (
            FrugalBot(seed * 10 + p.seat) if frugal else make_bot("heuristic", seed * 10 + p.seat))
        t = await start_peer(p, agent, lam=LAM, abandon_timeout=abandon)
        if table_cls is not LockstepTable:
            t.__class__ = table_cls
        t.on_step = on_step
        if prepare is not None:
            prepare(t)
        tables.append(t)
    try:
        results = await asyncio.gather(*(t.run() for t in tables), return_exceptions=True)
    finally:
        for p in peers:
            with contextlib.suppress(Exception):
                await finish_peer(p, grace=1.0)
    return peers, list(results)


class _Silence:
    """A transport that drops everything we send: a peer that crashed says nothing more."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def broadcast(self, body: bytes) -> None:
        pass

    def send(self, seat: int, body: bytes) -> None:
        pass

    async def next_event(self) -> Any:
        return await self.inner.next_event()


class Rerouted:
    """A peer's mesh whose broadcasts ``route(body)`` may send to one seat only (a cheater
    showing something to one peer); None broadcasts as usual."""

    def __init__(self, inner: Any, route: Callable[[bytes], int | None]) -> None:
        self.inner = inner
        self.route = route

    def broadcast(self, body: bytes) -> None:
        seat = self.route(body)
        if seat is None:
            self.inner.broadcast(body)
        else:
            self.inner.send(seat, body)

    def send(self, seat: int, body: bytes) -> None:
        self.inner.send(seat, body)

    async def next_event(self) -> Any:
        return await self.inner.next_event()


def go_silent(t: LockstepTable) -> None:
    """From now on ``t`` sends nothing (as a peer whose machine died would)."""
    t.transport = _Silence(t.transport)


def stopped_naming(results: list[Any], seat: int, *rules: str) -> None:
    """Every peer's table stopped naming ``seat`` for one of ``rules``."""
    for me, r in enumerate(results):
        assert isinstance(r, TableStopped), (me, r)
        assert r.culprit == seat and r.rule in rules, (me, r)


def finished(results: list[Any]) -> list[TableResult]:
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return results


async def play_with_restart(root: Path, players: int, victim: int,
                            when: Callable[[LockstepTable], bool], *, frugal: bool = True,
                            seed: int = 1, pause: float = 0.3,
                            deadline: float = 60.0,
                            bot: Callable[[int], Any] | None = None) -> tuple[list[Any], bool]:
    """Play a game; kill ``victim`` (cancel its table, close its mesh and listener) the
    first time ``when(table)`` holds, restart it from its folder on the same port, and
    play on.  ``bot(seed)`` makes the agents (default: frugal or heuristic).  Returns
    ``(results, killed)``."""
    from p2p.net.connection import Listener

    peers = await make_local_setup(players, "audit", root, lam=LAM)

    def agent(seat: int) -> Any:
        if bot is not None:
            return bot(seed * 10 + seat)
        return FrugalBot(seed * 10 + seat) if frugal else make_bot("heuristic", seed * 10 + seat)

    tables = [await start_peer(p, agent(p.seat), lam=LAM) for p in peers]
    tasks = [asyncio.ensure_future(t.run()) for t in tables]
    killed = False
    try:
        async with asyncio.timeout(deadline):
            while not tasks[victim].done():
                if when(tables[victim]):
                    killed = True
                    break
                await asyncio.sleep(0)
        if killed:
            victim_peer = peers[victim]
            tasks[victim].cancel()
            with contextlib.suppress(BaseException):
                await tasks[victim]
            assert victim_peer.mesh is not None
            await victim_peer.mesh.close("killed")
            port = victim_peer.listener.port
            await victim_peer.listener.close()
            await asyncio.sleep(pause)
            victim_peer.listener = await Listener(victim_peer.identity, host="127.0.0.1",
                                                  port=port).start()
            table = await start_peer(victim_peer, agent(victim), lam=LAM)
            tasks[victim] = asyncio.ensure_future(table.run())
        results = await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        for t in tasks:
            t.cancel()
        for p in peers:
            with contextlib.suppress(Exception):
                await finish_peer(p, grace=1.0)
    return list(results), killed


def op_running(name: str) -> Callable[[LockstepTable], bool]:
    """Kill condition: the table's session is in the middle of op ``name``."""

    def when(t: LockstepTable) -> bool:
        cur = t.session.current
        return cur is not None and cur.name == name

    return when

"""LocalSession: the engine, the trusted LocalDealer and bots, all in this process.

This is the table until the p2p layer lands (then every bot becomes a peer over
loopback and a networked session implements the same :class:`cli.table.session.TableSession`).
Bots act on the asyncio loop after a short delay so a human can follow the play; the
delay is 0 in tests and headless runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

from cli.bots import make_bot
from cli.table.narrate import Narrator
from cli.table.save_file import SaveWriter
from cli.table.session import (
    Event,
    EventStream,
    GameOver,
    SeatInfo,
    SessionError,
    StateChanged,
    Status,
)
from engine.actions import RESOLVER, Action, Stolen, VizierChoice, VizierReveals
from engine.dealer import LocalDealer
from engine.driver import Agent
from engine.errors import IllegalAction
from engine.rules import actors, apply, combine_vizier, is_simultaneous, legal_actions
from engine.state import Config, GameState, Phase
from engine.view import PlayerView

LINGER = 3
"""Bot delays to wait after a theft or a Grand Vizier's result (news worth reading)."""


class LocalSession:
    """A whole table in-process. ``seat`` is the human's seat, ``None`` for all-bot games."""

    def __init__(
        self,
        config: Config,
        seats: Sequence[SeatInfo],
        seat: int | None,
        dealer_seed: int,
        bot_delay: float = 0.6,
        save: SaveWriter | None = None,
        agents: Sequence[Agent | None] | None = None,
        hidden_money: bool = False,
    ) -> None:
        if len(seats) != config.players:
            raise ValueError(f"{config.players} players need {config.players} seats")
        self.config = config
        self.seats = list(seats)
        self.seat = seat
        self.dealer_seed = dealer_seed
        self.dealer = LocalDealer(dealer_seed)
        self.state: GameState = GameState(config)
        self.bot_delay = bot_delay
        self.save = save
        #: the table keeps other players' money behind their screens (the UI shows "$?")
        self.hidden_money = hidden_money
        if agents is None:
            agents = [
                None if i == seat else make_bot(info.kind, dealer_seed * 1009 + i)
                for i, info in enumerate(seats)
            ]
        self.agents = list(agents)
        self.log: list[Action] = []
        self.history: list[str] = []
        self.narrator = Narrator(self.names, viewer=seat, hidden_money=hidden_money)
        self._stream = EventStream()
        self._wake = asyncio.Event()
        self._my_vizier: VizierChoice | None = None
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    # --- TableSession ------------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        return [s.name for s in self.seats]

    @property
    def auth_words(self) -> tuple[str, ...] | None:
        return None  # nothing to authenticate: no network

    def view(self) -> PlayerView:
        if self.seat is None:
            return PlayerView(self.state, 0, {})
        return PlayerView(self.state, self.seat, self.dealer.hand(self.state, self.seat))

    def legal(self) -> list[Action]:
        s, me = self.state, self.seat
        if me is None or me not in actors(s):
            return []
        if is_simultaneous(s) and self._my_vizier is not None:
            return []
        return legal_actions(s, me, self.dealer.hand(s, me))

    def waiting_for(self) -> tuple[int, ...]:
        acts = tuple(p for p in actors(self.state) if p != RESOLVER)
        if is_simultaneous(self.state) and self._my_vizier is not None:
            acts = tuple(p for p in acts if p != self.seat)
        return acts

    async def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def play_to_end(self) -> GameState:
        """Run the game in the caller's task (headless: every seat is a bot)."""
        await self._run()
        return self.state

    async def submit(self, action: Action) -> None:
        s, me = self.state, self.seat
        if me is None:
            raise IllegalAction("turn.spectator", "you are watching, not playing")
        if s.phase == Phase.OVER:
            raise IllegalAction("game.over", "the game is over")
        if me not in actors(s):
            who = ", ".join(self.names[p] for p in self.waiting_for()) or "the dealer"
            raise IllegalAction("turn.wait", f"it is not your turn (waiting for {who})")
        if is_simultaneous(s):
            if not isinstance(action, VizierChoice):
                raise IllegalAction("vizier.reveal", "choose how many goods to show first")
            if self._my_vizier is not None:
                raise IllegalAction("vizier.reveal", "you already chose what to show")
            if action not in self.legal():
                raise IllegalAction("vizier.reveal", "show only goods of the Vizier's colour")
            self._my_vizier = action
            self._emit(Status("You chose. Waiting for the others to reveal…"))
            self._wake.set()
            return
        self._commit(action)
        self._wake.set()

    async def events(self) -> AsyncIterator[Event]:
        async for ev in self._stream:
            yield ev

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._task is not None and not self._task.done():
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        if self.save is not None:
            self.save.close()
        self._stream.end()

    # --- the game loop ------------------------------------------------------------------
    def _emit(self, ev: Event) -> None:
        self._stream.put(ev)

    def _commit(self, a: Action) -> None:
        """Check hidden claims, apply, record, narrate. Raises IllegalAction unchanged."""
        s = self.state
        self.dealer.check(s, a)
        before = s.copy()
        me = self.seat
        hb = self.dealer.hand(s, me) if me is not None else None
        apply(s, a)
        self.log.append(a)
        if self.save is not None:
            self.save.append(a)
        ha = self.dealer.hand(s, me) if me is not None else None
        lines = self.narrator.tell(before, a, s, hb, ha)
        self.history.extend(lines)
        self._emit(StateChanged(tuple(lines)))

    async def _bot_choose(self, p: int) -> Action:
        """The bot of seat ``p`` decides in a worker thread, on a copy of the state: a
        search bot may think for a second, and the screen must keep answering keys."""
        s = self.state
        agent = self.agents[p]
        if agent is None:
            raise RuntimeError(f"seat {p} has no bot")
        hand = self.dealer.hand(s, p)
        view = PlayerView(s.copy(), p, dict(hand))
        return await asyncio.to_thread(agent.choose, view, legal_actions(s, p, hand))

    async def _run(self) -> None:
        try:
            await self._loop()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bot or dealer bug must reach the screen, not vanish
            self._emit(SessionError(f"the game stopped: {type(exc).__name__}: {exc}", fatal=True))

    async def _loop(self) -> None:
        s = self.state
        while True:
            acts = actors(s)
            if not acts:
                self._emit(GameOver())
                return
            if acts[0] == RESOLVER:
                if s.phase == Phase.SEED:
                    self._emit(Status("Laying out the tiles and dealing the goods…"))
                resolved = self.dealer.resolve(s)
                self._commit(resolved)
                if s.phase not in (Phase.SEED, Phase.DEAL):
                    self._emit(Status(None))
                await asyncio.sleep(self._linger(resolved))
                continue
            if is_simultaneous(s):
                await self._vizier(acts)
                continue
            p = acts[0]
            if p == self.seat:
                self._wake.clear()
                await self._wake.wait()
                continue
            await asyncio.sleep(self.bot_delay)
            self._commit(await self._bot_choose(p))

    async def _vizier(self, acts: tuple[int, ...]) -> None:
        """The simultaneous reveal: bots decide now, the human through ``submit``."""
        s = self.state
        choices: dict[int, VizierChoice] = {}
        for p in acts:
            if p != self.seat:
                c = await self._bot_choose(p)
                if not isinstance(c, VizierChoice):
                    raise RuntimeError(f"bot {self.names[p]} answered a Vizier with {c!r}")
                choices[p] = c
        if self.seat in acts:
            # the player may have chosen while the bots thought (they think in a thread):
            # that choice stands; it is cleared once taken, below
            while self._my_vizier is None:
                self._wake.clear()
                await self._wake.wait()
            choices[self.seat] = self._my_vizier
            self._my_vizier = None
        await asyncio.sleep(self.bot_delay)
        self._emit(Status(None))
        result = combine_vizier(s, choices)
        self._commit(result)
        await asyncio.sleep(self._linger(result))

    def _linger(self, a: Action) -> float:
        """Extra time after a theft or a Vizier's result, so a player following the log
        reads it before the bots move on (the log keeps it, PgUp, but it should not need
        to)."""
        return LINGER * self.bot_delay if isinstance(a, Stolen | VizierReveals) else 0.0

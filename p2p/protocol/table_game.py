"""The game as the network layer sees it: one object for its rules, its zones and its
resolution script (as OpenSpiel's ``Game``: the table asks it, never the engine's modules).

Why: the lockstep table (:mod:`p2p.table`) plays a turn-based game whose hidden goods live
in a crypto ledger.  All it must know of that game is what this interface says: who acts
now, whether a step is the table's own (settled by crypto ops, the resolution script) or a
simultaneous one, how a move travels (bytes) and is checked and applied, what a seat sees,
how handles map to ledger slots, and the scores.  Silk Road's rules are in ``engine/``, its
zones in :mod:`.zones` and its script in :mod:`.resolution`; :data:`SILK_ROAD` binds them.
Another game with hidden goods would be another object of this shape, and the table would
not change: ``tests/test_import_graph.py`` checks that ``p2p/table/`` imports nothing from
``engine``.  The types below name Silk Road's classes; they are the table's only view of
them.

The agreed config itself (board, variant, first leader) is built from the lobby's params by
:func:`p2p.game.game_config`, which the table's setup calls.
"""

from __future__ import annotations

from typing import Protocol

from engine.actions import RESOLVER, Action, VizierChoice, decode, encode
from engine.game import new_game, scores, winners
from engine.rules import actors, apply, is_simultaneous, legal_actions
from engine.state import Config, GameState
from engine.view import PlayerView

from . import resolution
from .resolution import ClaimScript, Script, Truth
from .zones import COLOUR_OF, ZoneMap

State = GameState
"""A game's state: ``hash()`` (its state hash, what seats acknowledge) and ``copy()``."""
Move = Action
"""A decision or a resolution, applied to a :data:`State` by :meth:`TableGame.apply`."""
View = PlayerView
"""What one seat may see: the public state and its own hidden goods."""
Zones = ZoneMap
"""The game's handles in ledger order, zone by zone (the bag, every hand, set aside)."""

__all__ = ["SILK_ROAD", "Config", "Move", "SilkRoad", "State", "TableGame", "View",
           "Zones"]


class TableGame(Protocol):
    """What :mod:`p2p.table` asks of a game (see the module)."""

    def new_state(self, config: Config) -> State:
        """The state before the first step."""
        ...

    def actors(self, s: State) -> tuple[int, ...]:
        """Who acts now: seats, or the table itself (:meth:`resolves`); empty when over."""
        ...

    def resolves(self, s: State) -> bool:
        """Whether this step is the table's own: the resolution script settles it."""
        ...

    def simultaneous(self, s: State) -> bool:
        """Whether the actors choose at once, privately (settled by one sealed op)."""
        ...

    def step_kind(self, s: State) -> str:
        """A name for the current step's kind (timings, logs)."""
        ...

    def apply(self, s: State, a: Move) -> None:
        """Apply ``a`` to ``s`` (raises if it is not legal now; ``s`` is then unchanged)."""
        ...

    def encode(self, a: Move) -> bytes:
        """A move as the bytes a seat signs."""
        ...

    def decode(self, raw: bytes) -> Move:
        """The move signed as ``raw`` (raises on bytes no move encodes to)."""
        ...

    def check_move(self, s: State, encoded: bytes, in_place: bool) -> tuple[Move, bool]:
        """A seat's signed move, decoded and checked legal now: ``(move, applied)``
        (:func:`p2p.protocol.resolution.check_move`; raises
        :class:`p2p.protocol.resolution.ActionRefused`)."""
        ...

    def legal(self, s: State, seat: int, hand: dict[int, int]) -> list[Move]:
        """The moves ``seat`` may choose, knowing its hidden ``hand``."""
        ...

    def view(self, s: State, seat: int, hand: dict[int, int]) -> View:
        """What ``seat`` decides from."""
        ...

    def scores(self, s: State) -> list[int]:
        """Every seat's score of a finished game."""
        ...

    def winners(self, s: State) -> list[int]:
        """The winning seats of a finished game."""
        ...

    def new_zones(self, players: int) -> Zones:
        """Empty zones for ``players`` seats."""
        ...

    def hand(self, zones: Zones, seat: int, labels: list[str | None]) -> dict[int, int]:
        """``seat``'s hidden goods ``{handle: colour}``, from the labels of its ledger
        slots it can read (None: one it cannot)."""
        ...

    def choice_positions(self, zones: Zones, seat: int, choice: Move) -> list[int]:
        """The ledger positions a simultaneous ``choice`` of ``seat`` reveals."""
        ...

    def check_zones(self, s: State, zones: Zones, public: list[list[str | None]]) -> None:
        """Raise if the zones and the state (and the ledger's public slots) disagree."""
        ...

    def resolve(self, s: State, zones: Zones, truth: Truth, mode: bool | str) -> Script:
        """The resolution script of the table's own step."""
        ...

    def reveal(self, s: State, zones: Zones, deciding: tuple[int, ...]) -> Script:
        """The script of a simultaneous step: the deciding seats' sealed choices."""
        ...

    def claims(self, s: State, zones: Zones, actor: int, a: Move, truth: Truth
               ) -> ClaimScript:
        """The script that opens ``actor``'s hidden claims in ``a`` before it applies."""
        ...


class SilkRoad:
    """Silk Road (the rules of ``engine/``) as a :class:`TableGame`."""

    def new_state(self, config: Config) -> State:
        return new_game(config)

    def actors(self, s: State) -> tuple[int, ...]:
        return actors(s)

    def resolves(self, s: State) -> bool:
        acts = actors(s)
        return bool(acts) and acts[0] == RESOLVER

    def simultaneous(self, s: State) -> bool:
        return is_simultaneous(s)

    def step_kind(self, s: State) -> str:
        return s.phase.name

    def apply(self, s: State, a: Move) -> None:
        apply(s, a)

    def encode(self, a: Move) -> bytes:
        return encode(a)

    def decode(self, raw: bytes) -> Move:
        return decode(raw)

    def check_move(self, s: State, encoded: bytes, in_place: bool) -> tuple[Move, bool]:
        return resolution.check_move(s, encoded, in_place)

    def legal(self, s: State, seat: int, hand: dict[int, int]) -> list[Move]:
        return legal_actions(s, seat, hand)

    def view(self, s: State, seat: int, hand: dict[int, int]) -> View:
        return PlayerView(s, seat, hand)

    def scores(self, s: State) -> list[int]:
        return scores(s)

    def winners(self, s: State) -> list[int]:
        return winners(s)

    def new_zones(self, players: int) -> Zones:
        return ZoneMap(players)

    def hand(self, zones: Zones, seat: int, labels: list[str | None]) -> dict[int, int]:
        return {h: COLOUR_OF[lab] for h, lab in zip(zones.hands[seat], labels, strict=False)
                if lab is not None}

    def choice_positions(self, zones: Zones, seat: int, choice: Move) -> list[int]:
        if not isinstance(choice, VizierChoice):
            raise TypeError(f"a Grand Vizier choice was expected, not {choice!r}")
        return zones.positions(seat, choice.handles)

    def check_zones(self, s: State, zones: Zones, public: list[list[str | None]]) -> None:
        zones.check(s, public)

    def resolve(self, s: State, zones: Zones, truth: Truth, mode: bool | str) -> Script:
        return resolution.resolve(s, zones, truth, mode)

    def reveal(self, s: State, zones: Zones, deciding: tuple[int, ...]) -> Script:
        return resolution.vizier(s, zones, deciding)

    def claims(self, s: State, zones: Zones, actor: int, a: Move, truth: Truth
               ) -> ClaimScript:
        return resolution.claims(s, zones, actor, a, truth)


SILK_ROAD: TableGame = SilkRoad()
"""The game every table plays."""

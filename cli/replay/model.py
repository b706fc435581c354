"""The replay model: a game as a sequence of states plus who knew which colours.

Built today from a save file by re-running the LocalDealer from the recorded seed
(which reproduces every hidden colour, so the auditor's view is complete). A p2p
transcript will feed the same model: its states come from replaying the signed
actions, each seat's hand from that seat's own secrets, and the auditor's colours
from the published keys after the game.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cli.table.narrate import Narrator
from cli.table.save_file import SavedGame
from engine.actions import RESOLVER, Action
from engine.dealer import LocalDealer
from engine.errors import IllegalAction
from engine.rules import actors, apply
from engine.state import GameState

AUDITOR = None
"""The viewer ``None`` is the auditor: every colour, in hands and in the bag."""


class ReplayError(ValueError):
    """The record cannot be replayed (an illegal step, or it does not match its seed)."""


@dataclass
class ReplayModel:
    names: list[str]
    kinds: list[str]
    states: list[GameState]  # states[0]: before the first action; states[i]: after action i-1
    actions: list[Action]
    hands: list[list[dict[int, int]]]  # hands[i][seat]: that seat's own colours at step i
    colours: list[dict[int, int]] | None  # the auditor's colours at step i (None: unknown)
    complete: bool  # the game reached its end
    #: the table kept money behind the screens (``--money hidden``): a seat's view shows
    #: and tells what that seat saw at the table; the auditor's view shows everything
    hidden_money: bool = False

    def __len__(self) -> int:
        return len(self.states)

    @property
    def players(self) -> int:
        return len(self.names)

    def seat_of(self, who: str) -> int:
        """A seat from a number or a (prefix of a) name."""
        if who.isdigit() and 0 <= int(who) < self.players:
            return int(who)
        hits = [i for i, n in enumerate(self.names) if n.lower().startswith(who.lower())]
        if len(hits) == 1:
            return hits[0]
        raise ValueError(
            f"no single seat matches {who!r}; seats: "
            + ", ".join(f"{i} {n}" for i, n in enumerate(self.names))
        )

    def hides_money(self, viewer: int | None) -> bool:
        """Whether ``viewer``'s view keeps the other seats' money behind their screens:
        a seat's view of a hidden-money table (the auditor sees every amount)."""
        return self.hidden_money and viewer is not None

    def hand(self, step: int, viewer: int | None) -> dict[int, int]:
        """What ``viewer`` sees of goods colours at ``step`` (all of them for the auditor)."""
        if viewer is None:
            return dict(self.colours[step]) if self.colours is not None else {}
        return dict(self.hands[step][viewer])

    def lines(self, step: int, viewer: int | None) -> list[str]:
        """What happened in the action that led to ``step``, told to ``viewer``."""
        if step == 0:
            return ["The table is set."]
        n = Narrator(self.names, viewer, hidden_money=self.hides_money(viewer))
        hb = self.hands[step - 1][viewer] if viewer is not None else None
        ha = self.hands[step][viewer] if viewer is not None else None
        return n.tell(self.states[step - 1], self.actions[step - 1], self.states[step], hb, ha)

    def all_lines(self, viewer: int | None) -> list[str]:
        out: list[str] = []
        for i in range(1, len(self.states)):
            out.extend(self.lines(i, viewer))
        return out


def build_replay(game: SavedGame) -> ReplayModel:
    """Re-run the game and its dealer; every resolver step must match the record."""
    h = game.header
    dealer = LocalDealer(h.dealer_seed)
    s = GameState(game.config)
    states = [s.copy()]
    n = s.players
    hands: list[list[dict[int, int]]] = [[{} for _ in range(n)]]
    colours: list[dict[int, int]] = [{}]
    for i, a in enumerate(game.actions):
        acts = actors(s)
        if not acts:
            raise ReplayError(f"the record goes on after the game ended (step {i})")
        if acts[0] == RESOLVER:
            expected = dealer.resolve(s)
            if expected != a:
                raise ReplayError(
                    f"step {i}: the record does not match its dealer seed {h.dealer_seed}"
                )
        try:
            dealer.check(s, a)
            apply(s, a)
        except IllegalAction as exc:
            raise ReplayError(f"step {i} is illegal: {exc.message}") from None
        states.append(s.copy())
        hands.append([dealer.hand(s, p) for p in range(n)])
        live = [x for p in range(n) for x in s.goods[p]] + list(s.bag)
        colours.append({x: dealer.colour[x] for x in live if x in dealer.colour})
    return ReplayModel(
        names=list(h.names),
        kinds=list(h.kinds),
        states=states,
        actions=list(game.actions),
        hands=hands,
        colours=colours,
        complete=not actors(s),
    )


def seat_labels(model: ReplayModel) -> Sequence[str]:
    return [f"{i} {n}" for i, n in enumerate(model.names)]

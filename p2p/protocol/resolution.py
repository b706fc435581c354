"""The resolution script: which crypto ops each engine step runs, which claims they check,
and which engine action results — written once, driven live and offline.

At a networked table nobody is omniscient, so every ``RESOLVER`` step, every hidden claim
and every Grand Vizier reveal is settled by crypto ops (:class:`crypto.session.TokenSession`)
that every peer runs in the same order.  The script below is that order.  It is a
generator: it yields an :class:`OpCall` for each op and receives the op's result back, so
that its two drivers only differ in where results come from:

* the live table (:class:`p2p.table.resolver.NetResolver`) starts each op on its session and
  awaits the other peers' messages;
* the offline audit and the replay viewer (:class:`p2p.judge.engine_replay.EngineReplay`) take the
  next completed op of the transcript and check that it is the op the script asks for.

A false claim, an all-or-nothing withdraw that took only some goods, or an op that is not
the one the script expects raises :class:`crypto.errors.CheatDetected` in both drivers
alike (the live table stops with it; the audit reports it).

Ops, by engine phase:

* SEED → ``coinflip`` → ``Seed(coin[:32])``;
* DEAL → ``keys`` then ``deal`` of 15 tokens of each colour label, 3 each → ``Dealt``;
* WITHDRAW → ``withdraw`` (grouped by label; all-or-nothing unless a Buyer or the Grand
  Vizier's marker); on a successful Trader/Exchange the given goods are opened (their
  claimed colours checked) and returned to the bag; the Vizier's marker is the withdraw of
  one good of its colour by the Vizier's player, exactly a purchase of one (so its proof
  and what it shows are a purchase's: whether the bag held one), then, if one was taken,
  ``aside`` (announced by that player) moves it out of play → ``Withdrawn(handles in
  request order)``;
* STEAL → ``steal`` → ``Stolen(index)``;
* REVEAL → ``open`` every non-empty hand → ``FinalReveal``;
* Grand Vizier → one ``sealed`` op carrying each deciding seat's private choice;
* Sell claims → ``open`` the sold goods, check the tile colour, ``return`` them to the bag.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, Protocol

from crypto.errors import CheatDetected
from crypto.protocols.base import Body
from crypto.session import TokenSession
from crypto.shuffle import AUDIT_LAST_PROVEN
from engine.actions import (
    Action,
    Dealt,
    FinalReveal,
    Seed,
    Sell,
    Stolen,
    VizierReveals,
    Withdrawn,
    decode,
)
from engine.errors import DecodeError, IllegalAction
from engine.rules import apply
from engine.state import BUY, MARKER, TRADE, GameState, Phase

from .zones import COLOUR_OF, DECK_SPEC, LABEL_OF, ZoneMap, group_request

SEED_PURPOSE = "silkroad/seed"
LAST_PROVEN_SINCE = 4
"""The protocol version from which an audit-mode deal proves its last shuffle."""


@dataclass(frozen=True)
class OpCall:
    """One crypto op the script asks for.

    ``args`` are the op's arguments exactly as the session records them (the offline
    driver compares them with the transcript's op, so a transcript cannot substitute
    another op, nor a deal in another shuffle mode than the table agreed); ``deciding``
    (the seats that choose privately in a ``sealed`` reveal) is only needed live."""

    name: str
    args: tuple[Any, ...] = ()
    deciding: tuple[int, ...] = ()

    def start(self, session: TokenSession, choice: list[int] | None = None) -> list[Body]:
        """Start this op on a live session (``choice``: our private positions, sealed)."""
        return _STARTERS[self.name](session, self, choice or [])

    def mismatch(self, name: str, recorded: list[Any]) -> str | None:
        """Why an op of the transcript is not this one (None if it is)."""
        if name != self.name:
            return f"expects op {self.name}, transcript has {name}"
        if list(recorded[:len(self.args)]) != list(self.args):
            return (f"expects op {self.name} with arguments {list(self.args)!r:.200}, "
                    f"transcript has {list(recorded)!r:.200}")
        return None


_STARTERS: dict[str, Callable[[TokenSession, OpCall, list[int]], list[Body]]] = {
    "coinflip": lambda ses, c, _ch: ses.coin_flip(c.args[0]),
    "keys": lambda ses, _c, _ch: ses.setup_keys(),
    "deal": lambda ses, c, _ch: ses.deal(DECK_SPEC, c.args[1], c.args[2] is True,
                                         last_proven=c.args[2] == AUDIT_LAST_PROVEN),
    "withdraw": lambda ses, c, _ch: ses.withdraw(c.args[0], [(lab, k) for lab, k in c.args[1]],
                                                 all_or_nothing=c.args[2]),
    "steal": lambda ses, c, _ch: ses.steal(c.args[0], c.args[1]),
    "open": lambda ses, c, _ch: ses.open(c.args[0], c.args[1]),
    "return": lambda ses, c, _ch: ses.return_to_bag(c.args[0], c.args[1]),
    "aside": lambda ses, c, _ch: ses.set_aside(c.args[0], c.args[1]),
    "sealed": lambda ses, c, choice: ses.sealed_reveal(c.args[0], choice),
}
"""How each op the script uses is started on a live session (an explicit table, so a
reader finds every caller)."""


def deal_mode(shuffle_mode: str, version: int) -> bool | str:
    """The deal's shuffle mode as the session records it: ``True`` for verified (TW
    proofs); for audit mode, since protocol version 4, the last shuffle is TW-proven
    (:data:`crypto.shuffle.AUDIT_LAST_PROVEN`: else the last shuffler could output a layout
    it chose and know every hand), before that plain ``False``."""
    if shuffle_mode == "verified":
        return True
    return AUDIT_LAST_PROVEN if version >= LAST_PROVEN_SINCE else False


class OpResult(Protocol):
    """What a driver hands back for an op: its public result, and a hook the script calls
    once its zone map reflects the op (the audit then learns every token's true colour;
    live, nobody can)."""

    @property
    def result(self) -> dict[str, Any]: ...

    def learned(self) -> None: ...


Truth = Callable[[int], int | None]
"""The true colour of a handle where the driver knows it (the audit, once the secrets are
published), else None."""

Script = Generator[OpCall, OpResult, Action]
ClaimScript = Generator[OpCall, OpResult, None]


def resolve(s: GameState, zones: ZoneMap, truth: Truth, mode: bool | str) -> Script:
    """The script of one ``RESOLVER`` step (``mode``: the deal's, :func:`deal_mode`)."""
    ph = s.phase
    if ph == Phase.SEED:
        res = yield OpCall("coinflip", (SEED_PURPOSE,))
        return Seed(bytes(res.result["coin"][:32]))
    if ph == Phase.DEAL:
        yield OpCall("keys")
        k = s.config.goods_each
        spec = [[lab, c] for lab, c in DECK_SPEC]
        res = yield OpCall("deal", (spec, k, mode))
        zones.dealt(k)
        res.learned()
        return Dealt()
    if ph == Phase.WITHDRAW:
        return (yield from _withdraw(s, zones, truth))
    if ph == Phase.STEAL:
        thief, victim = s.actor, s.steal_victim
        res = yield OpCall("steal", (thief, victim))
        index = res.result["index"]
        zones.stolen(thief, victim, index, s.next_handle)
        res.learned()
        return Stolen(index)
    if ph == Phase.REVEAL:
        colours: list[tuple[int, ...]] = []
        for p in range(s.players):
            if not s.goods[p]:
                colours.append(())
                continue
            handles = list(zones.hands[p])
            res = yield OpCall("open", (p, list(range(len(handles)))))
            res.learned()
            by_handle = {h: COLOUR_OF[lab] for h, lab in zip(handles, res.result["labels"],
                                                              strict=True)}
            for h, c in by_handle.items():
                if truth(h) not in (None, c):
                    raise CheatDetected(p, "reveal-mismatch", f"good #{h}")
            colours.append(tuple(by_handle[h] for h in s.goods[p]))
        return FinalReveal(tuple(colours))
    raise CheatDetected(None, "engine", f"unexpected resolver phase {ph.name}")


def _withdraw(s: GameState, zones: ZoneMap, truth: Truth) -> Script:
    assert s.pending is not None
    purpose, request, partial = s.pending
    actor = s.actor
    reqs = group_request(request)
    res = yield OpCall("withdraw", (actor, [[lab, k] for lab, k in reqs], not partial))
    per_req = zones.withdrawn(actor, res.result["taken"])
    res.learned()
    pools = {lab: list(hs) for (lab, _k), hs in zip(reqs, per_req, strict=True)}
    got: list[int] = []
    for c in request:
        pool = pools[LABEL_OF[c]]
        if not pool:
            break
        got.append(pool.pop(0))
    if not partial and len(got) != len(request):
        if got:
            raise CheatDetected(actor, "withdraw-inconsistent",
                                "an all-or-nothing withdraw took some")
        got = []
    if got and purpose == MARKER:
        # the marker goes to nobody: out of the taker's hand, out of play
        positions = zones.positions(actor, got)
        res = yield OpCall("aside", (actor, positions))
        zones.set_aside(actor, positions)
        res.learned()
    elif got and purpose != BUY:
        tile = s.tile
        assert tile is not None
        if purpose == TRADE:
            give, claimed = tuple(s.trade_give), tuple(tile.give)
        else:
            give = tuple(p[0] for p in s.pairs)
            claimed = tuple(p[1] for p in s.pairs)
        yield from _open_claim(actor, give, claimed, "give", zones, truth)
    return Withdrawn(tuple(got))


def _open_claim(seat: int, handles: tuple[int, ...], claimed: tuple[int, ...], what: str,
                zones: ZoneMap, truth: Truth) -> ClaimScript:
    """Open ``handles`` of ``seat``, check the claimed colours, return them to the bag."""
    positions = zones.positions(seat, handles)
    res = yield OpCall("open", (seat, positions))
    res.learned()
    for h, c, lab in zip(handles, claimed, res.result["labels"], strict=True):
        real = truth(h)
        if lab != LABEL_OF[c] or real not in (None, c):
            actual = lab if lab != LABEL_OF[c] or real is None else LABEL_OF[real]
            raise CheatDetected(seat, "false-claim",
                                f"seat {seat} claimed good #{h} ({what}) is {LABEL_OF[c]} "
                                f"but it is {actual}")
    yield OpCall("return", (seat, positions))
    zones.returned(seat, positions)


def claims(s: GameState, zones: ZoneMap, actor: int, a: Action, truth: Truth) -> ClaimScript:
    """The script that verifies a player's hidden claims before its action applies."""
    if isinstance(a, Sell):
        tile = s.tile
        assert tile is not None
        yield from _open_claim(actor, a.handles, (tile.colour,) * len(a.handles), "sold",
                               zones, truth)


def vizier(s: GameState, zones: ZoneMap, deciding: tuple[int, ...]) -> Script:
    """The script of a Grand Vizier step: one sealed reveal of the deciding seats' goods."""
    res = yield OpCall("sealed", (LABEL_OF[s.vizier_colour],), deciding=deciding)
    res.learned()
    revealed = res.result["revealed"]
    return VizierReveals(tuple(tuple(zones.hands[p][i] for i in revealed[p])
                               for p in range(s.players)))


class ActionRefused(Exception):
    """A seat's move that does not decode or is not legal now (refused, never applied)."""


def check_move(s: GameState, encoded: bytes, in_place: bool) -> tuple[Action, bool]:
    """Decode a seat's move and check that it is legal now; returns ``(action, applied)``.

    A move with hidden claims (Sell) is only tried on a copy: its claims are opened before
    it applies.  Any other move is applied to ``s`` itself when ``in_place`` (the engine
    leaves the state untouched when it refuses), saving a state copy per move."""
    try:
        a = decode(encoded)
        if isinstance(a, Sell) or not in_place:
            apply(s.copy(), a)
            return a, False
        apply(s, a)
        return a, True
    except (DecodeError, IllegalAction) as exc:
        raise ActionRefused(str(exc)) from exc

"""The cryptographic resolver: engine RESOLVER steps and hidden claims via TokenSession ops.

This replaces :class:`engine.dealer.LocalDealer` at a networked table.  Every peer runs the
same ops in the same order (the engine state decides which), so nobody is omniscient:

* SEED → ``coin_flip`` → ``Seed(coin[:32])``;
* DEAL → ``setup_keys`` then ``deal`` of 15 tokens of each colour label, 3 each → ``Dealt``;
* WITHDRAW → ``withdraw`` (grouped by label; all-or-nothing unless a Buyer); on a successful
  Trader/Exchange the given goods are opened (their claimed colours checked) and returned
  to the bag → ``Withdrawn(handles in request order)``;
* STEAL → ``steal`` → ``Stolen(index)``;
* REVEAL → ``open`` every non-empty hand → ``FinalReveal``;
* Grand Vizier → one ``sealed`` op carrying each deciding seat's private choice;
* Sell claims → ``open`` the sold goods, check the tile colour, ``return_to_bag``.

A false claim stops the table naming the claimant.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from engine.actions import (
    Action,
    Dealt,
    FinalReveal,
    Seed,
    Sell,
    Stolen,
    VizierChoice,
    VizierReveals,
    Withdrawn,
)
from engine.state import BUY, TRADE, Phase

from .zones import COLOUR_OF, DECK_SPEC, LABEL_OF, group_request

if TYPE_CHECKING:
    from .lockstep import Table


class NetResolver:
    """Resolves through the table's TokenSession (see the module docstring)."""

    def __init__(self, table: Table) -> None:
        self.t = table

    async def resolve(self) -> Action:
        t = self.t
        s = t.state
        ses = t.session
        ph = s.phase
        if ph == Phase.SEED:
            op = await t.op(lambda: ses.coin_flip("silkroad/seed"), "coinflip")
            return Seed(bytes(op.result["coin"][:32]))
        if ph == Phase.DEAL:
            await t.op(ses.setup_keys, "keys")
            k = s.config.goods_each
            verified = t.setup.shuffle_mode == "verified"
            await t.op(lambda: ses.deal(DECK_SPEC, k, verified), "deal")
            t.zones.dealt(k)
            return Dealt()
        if ph == Phase.WITHDRAW:
            return await self._withdraw()
        if ph == Phase.STEAL:
            thief, victim = s.actor, s.steal_victim
            op = await t.op(lambda: ses.steal(thief, victim), "steal")
            index = op.result["index"]
            t.zones.stolen(thief, victim, index, s.next_handle)
            return Stolen(index)
        if ph == Phase.REVEAL:
            colours: list[tuple[int, ...]] = []
            for p in range(s.players):
                if not s.goods[p]:
                    colours.append(())
                    continue
                handles = list(t.zones.hands[p])
                everything = list(range(len(handles)))
                op = await t.op(functools.partial(ses.open, p, everything), "open")
                by_handle = {h: COLOUR_OF[lab] for h, lab in zip(handles, op.result["labels"],
                                                                  strict=True)}
                colours.append(tuple(by_handle[h] for h in s.goods[p]))
            return FinalReveal(tuple(colours))
        raise RuntimeError(f"nothing to resolve in {ph.name}")

    async def _withdraw(self) -> Action:
        t = self.t
        s = t.state
        assert s.pending is not None
        purpose, request, partial = s.pending
        actor = s.actor
        reqs = group_request(request)
        op = await t.op(lambda: t.session.withdraw(actor, reqs, all_or_nothing=not partial),
                        "withdraw")
        taken = op.result["taken"]
        per_req = t.zones.withdrawn(actor, taken)
        pools = {lab: list(hs) for (lab, _k), hs in zip(reqs, per_req, strict=True)}
        got: list[int] = []
        for c in request:
            pool = pools[LABEL_OF[c]]
            if not pool:
                break
            got.append(pool.pop(0))
        if not partial and len(got) != len(request):
            if got:
                raise t.stop(actor, "withdraw-inconsistent", "an all-or-nothing withdraw took some")
            got = []
        if got and purpose != BUY:
            tile = s.tile
            assert tile is not None
            if purpose == TRADE:
                give, claimed = tuple(s.trade_give), tuple(tile.give)
            else:
                give = tuple(p[0] for p in s.pairs)
                claimed = tuple(p[1] for p in s.pairs)
            await self._open_claim(actor, give, claimed, "give")
        return Withdrawn(tuple(got))

    async def _open_claim(self, seat: int, handles: tuple[int, ...], claimed: tuple[int, ...],
                          what: str) -> None:
        """Open ``handles`` of ``seat``, check the claimed colours, return them to the bag."""
        t = self.t
        positions = t.zones.positions(seat, handles)
        op = await t.op(lambda: t.session.open(seat, positions), "open")
        labels = op.result["labels"]
        for h, c, lab in zip(handles, claimed, labels, strict=True):
            if lab != LABEL_OF[c]:
                raise t.stop(seat, "false-claim",
                       f"seat {seat} claimed good #{h} ({what}) is {LABEL_OF[c]} but it is {lab}")
        await t.op(lambda: t.session.return_to_bag(seat, positions), "return")
        t.zones.returned(seat, positions)

    async def check_claims(self, actor: int, a: Action) -> None:
        """Verify a player's hidden claims before the action is applied."""
        if isinstance(a, Sell):
            tile = self.t.state.tile
            assert tile is not None
            await self._open_claim(actor, a.handles, (tile.colour,) * len(a.handles), "sold")

    async def vizier(self, deciding: tuple[int, ...]) -> Action:
        t = self.t
        s = t.state
        label = LABEL_OF[s.vizier_colour]
        positions: list[int] = []
        if t.me in deciding and not t.op_started():
            choice = await t.decide()
            assert isinstance(choice, VizierChoice)
            positions = t.zones.positions(t.me, choice.handles)
        op = await t.op(lambda: t.session.sealed_reveal(label, positions), "sealed")
        revealed = op.result["revealed"]
        reveals = tuple(tuple(t.zones.hands[p][i] for i in revealed[p])
                        for p in range(s.players))
        return VizierReveals(reveals)

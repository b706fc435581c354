"""Engine handles ↔ crypto ledger slots, kept in lockstep with the token ledger.

The engine names goods by *handles*; the crypto ledger keeps ordered *zones* of ciphertexts
(bag = -1, hand p = p, set aside = -2: the Grand Vizier's markers, out of play).  Their
orders differ (e.g. a withdraw appends grouped by label while the engine appends in request
order), so instead of assuming positions line up we mirror every ledger move on a parallel
list of handles.  The same class is used by the live table
and by the offline audit, so both agree on which handle each opened token is.
"""

from __future__ import annotations

from crypto.ledger import ASIDE
from engine.colours import COLOURS, GOODS_PER_COLOUR, NCOLOURS, TOTAL_GOODS
from engine.state import GameState

BAG = -1
DECK_SPEC: list[tuple[str, int]] = [(c, GOODS_PER_COLOUR) for c in COLOURS]
"""The 75 tokens: 15 of each colour label (labels are the engine's colour names)."""
LABEL_OF = dict(enumerate(COLOURS))
COLOUR_OF = {c: i for i, c in enumerate(COLOURS)}


class ZoneError(Exception):
    """The handle mapping and the engine or the ledger disagree (a bug, never a cheat)."""


def group_request(colours: tuple[int, ...]) -> list[tuple[str, int]]:
    """Engine request colours → crypto withdraw requests (distinct labels, first-seen order)."""
    counts: dict[int, int] = {}
    for c in colours:
        if not 0 <= c < NCOLOURS:
            raise ZoneError(f"unknown colour {c}")
        counts[c] = counts.get(c, 0) + 1
    return [(COLOURS[c], k) for c, k in counts.items()]


class ZoneMap:
    """Parallel lists of handles for the bag, every hand and the goods set aside, in
    ledger order.  ``aside`` only names what the audit decrypts there (the engine keeps
    the colours set aside, not handles): nothing live reads it, so a resumed table, whose
    snapshot keeps the bag and the hands, may start it afresh."""

    def __init__(self, players: int) -> None:
        self.players = players
        self.bag: list[int] = []
        self.hands: list[list[int]] = [[] for _ in range(players)]
        self.aside: list[int] = []

    def copy(self) -> ZoneMap:
        z = ZoneMap(self.players)
        z.bag = list(self.bag)
        z.hands = [list(h) for h in self.hands]
        z.aside = list(self.aside)
        return z

    def zone(self, z: int) -> list[int]:
        if z == ASIDE:
            return self.aside
        return self.bag if z == BAG else self.hands[z]

    def positions(self, z: int, handles: tuple[int, ...] | list[int]) -> list[int]:
        """Ledger positions of ``handles`` in zone ``z`` (in the given order)."""
        lst = self.zone(z)
        try:
            return [lst.index(h) for h in handles]
        except ValueError:
            raise ZoneError(f"handles {list(handles)} not all in zone {z}") from None

    # --- mirrors of ledger moves ---------------------------------------------------------
    def dealt(self, per_party: int) -> None:
        """Deal: hand p = positions p·k…p·k+k−1 of the final deck, the rest is the bag."""
        n, k = self.players, per_party
        self.hands = [list(range(p * k, (p + 1) * k)) for p in range(n)]
        self.bag = list(range(n * k, TOTAL_GOODS))

    def withdrawn(self, taker: int, taken: list[list[int]]) -> list[list[int]]:
        """Withdraw: ``taken`` bag positions (pre-op numbering) per request; returns handles."""
        pre = list(self.bag)
        flat = [i for pos in taken for i in pos]
        for i in sorted(flat, reverse=True):
            del self.bag[i]
        out = [[pre[i] for i in pos] for pos in taken]
        for hs in out:
            self.hands[taker].extend(hs)
        return out

    def returned(self, party: int, positions: list[int]) -> None:
        hand = self.hands[party]
        moved = [hand[i] for i in positions]
        for i in sorted(positions, reverse=True):
            del hand[i]
        self.bag.extend(moved)

    def set_aside(self, party: int, positions: list[int]) -> None:
        """The ``aside`` op: these positions of the party's hand leave play."""
        hand = self.hands[party]
        moved = [hand[i] for i in positions]
        for i in sorted(positions, reverse=True):
            del hand[i]
        self.aside.extend(moved)

    def stolen(self, thief: int, victim: int, index: int, next_handle: int) -> None:
        """Steal: the victim's goods get fresh handles in re-shuffled order; one moves."""
        fresh = list(range(next_handle, next_handle + len(self.hands[victim])))
        taken = fresh.pop(index)
        self.hands[victim] = fresh
        self.hands[thief].append(taken)

    # --- consistency ----------------------------------------------------------------------
    def check(self, s: GameState, public: list[list[str | None]] | None = None) -> None:
        """Raise :class:`ZoneError` unless the mapping holds exactly the engine's goods.

        ``public`` (per hand, the ledger's public labels) must agree with what the engine
        knows publicly about each of those handles.
        """
        if sorted(self.bag) != sorted(s.bag):
            raise ZoneError("bag handles differ from the engine's bag")
        for p in range(self.players):
            if sorted(self.hands[p]) != sorted(s.goods[p]):
                raise ZoneError(f"seat {p}: handles {self.hands[p]} vs engine {s.goods[p]}")
            if public is not None:
                if len(public[p]) != len(self.hands[p]):
                    raise ZoneError(f"seat {p}: ledger holds {len(public[p])} tokens")
                for h, lab in zip(self.hands[p], public[p], strict=True):
                    c = s.known.get(h)
                    if c is not None and lab is not None and LABEL_OF[c] != lab:
                        raise ZoneError(f"good #{h}: engine knows {LABEL_OF[c]}, ledger {lab}")

"""Public zones of ciphertexts: the bag, one ordered hand per party, and the tokens set aside.

Every peer holds an identical ledger (it is derived only from signed messages), so the
network layer can keep its engine handles in the same order as these lists. Each slot also
carries the label if it is *publicly* known (opened, withdrawn by label, sealed-revealed),
else ``None``. Private knowledge (labels of *my* hidden tokens) lives in the session.

Zone ids: ``BAG = -1``; hand of party ``p`` is zone ``p``; ``ASIDE = -2``: tokens that left
play for good (the ``aside`` op; Silk Road's Grand Vizier markers), publicly labelled, in
no hand and never withdrawn again, still counted by the audit's conservation check.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .elgamal import Ciphertext
from .errors import MalformedInput

BAG = -1
ASIDE = -2


@dataclass
class Slot:
    """One token in a zone: ciphertext, public label (if any) and *this* peer's knowledge.

    ``known`` is private to the local party (not part of the shared state): the label this
    party knows for the slot (its own hidden tokens, tokens it returned, stole...).
    """

    ct: Ciphertext
    public: str | None = None
    known: str | None = None

    def label(self) -> str | None:
        """Best local knowledge: the public label, else the private one."""
        return self.public if self.public is not None else self.known


@dataclass
class Ledger:
    """The bag, the hands and the tokens set aside, as ordered lists of :class:`Slot`."""

    n: int
    bag: list[Slot] = field(default_factory=list)
    hands: list[list[Slot]] = field(default_factory=list)
    aside: list[Slot] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.hands:
            self.hands = [[] for _ in range(self.n)]

    def zone(self, z: int) -> list[Slot]:
        """The list backing zone ``z`` (validated)."""
        if isinstance(z, bool) or not isinstance(z, int) or not ASIDE <= z < self.n:
            raise MalformedInput(f"unknown zone {z!r}")
        if z == ASIDE:
            return self.aside
        return self.bag if z == BAG else self.hands[z]

    def zone_ids(self) -> list[int]:
        """Every zone: the bag, the hands, then the tokens set aside."""
        return [BAG, *range(self.n), ASIDE]

    def check_positions(self, z: int, positions: Sequence[int], distinct: bool = True) -> None:
        """Raise :class:`MalformedInput` unless every position exists in zone ``z``."""
        size = len(self.zone(z))
        if not isinstance(positions, list | tuple):
            raise MalformedInput("positions must be a list")
        for p in positions:
            if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p < size:
                raise MalformedInput(f"position {p!r} out of range for zone {z} of size {size}")
        if distinct and len(set(positions)) != len(positions):
            raise MalformedInput("positions must be distinct")

    def remove(self, z: int, positions: Sequence[int]) -> list[Slot]:
        """Remove positions (given in the pre-removal numbering) and return them in that order."""
        self.check_positions(z, positions)
        lst = self.zone(z)
        taken = [lst[p] for p in positions]
        for p in sorted(positions, reverse=True):
            del lst[p]
        return taken

    def tokens(self, z: int) -> list[Ciphertext]:
        """Ciphertexts of a zone in order."""
        return [s.ct for s in self.zone(z)]

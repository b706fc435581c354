"""Typed commands (``bid 3``, ``take seller``, ``exchange silk>spice``) to engine actions.

The parser only ever returns one of the current legal actions; anything else is a
:class:`CommandError` whose message says, in one line, what is possible instead.
The completer offers the canonical commands of the legal actions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from cli.table.choices import Choice, choices_for, slug
from cli.theme import tile_name
from engine.actions import Action, Bid, ExchangePair, TakeTile
from engine.colours import COLOURS
from engine.state import Phase
from engine.view import PlayerView

ALIASES = {
    "go": "move",
    "show": "reveal",
    "no": "decline",
    "skip": "decline",
    "stop": "decline",
    "finish": "done",
    "pawn": "give",
    "selllead": "sell-lead",
    "sell_lead": "sell-lead",
    "keeplead": "keep",
    "keep-lead": "keep",
    "barter": "barterer",
    "rob": "steal",
    "ex": "exchange",
}
META = ("help", "quit", "abandon", "city", "say")
VERB_PHRASE = {
    "done": "finish an exchange",
    "keep": "keep the lead",
    "sell-lead": "sell the lead",
    "give": "pass the pawn",
    "move": "move the caravan",
    "take": "take a tile",
    "reveal": "show goods to a Grand Vizier",
    "vizier": "call a Grand Vizier",
    "crook": "play a Crook",
    "barterer": "play a Barterer",
    "decline": "decline anything",
}
"""How "you cannot … now" reads for verbs that are not a verb phrase on their own."""
LETTER = {"i": 0, "s": 1, "f": 2, "j": 3, "p": 4}


class CommandError(ValueError):
    """A command that is mistyped or not allowed now; the message is shown as is."""


def _norm(text: str) -> list[str]:
    t = text.strip().lower().replace("→", ">").replace("->", ">")
    t = re.sub(r"\s*>\s*", ">", t)
    return t.split()


def colour_of(word: str) -> int:
    """A goods colour from a name, a unique prefix, or the map's letter (I S F J P)."""
    w = word.strip().lower()
    if w in LETTER:
        return LETTER[w]
    hits = [i for i, c in enumerate(COLOURS) if c.startswith(w)]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise CommandError(f"'{word}' is not a goods colour ({', '.join(COLOURS)})")
    raise CommandError(f"'{word}' could be {' or '.join(COLOURS[i] for i in hits)}")


def _int(word: str | None, what: str, example: str) -> int:
    if word is None:
        raise CommandError(f"{what}? e.g. {example}")
    try:
        return int(word)
    except ValueError:
        raise CommandError(f"'{word}' is not a number; e.g. {example}") from None


def _range(nums: Iterable[int]) -> str:
    xs = sorted(nums)
    if not xs:
        return "none"
    return str(xs[0]) if len(xs) == 1 else f"{xs[0]}..{xs[-1]}"


class CommandParser:
    """Parses against one snapshot of (view, legal actions)."""

    def __init__(self, view: PlayerView, legal: Sequence[Action], names: Sequence[str]) -> None:
        self.view = view
        self.legal = list(legal)
        self.names = list(names)
        self.choices: list[Choice] = choices_for(view, self.legal, self.names)

    def verbs(self) -> list[str]:
        seen: list[str] = []
        for c in self.choices:
            v = c.command.split()[0]
            if v not in seen:
                seen.append(v)
        return seen

    def commands(self) -> list[Choice]:
        return self.choices

    def parse(self, text: str) -> Action:
        words = _norm(text)
        if not words:
            raise CommandError("type a command, or pick from the menu with its number")
        verb, args = words[0], words[1:]
        if verb == "sell" and args[:1] in (["lead"], ["the"]):
            verb, args = "sell-lead", []
        if verb == "pass" and self.view.state.phase == Phase.PASS:
            verb = "give"
            args = [a for a in args if a != "to"]
        verb = ALIASES.get(verb, verb)
        known = {c.command.split()[0] for c in self.choices} | {
            "pass", "bid", "sell-lead", "keep", "move", "take", "barterer", "give", "decline",
            "sell", "buy", "trade", "exchange", "done", "steal", "vizier", "reveal", "crook",
        }
        if verb not in known:
            raise CommandError(f"unknown command '{words[0]}'; {self._can()}")
        cands = [c for c in self.choices if c.command.split()[0] == verb]
        if not cands:
            if not self.legal:
                raise CommandError("it is not your turn")
            raise CommandError(f"you cannot {VERB_PHRASE.get(verb, verb)} now; {self._can()}")
        handler = getattr(self, "_" + verb.replace("-", "_"), None)
        if handler is None or (not args and len(cands) == 1):
            if len(cands) == 1:
                return cands[0].action
        if handler is None:
            return cands[0].action
        action: Action = handler(args, cands)
        return action

    def _can(self) -> str:
        vs = self.verbs()
        return ("you can: " + ", ".join(vs)) if vs else "it is not your turn"

    # --- per verb ---------------------------------------------------------------------
    def _bid(self, args: list[str], cands: list[Choice]) -> Action:
        s = self.view.state
        amounts = [c.action.amount for c in cands if isinstance(c.action, Bid)]
        n = _int(args[0] if args else None, "bid how much", f"bid {min(amounts)}")
        for c in cands:
            if c.action == Bid(n):
                return c.action
        if n <= s.high_bid:
            raise CommandError(f"a bid must beat {s.high_bid}: bid {_range(amounts)}")
        raise CommandError(f"you have ${s.money[self.view.seat]}: bid {_range(amounts)}")

    def _counted(self, verb: str, args: list[str], cands: list[Choice], unit: str) -> Action:
        nums = {int(c.command.split()[1]): c for c in cands}
        lo = min(nums)
        k = _int(args[0] if args else None, f"{verb} how many", f"{verb} {lo}")
        if k in nums:
            return nums[k].action
        raise CommandError(f"you can {verb} {_range(nums)} {unit}")

    def _sell(self, args: list[str], cands: list[Choice]) -> Action:
        return self._counted("sell", args, cands, "")

    def _buy(self, args: list[str], cands: list[Choice]) -> Action:
        return self._counted("buy", args, cands, "(money and the bag limit it)")

    def _reveal(self, args: list[str], cands: list[Choice]) -> Action:
        if args and args[0] in ("none", "nothing"):
            args = ["0"]
        return self._counted("reveal", args, cands, "")

    def _named(self, args: list[str], cands: list[Choice], what: str) -> Action:
        if not args and len(cands) == 1:
            return cands[0].action
        if not args:
            opts = ", ".join(c.command for c in cands)
            raise CommandError(f"{what}? {opts}")
        key = slug(" ".join(args))
        exact = [c for c in cands if c.command.split()[1] == key]
        hits = exact or [c for c in cands if c.command.split()[1].startswith(key)]
        if len(hits) == 1:
            return hits[0].action
        opts = ", ".join(c.command.split()[1] for c in (hits or cands))
        if hits:
            raise CommandError(f"'{' '.join(args)}' could be {opts}")
        raise CommandError(f"not possible: '{' '.join(args)}'; choose {opts}")

    def _move(self, args: list[str], cands: list[Choice]) -> Action:
        return self._named(args, cands, "move where")

    def _give(self, args: list[str], cands: list[Choice]) -> Action:
        return self._named(args, cands, "give the pawn to whom")

    def _steal(self, args: list[str], cands: list[Choice]) -> Action:
        return self._named(args, cands, "steal from whom")

    def _vizier(self, args: list[str], cands: list[Choice]) -> Action:
        if not args:
            raise CommandError("which colour? " + ", ".join(c.command for c in cands))
        col = COLOURS[colour_of(args[0])]
        for c in cands:
            if c.command == f"vizier {col}":
                return c.action
        raise CommandError(f"{col} was already chosen by a Grand Vizier; choose "
                           + ", ".join(c.command.split()[1] for c in cands))

    def _take(self, args: list[str], cands: list[Choice]) -> Action:
        s = self.view.state
        listing = "; ".join(
            f"take {c.command.split()[1]} = {tile_name(s.board.tileset.tiles[c.action.tile])}"
            for c in cands if isinstance(c.action, TakeTile)
        )
        if not args:
            raise CommandError(f"which tile? {listing}")
        if args[0].isdigit():
            for c in cands:
                if c.command == f"take {args[0]}":
                    return c.action
            raise CommandError(f"there is no tile {args[0]} here: {listing}")
        hits: dict[str, Choice] = {}
        for c in cands:
            if not isinstance(c.action, TakeTile):
                continue
            desc = tile_name(s.board.tileset.tiles[c.action.tile])
            words = re.findall(r"[a-z]+", desc.lower())
            if all(any(w.startswith(a) for w in words) for a in args):
                hits.setdefault(desc, c)
        if len(hits) == 1:
            return next(iter(hits.values())).action
        if not hits:
            raise CommandError(f"no such tile here: {listing}")
        raise CommandError("which one? " + "; ".join(
            f"{c.command} = {d}" for d, c in hits.items()))

    def _exchange(self, args: list[str], cands: list[Choice]) -> Action:
        text = " ".join(a for a in args if a not in ("to", "for"))
        parts = text.replace(">", " ").split()
        if len(parts) != 2:
            raise CommandError("exchange what for what? e.g. exchange silk>spice")
        g, r = colour_of(parts[0]), colour_of(parts[1])
        for c in cands:
            a = c.action
            if isinstance(a, ExchangePair) and a.give == g and a.receive == r:
                return a
        gives = sorted(
            {COLOURS[c.action.give] for c in cands if isinstance(c.action, ExchangePair)}
        )
        raise CommandError(f"you have no {COLOURS[g]} to give; you can give: {', '.join(gives)}")

    def _crook(self, args: list[str], cands: list[Choice]) -> Action:
        if len(args) == 1:
            args = ["0", args[0]]
        if len(args) != 2:
            raise CommandError("crook SYMBOL COLOUR, e.g. " + cands[0].command)
        col = COLOURS[colour_of(args[1])]
        for c in cands:
            if c.command == f"crook {args[0]} {col}":
                return c.action
        raise CommandError("that change is not possible; try: "
                           + ", ".join(c.command for c in cands[:4]))


class CommandCompleter(Completer):
    """Completes the canonical commands of whatever is legal at the moment of typing."""

    def __init__(self, source: Callable[[], CommandParser | None]) -> None:
        # asked at every keystroke: what is legal changes while the player types
        self._source = source

    def get_completions(self, document: Document, complete_event: CompleteEvent
                        ) -> Iterable[Completion]:
        parser = self._source()
        text = document.text_before_cursor.lower()
        if not text.strip() and not complete_event.completion_requested:
            # an empty line is where the menu's digit keys work: a popup listing every
            # command there (e.g. right after Enter cleared the line) would hide the menu
            return
        if parser is None:
            cmds: list[tuple[str, str]] = []
        else:
            cmds = [(c.command, c.label) for c in parser.commands()]
        for cmd, label in [*cmds, *((m, "") for m in META)]:
            if cmd.startswith(text) and cmd != text:
                yield Completion(cmd, start_position=-len(document.text_before_cursor),
                                 display_meta=label)

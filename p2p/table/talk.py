"""Table talk: lines a seat signs for everyone, kept in the transcript, bounded.

A line is an envelope like any other (:data:`p2p.protocol.wire.TALK_KIND`), so what was said is
signed and on record, and a line can never be put in another seat's mouth.  Three bounds
keep talk from costing the table anything:

* what a line may be and how many a seat may sign in a game (:func:`p2p.protocol.wire.talk_problem`,
  checked the same way by the live table and the audit; beyond it, the signer's violation);
* our own pace: :meth:`TalkBook.may_send` refuses a line sooner than the player's own
  screen would (so an honest seat never nears the per-game bound);
* each screen's pace: a sender's lines beyond :data:`SHOW_BURST` within
  :data:`SHOW_WINDOW` seconds are kept but not shown one by one (a counted summary line
  instead), so a flood from a hacked peer cannot push the game off anyone's log.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from ..protocol.wire import MAX_TALK_CHARS, MAX_TALK_LINES, MAX_WATCHER_TAG
from ..sanitize import clean

SEND_BURST = 5
"""Lines we may send within :data:`SEND_WINDOW` seconds."""
SEND_WINDOW = 10.0
SHOW_BURST = 8
"""Lines of one sender shown within :data:`SHOW_WINDOW` seconds; more are summarised."""
SHOW_WINDOW = 10.0


@dataclass(frozen=True)
class TalkLine:
    """One line of talk as a screen shows it: the sender's seat and the cleaned text;
    ``hidden`` counts the sender's lines not shown since its last shown one (pace);
    ``watcher`` names the watcher who said it when the seat relayed it (cleaned)."""

    seat: int
    text: str
    hidden: int = 0
    watcher: str | None = None


class TalkBook:
    """Every line of talk of the game, and who may see which now."""

    def __init__(self, players: int, me: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.me = me
        self.lines: list[TalkLine] = []
        self.count = [0] * players
        self.on_line: Callable[[TalkLine], None] | None = None
        self._clock = clock
        self._sent: deque[float] = deque()
        self._shown: list[deque[float]] = [deque() for _ in range(players)]
        self._hidden = [0] * players

    @staticmethod
    def prepare(text: str) -> str:
        """What we sign for ``text``: cleaned and cut to the wire's bound."""
        return clean(text, MAX_TALK_CHARS)

    def may_send(self) -> str | None:
        """Why we may not send a line now (our own pace), or None."""
        if not within_pace(self._sent, SEND_BURST, self._clock()):
            return (f"not so fast: at most {SEND_BURST} lines in {SEND_WINDOW:.0f} s; "
                    "wait a moment")
        return None

    def may_sign(self, reserve: int = 0) -> str | None:
        """Why we may not sign another line (the per-game bound, keeping ``reserve``
        lines for our own player when relaying a watcher's), or None."""
        if self.count[self.me] + reserve >= MAX_TALK_LINES:
            return f"the game's talk is used up: at most {MAX_TALK_LINES} lines per seat"
        return None

    def heard(self, seat: int, text: str, watcher: str | None = None) -> None:
        """A line signed by ``seat`` was admitted (in its chain order); ``watcher``: the
        watcher it relayed the line for."""
        self.count[seat] += 1
        now = self._clock()
        shown = self._shown[seat]
        while shown and now - shown[0] > SHOW_WINDOW:
            shown.popleft()
        if (seat != self.me or watcher is not None) and len(shown) >= SHOW_BURST:
            self._hidden[seat] += 1
            return
        shown.append(now)
        line = TalkLine(seat, clean(text, MAX_TALK_CHARS), self._hidden[seat],
                        None if watcher is None else clean(watcher, MAX_WATCHER_TAG))
        self._hidden[seat] = 0
        self.lines.append(line)
        if self.on_line is not None:
            self.on_line(line)


def within_pace(times: deque[float], burst: int, now: float) -> bool:
    """Whether one more thing at ``now`` stays within ``burst`` per :data:`SEND_WINDOW`
    seconds (then it is counted in ``times``); the sliding window of every talk pace."""
    while times and now - times[0] > SEND_WINDOW:
        times.popleft()
    if len(times) >= burst:
        return False
    times.append(now)
    return True

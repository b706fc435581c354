"""Table talk on the table screen: how a line reads in the log, how a player says one.

A line is said by typing ``'`` and the line (or ``say TEXT``) on the command line, then
Enter; the common ones are on keys (:data:`QUICK`).  No letter key opens it: every letter
may begin a command (``take``, ``trade``).  In the log a line reads ``» Ann: gg`` in its
own style (:data:`TALK_MARK` starts it), so talk never looks like the game's own news.
A watcher's line, relayed by the host's seat, reads ``» Kim (watching, via Ann): nice move``.
"""

from __future__ import annotations

from cli.table.session import Talk

TALK_MARK = "» "
"""How a log line of talk starts (the log view styles such lines apart)."""
QUICK: tuple[tuple[str, str], ...] = (("f2", "gg"), ("f3", "thinking…"), ("f4", "one more?"))
"""Keys for the common lines."""
SAY_WORDS = ("say", "talk")


def log_line(ev: Talk, me: int | None) -> str:
    """The log's line for a line of talk (ours reads "You"; a watcher's reads "Kim
    (watching, via Ann)": the seat that signed it is shown, any seat may relay)."""
    who = "You" if ev.seat == me else ev.name
    sender = who
    if ev.watcher is not None:
        who = watcher_label(ev.watcher, sender)
    more = (f" (+{ev.hidden} more line{'s' if ev.hidden > 1 else ''} from {sender} not "
            "shown: talking too fast)") if ev.hidden else ""
    return f"{TALK_MARK}{who}: {ev.text}{more}"


def watcher_label(watcher: str, via: str) -> str:
    """Who a relayed line is from: the watcher it names and the seat that signed it."""
    return f"{watcher} (watching, via {via})"


def spoken(text: str) -> str | None:
    """The line a typed command says (``say gg``, ``'gg``), or None if it is no talk."""
    t = text.strip()
    if t[:1] in ("'", '"'):
        return t[1:].strip()
    first, _, rest = t.partition(" ")
    if first.lower() in SAY_WORDS:
        return rest.strip()
    return None

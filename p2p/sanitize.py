"""One function for every string that comes from the network before a screen or a log.

Why: table names (mDNS), player names (lobby), TXT fields, lobby messages, refusal and
abort reasons are chosen by whoever sends them.  Printed raw, a table named
``"\\x1b]0;pwned\\x07\\x1b[2J"`` retitled and cleared the terminal of ``silkroad tables``;
a name with a right-to-left override (U+202E) makes "Ann" display as someone else's text;
a newline forges a second log line; a 60 kB "name" fills the screen.  So every such string
passes through :func:`clean` where it *enters* this program (``p2p.lobby.discovery``,
``p2p.lobby.seating``, ``p2p.net.handshake``, ``p2p.net.mesh``), and what reaches the UI is already
harmless.

:func:`clean` removes terminal escape sequences whole (CSI, OSC, DCS and the other
``ESC``-introduced forms, 7- and 8-bit), replaces every other control or formatting
character (C0, C1, DEL, bidi embeddings/overrides/isolates and marks, zero-width and other
invisible format characters, line/paragraph separators, surrogates, private-use and
unassigned code points) with a visible ``?`` or a space, collapses runs of white space and
cuts the result to a length with ``…``.  Plain text, including non-Latin scripts and
ordinary emoji, passes through unchanged.

Strings that are *hashed* (roster names are part of the game id) cannot be altered on
receipt without splitting the table; they are checked with :func:`is_clean` and refused
when they would change (an honest host cleans names when seating players).
"""

from __future__ import annotations

import re
import unicodedata

MAX_TEXT = 200
"""Default length of a network string shown to a player (reasons, details)."""

_ESCAPES = re.compile(
    r"""
      (?:\x1b\[|\x9b) [\x30-\x3f]* [\x20-\x2f]* [\x40-\x7e]?      # CSI … final
    | (?:\x1b[\]PX^_]|[\x9d\x90\x98\x9e\x9f])                     # OSC DCS SOS PM APC …
      [^\x07\x1b\x9c]* (?:\x07|\x1b\\|\x9c)?                      # … up to BEL or ST
    | \x1b [\x20-\x2f]* [\x30-\x7e]?                              # any other ESC sequence
    """,
    re.VERBOSE,
)
_SPACE_LIKE = {"\t", "\n", "\r", "\x0b", "\x0c", "\x85", "\u2028", "\u2029"}
_DROP_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
_KEEP_FORMAT = {"\u200d"}
"""Format characters kept: the zero-width joiner builds ordinary emoji (family, flags)."""


def _char(ch: str) -> str:
    if ch in _SPACE_LIKE:
        return " "
    if ch in _KEEP_FORMAT:
        return ch
    if unicodedata.category(ch) in _DROP_CATEGORIES:
        return "?"
    return ch


def clean(text: object, limit: int = MAX_TEXT) -> str:
    """``text`` made safe to print: no escape sequences, no control, bidi or invisible
    characters, single spaces, at most ``limit`` characters (cut with ``…``).

    Anything that is not a ``str`` (a peer sent a number where a name belongs) is shown by
    its ``repr``, cleaned the same way; bytes are decoded as UTF-8 with replacement."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    elif not isinstance(text, str):
        text = repr(text)
    # bound the work first: a peer's 8 MiB "reason" costs no more than a short one
    text = text[: limit * 4 + 64]
    text = _ESCAPES.sub("", text)
    text = "".join(_char(ch) for ch in text)
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: max(limit - 1, 0)].rstrip() + "…"
    return text


def is_clean(text: str, limit: int = MAX_TEXT) -> bool:
    """True when :func:`clean` would leave ``text`` exactly as it is."""
    return clean(text, limit) == text

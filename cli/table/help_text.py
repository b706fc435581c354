"""The help overlay's pages: the screen and keys first, then the rules (``cli.table.rules_text``).

Paged (→/PgDn next, ←/PgUp back, ↑↓ scroll a page a small window cannot hold) so the
whole rulebook a player needs is one key away without leaving the table.
"""

from __future__ import annotations

from cli.table.rules_text import HELP_PAGES
from cli.theme import GOODS_LEGEND, LEGEND

KEYS_PAGE = f"""\
SILK ROAD — lead the caravan from start to end; the richest merchant wins.
Each city: AUCTION for the lead → the leader MOVES the caravan → MARKET:
tiles to buy, sell, trade, steal and call the Grand Vizier (rules: → next
pages). Crooks and Barterers are kept to play later (page 4).

Map   ▶ caravan  › next cities  · passed  * printed exchange  i: in words
      roads ↓ on, ↘ ↙ across, ╳ both; between a row's two cities the left
      one's are left of the middle, the right one's right of it
      {LEGEND}
      {GOODS_LEGEND}
Panel $ money  g goods  ♛ leader pawn  ● turn tokens  ?n unseen goods
      C Crooks  B Barterers held;  ▶ whose turn it is

Keys  1-9,0 pick a menu entry  + / - more entries  ←→↑↓ move  Enter pick
      (a decline counts down, Esc keeps the tile; exchanges ask y; ⧗ sent)
      or type a command (Tab completes; typed commands run at once):
      bid 3, pass, sell-lead, keep, move samarkand, take 2, sell 2,
      buy 3, trade, decline, exchange silk>spice, done, steal bo,
      vizier spice, reveal 2, crook 0 silk, barterer, give bo, city kashgar
      i city info  ' talk  F2 gg  F3 thinking…  F4 one more?  n play again
      PgUp/PgDn/End log  Esc back  ? or F1 help  q or Ctrl-Q quit  a abandon"""

PAGES: tuple[tuple[str, str], ...] = (("Screen and keys", KEYS_PAGE), *HELP_PAGES)

HELP = KEYS_PAGE + "\n"
"""The first page alone (kept for callers that show one screen of help)."""

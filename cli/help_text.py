"""The help overlay: a one-screen rules summary and the keys (fits 80x24)."""

from __future__ import annotations

from cli.theme import GOODS_LEGEND, LEGEND

HELP = f"""\
 SILK ROAD — lead the caravan from start to end; the richest merchant wins.
 Each city: AUCTION for the lead (the pawn holder sells it to the top
 bidder or pays them to keep it) → the leader MOVES the caravan one arrow →
 MARKET: the leader takes a tile and may perform it, then passes the pawn to
 someone who has not acted (3 players: twice). Crooks/Barterers are kept.
 Seller: 4,3,2,1… silver per good. Buyer: 1,2,3,4… silver per good.
 Trader: give left, get right, once or twice. Thief: take a random good.
 Grand Vizier: choose a colour, all reveal at once: most +5, second +3.
 End: 1 point per silver and per good, +2 per colour where you hold the most.

 Map   ▶ caravan  › next cities  · passed   * city has a printed exchange
       {LEGEND}
       {GOODS_LEGEND}
 Panel $ money  g goods  ♛ leader pawn  ● turn tokens  ?n unseen goods
       C Crooks  B Barterers held;  ▶ whose turn it is

 Keys  1-9,0 pick a menu entry   ←→↑↓ move   Enter pick / run the command
       or type a command, Tab completes: bid 3, pass, sell-lead, keep,
       move samarkand, take 2, take seller, sell 2, buy 3, trade, decline,
       exchange silk>spice, done, steal bo, vizier spice, reveal 2,
       crook 0 silk, barterer, give bo
       Esc back  ? or F1 help  q or Ctrl-Q quit  a abandon a stalled peer
"""

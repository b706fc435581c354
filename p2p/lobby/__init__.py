"""Getting to a table: zeroconf discovery, dialling a lobby, the join-code guard, the
lobby itself (seats, params, authentication words) and a series of games at one table.

It sits on :mod:`p2p.net` and the shared :mod:`p2p.game` / :mod:`p2p.store`; it hands a
seated roster to the table and never imports the table or the judge.
"""

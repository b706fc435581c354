"""Transport: frames, the authenticated handshake (with the join code's PAKE), one
connection, and the mesh of connections between seated peers.

Nothing here knows a game's rules, the lobby, the table or the judge: it imports only the
shared leaves of :mod:`p2p` (errors, identity, sanitize), so it can be read and tested as
plain networking (``tests/test_import_graph.py`` checks this).
"""

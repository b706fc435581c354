"""The ``silkroad`` subcommands: one module per command (``register(sub)`` and
``run(args)``), plus :mod:`.net` (what host, join and tables share) and
:mod:`.net_report` (the end-of-game report of a networked seat).

:mod:`cli.main` dispatches to them; nothing below (the table screen, the replay viewer)
imports a command.
"""

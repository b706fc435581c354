"""The verdict side: the evidence rule (:mod:`.evidence`), the engine replay that checks a
transcript against the rules (:mod:`.engine_replay`) and the offline game audit
(:mod:`.game_audit`).

The live table imports the judge to judge a notice with the very same code; the judge
never imports the table (``tests/test_import_graph.py`` checks this), so ``silkroad audit``
needs nothing that only a running table has.
"""

"""What a signed game says, shared by the live table and the offline judge: envelope kinds
and body shapes (:mod:`.wire`), the envelope header, the acknowledged state-hash chain,
the zone map, and the resolution script (which crypto ops each engine step needs).

Pure: no I/O, and no import of any other part of :mod:`p2p`, so live play and the audit
read one definition and cannot disagree about it.
"""

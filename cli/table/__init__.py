"""The table screen: the session a seat plays through (local or networked), the screen's
state (:mod:`.app`), how it is drawn (:mod:`.view`, :mod:`.layout`, :mod:`.panels`,
:mod:`.mapview`), its keys and typed commands, and the texts it shows.
"""

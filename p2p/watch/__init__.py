"""Spectators: a watcher who verifies as it watches (``silkroad watch``).

* :mod:`.stream` — what goes over a watch connection (messages, limits);
* :mod:`.hub` — the host's side: taps its table and fans every envelope out to at most
  :data:`.stream.MAX_WATCHERS` watchers, each behind a bounded queue;
* :mod:`.client` — the watcher: checks the game's setup against its id, every envelope's
  signature against the roster, and runs the offline audit over what it holds.

Why a part of its own: a watcher is neither a seat (it signs nothing and plays no step)
nor the audit (it is live); it reads the table through two taps and judges with the
judge's own code, so it sits below the entry points and above the table.
"""

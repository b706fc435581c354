"""Message-driven protocol parties (no I/O): each op is a small state machine.

See :mod:`crypto.protocols.base` for the step machinery and docs/protocol.md for the
messages of every op.
"""

"""The lockstep table: one peer's engine and crypto session driven by signed envelopes.

Import the table's public types from here (``from p2p.table import Table, TableSetup``);
the parts behind it are being split into collaborators (wire, inbox, outbox, acks,
aborts, resume, loop).
"""

from p2p.lockstep import (
    Agent,
    HumanDecider,
    Refusal,
    Table,
    TableResult,
    TableSetup,
    TableStopped,
)

__all__ = ["Agent", "HumanDecider", "Refusal", "Table", "TableResult", "TableSetup",
           "TableStopped"]

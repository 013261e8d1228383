"""All of nlmsync's memory: one SQLite file (`<vault>/.nlmsync/state.db`) through sqlite-utils.

`StateStore` is the API; `open_database` opens the file for modules that keep their own tables in it
(the search index cache).
"""

from nlmsync.store._compaction import CompactionReport
from nlmsync.store._lru import LruEntry
from nlmsync.store._models import (
    EvictionRecord,
    Message,
    PendingDeletion,
    QueryRecord,
    ReconcileResult,
    SourceMapping,
)
from nlmsync.store.db import check_state_file, open_database
from nlmsync.store.state import StateStore

__all__ = [
    "CompactionReport",
    "EvictionRecord",
    "LruEntry",
    "Message",
    "PendingDeletion",
    "QueryRecord",
    "ReconcileResult",
    "SourceMapping",
    "StateStore",
    "check_state_file",
    "open_database",
]

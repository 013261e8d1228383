"""All of nlmsync's memory: one SQLite file (`<vault>/.nlmsync/state.db`) through sqlite-utils.

`StateStore` is the API; `open_database` opens the file for modules that keep their own tables in it
(the search index, whose tables and their format are `store.index_codec`'s).

The names below are imported on first use, so a search in a fresh process, which needs only the connection
(`store.db`) and `store.transaction`, does not pay for the registry, the eviction queues and sqlite-utils.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nlmsync._lazy import lazy_exports

if TYPE_CHECKING:
    from nlmsync.store._compaction import CompactionReport
    from nlmsync.store._lru import LruEntry
    from nlmsync.store._models import (
        ConversationSummary,
        EvictionRecord,
        LearnedCapacity,
        Message,
        NoteHashes,
        PendingDeletion,
        QueryRecord,
        ReconcileResult,
        ResolvedRow,
        SourceMapping,
    )
    from nlmsync.store._packs import PackRecord
    from nlmsync.store.db import check_state_file, open_database
    from nlmsync.store.state import StateStore

_EXPORTS = {
    "CompactionReport": "nlmsync.store._compaction",
    "ConversationSummary": "nlmsync.store._models",
    "EvictionRecord": "nlmsync.store._models",
    "LearnedCapacity": "nlmsync.store._models",
    "LruEntry": "nlmsync.store._lru",
    "Message": "nlmsync.store._models",
    "NoteHashes": "nlmsync.store._models",
    "PackRecord": "nlmsync.store._packs",
    "PendingDeletion": "nlmsync.store._models",
    "QueryRecord": "nlmsync.store._models",
    "ReconcileResult": "nlmsync.store._models",
    "ResolvedRow": "nlmsync.store._models",
    "SourceMapping": "nlmsync.store._models",
    "StateStore": "nlmsync.store.state",
    "check_state_file": "nlmsync.store.db",
    "open_database": "nlmsync.store.db",
}

__all__ = [
    "CompactionReport",
    "ConversationSummary",
    "EvictionRecord",
    "LearnedCapacity",
    "LruEntry",
    "Message",
    "NoteHashes",
    "PackRecord",
    "PendingDeletion",
    "QueryRecord",
    "ReconcileResult",
    "ResolvedRow",
    "SourceMapping",
    "StateStore",
    "check_state_file",
    "open_database",
]

__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS, __all__)

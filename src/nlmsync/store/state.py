"""`StateStore`: the one typed API over the state file, shared by sync, the orchestrator and `serve`.

It is assembled from one mixin per concern (registry, aliases, eviction queues, conversations,
compaction) over `StoreBase` (the connection opened and closed, RLock, steps, writer lock).
"""

from __future__ import annotations

from nlmsync.store._aliases import AliasMixin
from nlmsync.store._compaction import CompactionMixin
from nlmsync.store._conversations import ConversationMixin
from nlmsync.store._eviction import EvictionMixin
from nlmsync.store._note_hashes import NoteHashesMixin
from nlmsync.store._packs import PacksMixin
from nlmsync.store._registry import RegistryMixin
from nlmsync.store._unprocessed import UnprocessedMixin


class StateStore(RegistryMixin, AliasMixin, EvictionMixin, ConversationMixin, CompactionMixin, NoteHashesMixin,
                 PacksMixin, UnprocessedMixin):
    """Source registry, aliases, eviction queues, pending deletions, conversations, compaction, the part
    hashes of notes as last read (`note_hashes`), packs (sources holding many notes), and the files a server could
    not process (`unprocessed`).

    Thread-safe (one RLock). Writes are steps (`with store.step():` groups several into one
    transaction). `with store.writer():` holds the cross-process writer lock for a whole run.
    """

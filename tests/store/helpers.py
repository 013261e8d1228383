"""Helpers for the state store tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nlmsync.config import Settings
from nlmsync.store import SourceMapping, StateStore

NB = "nb-1"


def open_store(path: Path, **settings: Any) -> StateStore:
    return StateStore.open(path, Settings(**settings))


def add(store: StateStore, path: str, source_id: str, *, notebook_id: str = NB, content_hash: str | None = None,
        **fields: Any) -> SourceMapping:
    """Register `path` → `source_id` with a deterministic hash and title."""
    digest = content_hash or f"h-{source_id}"
    return store.upsert_mapping(notebook_id=notebook_id, path=path, source_id=source_id, content_hash=digest,
                                title=f"{path} · {digest[:8]}", **fields)

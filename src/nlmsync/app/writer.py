"""The store's cross-process writer lock, waited for without blocking the event loop: `serve` keeps answering
searches, and `watch` keeps taking file events, while another nlmsync run finishes."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import ExitStack, asynccontextmanager

import anyio

from nlmsync.errors import StateLockedError
from nlmsync.store import StateStore

__all__ = ["WRITER_POLL_SECONDS", "held_writer"]

WRITER_POLL_SECONDS = 0.05


@asynccontextmanager
async def held_writer(store: StateStore) -> AsyncIterator[None]:
    """Hold `store`'s writer lock for the block, asking for it again every `WRITER_POLL_SECONDS`.

    Raises:
        StateLockedError: still held by another run after the store's `writer_timeout`.
    """
    deadline = time.monotonic() + store.writer_timeout
    held = ExitStack()
    while True:
        try:
            held.enter_context(store.writer(timeout=0))
            break
        except StateLockedError:
            if time.monotonic() >= deadline:
                raise
            await anyio.sleep(WRITER_POLL_SECONDS)
    with held:
        yield

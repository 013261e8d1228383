"""Notebooks (the default one, the capacity given for each and the one a refusal taught), conversations, their
messages, and per-query records (what conversation carry-over reads, bounded by compaction).

A conversation is keyed by the remote conversation id within a notebook. Each turn stores one
message (question, answer, time) and one query record (the source ids sent, the selected paths,
citations) — what carry-over needs. Recording a turn past a bound makes compaction due.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from nlmsync.store._base import StoreBase
from nlmsync.store._models import ConversationSummary, LearnedCapacity, Message, QueryRecord

DEFAULT_NOTEBOOK_KEY = "default_notebook"
LEARNED_CAPACITY_KEY = "learned_capacity:"
CAPACITY_KEY = "capacity:"


class ConversationMixin(StoreBase):
    # --- notebooks ------------------------------------------------------------------------------
    def record_notebook(self, notebook_id: str, title: str | None = None) -> None:
        """Remember a notebook (and its title, when given)."""
        with self.step():
            self.db.execute(
                "INSERT INTO notebooks (notebook_id, title, recorded_at) VALUES (?, ?, ?) ON CONFLICT "
                "(notebook_id) DO UPDATE SET title = coalesce(excluded.title, title)",
                [notebook_id, title, self._now()])

    def notebooks(self) -> dict[str, str | None]:
        """Known notebooks, id → title."""
        with self._reading():
            return dict(self.db.execute("SELECT notebook_id, title FROM notebooks ORDER BY recorded_at"))

    def default_notebook(self) -> str | None:
        with self._reading():
            return self._meta(DEFAULT_NOTEBOOK_KEY)

    def set_default_notebook(self, notebook_id: str) -> None:
        with self.step():
            self.record_notebook(notebook_id)
            self._set_meta(DEFAULT_NOTEBOOK_KEY, notebook_id)

    def remembered_capacity(self, notebook_id: str) -> int | None:
        """The capacity the user gave for `notebook_id` on an earlier run (`remember_capacity`), None if none."""
        with self._reading():
            remembered = self._meta(CAPACITY_KEY + notebook_id)
        return int(remembered) if remembered is not None else None

    def remember_capacity(self, notebook_id: str, given: int) -> None:
        """Keep the capacity the user gave for `notebook_id`: later runs that give none use it."""
        if self.remembered_capacity(notebook_id) == given:
            return
        with self.step():
            self._set_meta(CAPACITY_KEY + notebook_id, str(given))

    def learned_capacity(self, notebook_id: str) -> LearnedCapacity | None:
        """What the server's refusal of an add to `notebook_id` as full taught (`learn_capacity`), None if none."""
        with self._reading():
            learned = self._meta(LEARNED_CAPACITY_KEY + notebook_id)
        if learned is None:
            return None
        held, under = (int(n) for n in learned.split("/"))
        return LearnedCapacity(held, under)

    def learn_capacity(self, notebook_id: str, held: int, under: int) -> None:
        """The server refused an add to `notebook_id` as full while it held `held` sources and the run's capacity
        was `under`: later runs keep the notebook to `held` until their capacity differs from `under`."""
        with self.step():
            self._set_meta(LEARNED_CAPACITY_KEY + notebook_id, f"{held}/{under}")

    # --- conversations --------------------------------------------------------------------------
    def record_turn(self, notebook_id: str, conversation_id: str, question: str, answer: str,
                    source_ids: Iterable[str], selected_paths: Iterable[str],
                    citations: Mapping[str, Any] | None = None) -> None:
        """Store one question/answer turn and its query record, in one step."""
        now = self._now()
        with self.step():
            cur = self.db.execute(
                "INSERT INTO messages (notebook_id, conversation_id, question, answer, asked_at) "
                "VALUES (?, ?, ?, ?, ?)", [notebook_id, conversation_id, question, answer, now])
            turn = cur.lastrowid
            self.db.execute(
                "INSERT INTO conversations (notebook_id, conversation_id, started_at, last_turn) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (notebook_id, conversation_id) DO UPDATE SET last_turn = excluded.last_turn",
                [notebook_id, conversation_id, now, turn])
            self.db.execute(
                "INSERT INTO query_records (notebook_id, conversation_id, question, source_ids, selected_paths, "
                "citations, asked_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [notebook_id, conversation_id, question, json.dumps(list(source_ids)),
                 json.dumps(list(selected_paths)), json.dumps(dict(citations or {})), now])
            if self._over_conversation_bounds(notebook_id, conversation_id):
                self._at_end_of_step(self._compact_now)

    def _over_conversation_bounds(self, notebook_id: str, conversation_id: str) -> bool:
        s = self.settings
        key = [notebook_id, conversation_id]
        messages = self.db.execute("SELECT count(*) FROM messages WHERE notebook_id = ? AND conversation_id = ?",
                                   key).fetchone()[0]
        records = self.db.execute(
            "SELECT count(*) FROM query_records WHERE notebook_id = ? AND conversation_id = ?", key).fetchone()[0]
        conversations = self.db.execute("SELECT count(*) FROM conversations").fetchone()[0]
        return bool(messages > s.max_messages_per_conversation or records > s.max_query_records_per_conversation
                    or conversations > s.max_conversations)

    def query_records(self, notebook_id: str, conversation_id: str) -> list[QueryRecord]:
        """The conversation's query records, newest first (the order carry-over walks)."""
        with self._reading():
            rows = self.db.execute(
                "SELECT conversation_id, question, source_ids, selected_paths, citations, asked_at "
                "FROM query_records WHERE notebook_id = ? AND conversation_id = ? ORDER BY id DESC",
                [notebook_id, conversation_id]).fetchall()
            return [QueryRecord(conversation_id=c, question=q, source_ids=json.loads(s),
                                selected_paths=json.loads(p), citations=json.loads(ci), asked_at=at)
                    for c, q, s, p, ci, at in rows]

    def messages(self, notebook_id: str, conversation_id: str) -> list[Message]:
        """The conversation's turns, oldest first."""
        with self._reading():
            rows = self.db.execute(
                "SELECT question, answer, asked_at FROM messages WHERE notebook_id = ? AND conversation_id = ? "
                "ORDER BY id", [notebook_id, conversation_id]).fetchall()
            return [Message(*r) for r in rows]

    def latest_conversation(self, notebook_id: str) -> str | None:
        """The conversation of the notebook's most recent turn, or None."""
        with self._reading():
            row = self.db.execute("SELECT conversation_id FROM conversations WHERE notebook_id = ? "
                                  "ORDER BY last_turn DESC LIMIT 1", [notebook_id]).fetchone()
            return row[0] if row else None

    def conversations(self, notebook_id: str) -> list[str]:
        """The notebook's conversation ids, most recent first."""
        with self._reading():
            return [r[0] for r in self.db.execute(
                "SELECT conversation_id FROM conversations WHERE notebook_id = ? ORDER BY last_turn DESC",
                [notebook_id])]

    def conversation_summaries(self, notebook_id: str | None = None) -> list[ConversationSummary]:
        """The conversations of one notebook (or of all), most recent first, with their kept turns."""
        where = "WHERE c.notebook_id = ?" if notebook_id is not None else ""
        with self._reading():
            rows = self.db.execute(
                "SELECT c.notebook_id, c.conversation_id, count(m.id), min(m.asked_at), max(m.asked_at), "
                "(SELECT question FROM messages f WHERE f.notebook_id = c.notebook_id "
                " AND f.conversation_id = c.conversation_id ORDER BY f.id LIMIT 1) "
                "FROM conversations c JOIN messages m ON m.notebook_id = c.notebook_id "
                f"AND m.conversation_id = c.conversation_id {where} "
                "GROUP BY c.notebook_id, c.conversation_id ORDER BY c.last_turn DESC",
                [notebook_id] if notebook_id is not None else []).fetchall()
        return [ConversationSummary(*row) for row in rows]

    def find_conversations(self, prefix: str) -> list[tuple[str, str]]:
        """(notebook id, conversation id) of every conversation whose id starts with `prefix`."""
        with self._reading():
            return [(nb, conv) for nb, conv in self.db.execute(
                "SELECT notebook_id, conversation_id FROM conversations WHERE substr(conversation_id, 1, ?) = ? "
                "ORDER BY last_turn DESC", [len(prefix), prefix])]

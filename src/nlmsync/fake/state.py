"""The fake NotebookLM: notebooks, sources and conversations in memory or in a state file, and the tool logic.

`FakeNotebookLM` implements each tool of the real server we use with the same arguments, result shapes
and in-band errors (`{"status": "error", "error": ...}`), enforces the per-notebook capacity, and logs
every call in `.calls` (tool, arguments, whether it was applied). With a `state_path` the state — including
the call log and the fault counters — is kept on disk: every mutating call (every call when a fault counts
calls) appends what it changed to a journal beside the JSON snapshot, and `save()` (when the server stops)
brings the file up to date (`persistence.py`), so a scripted run can inspect it afterwards and `--server fake`
keeps its notebooks across nlmsync runs at a cost per call that does not grow with the notebook.
It knows nothing about MCP; `fake/server.py` puts it behind an MCP server.

One module for the state and the tools' logic (about 440 lines): each tool reads and changes the notebooks in
place and decides what a call journals, so they are kept together; the real server's wording is in
`replies.py`, the login and the plan in `account.py`, the fault plans in `faults.py`, the state file's journal and snapshot in `persistence.py`, file sources and
their processing in `files.py`.
"""

from __future__ import annotations

import json
import time
import uuid
import weakref
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from nlmsync.errors import InputError
from nlmsync.fake import account
from nlmsync.fake.answers import compose_answer
from nlmsync.fake.faults import CallPlan, Faults, When, plan_call
from nlmsync.fake.files import FileSources, Polls, Processing, file_outside_allowed_dirs, processed
from nlmsync.fake.persistence import Journal, journal_path, write_snapshot
from nlmsync.fake.replies import (
    AUTH_ERROR,
    as_list,
    deadline_error,
    error,
    indexed_text,
    not_found,
    notebook_full,
    rate_limit_error,
)
from nlmsync.text import tokenize
from nlmsync.vault import is_media

__all__ = ["DEFAULT_QUERY_TIMEOUT", "MUTATING_TOOLS", "CallRecord", "FakeNotebook", "FakeNotebookLM", "FakeSource"]

STATE_FORMAT = "nlmsync-fake-notebooklm"
STATE_VERSION = 1
FAKE_VERSION = "0.15.8"
MAX_TEXT_BYTES = 1_000_000
"""A request's text limit. It also keeps every text within the 500,000 words a source may hold: a word takes
at least two bytes with its separator."""
MAX_TITLE_CHARS = 500
LOGGED_STRING_CHARS = 200
MUTATING_TOOLS = frozenset({"notebook_create", "notebook_delete", "source_add", "source_delete", "source_rename",
                            "notebook_query"})
# The real server's default query budget when `notebook_query` gets no `timeout` (NOTEBOOKLM_QUERY_TIMEOUT).
DEFAULT_QUERY_TIMEOUT = 120.0


@dataclass
class FakeSource:
    id: str
    title: str
    text: str
    source_type: str = "text"


@dataclass
class FakeNotebook:
    id: str
    title: str
    created_at: float
    sources: dict[str, FakeSource] = field(default_factory=dict)


@dataclass(frozen=True)
class CallRecord:
    """One tool call as the fake saw it; `applied` is True when the tool ran and changed the notebooks (it succeeded,
    or it failed having added a source, as a file NotebookLM cannot process is kept)."""

    tool: str
    arguments: dict[str, Any]
    applied: bool
    status: str
    dropped: When | None = None


def _loggable(arguments: dict[str, Any]) -> dict[str, Any]:
    return {key: (value[:LOGGED_STRING_CHARS] + "…" if isinstance(value, str) and len(value) > LOGGED_STRING_CHARS
                  else value) for key, value in arguments.items()}


COMPACT_JOURNAL_AT = 0.25
"""`save()` rewrites the snapshot once the journal is this large a fraction of it (amortized O(1) a call)."""


class FakeNotebookLM:
    """A faithful offline twin of the NotebookLM MCP server's notebook, source and query tools."""

    def __init__(self, capacity: int = 50, faults: Faults | None = None, state_path: Path | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.capacity = capacity
        self.clock = clock
        """The time `usage_get` reports its reset times from (seconds since the epoch)."""
        self.faults = faults or Faults()
        self.state_path = state_path
        self.notebooks: dict[str, FakeNotebook] = {}
        self.conversations: dict[str, dict[str, Any]] = {}
        self.counters: dict[str, int] = {}
        self.empty_sources_served = False
        self.calls: list[CallRecord] = []
        self._retained: str | None = None
        """The source the call being applied added though it answers an error (a file that failed to process)."""
        self._processing: Processing | None = None
        """The file the call being applied left processing (`take_processing`)."""
        self.polls = Polls()
        """What moves the processing of files on (`processing_polls`): the calls under way and their answers."""
        self.files = FileSources()
        """The files uploads name, read in one reading process, which ends with `close()` or with this fake."""
        weakref.finalize(self, self.files.close)
        self._journal = Journal(state_path) if state_path is not None else None
        if state_path is not None and (state_path.exists() or journal_path(state_path).exists()):
            self._load(state_path)
        self._journaled = len(self.calls)
        """The calls before this one are in the snapshot or the journal."""

    # ----- calls, faults and persistence -----

    def plan(self, tool: str) -> CallPlan:
        """Count one call of `tool` and decide which faults it meets."""
        return plan_call(self.faults, self.counters, tool)

    def apply(self, tool: str, arguments: dict[str, Any], plan: CallPlan | None = None) -> dict[str, Any]:
        """Run one tool call (unless a fault answers it first), log it and persist the state."""
        plan = plan or self.plan(tool)
        self._retained = None
        if plan.network_down:
            result = error(account.NETWORK_ERROR)
        elif plan.auth_required:
            result = error(AUTH_ERROR)
        elif plan.login_expired:
            result = error(account.EXPIRED_ERROR)
        elif plan.deadline_exceeded:
            result = deadline_error()
        elif plan.rate_limited or (tool == "notebook_query" and account.allowance_spent(self.faults)):
            result = rate_limit_error(tool)
        elif plan.error is not None:
            result = error(plan.error)
        else:
            result = getattr(self, f"_tool_{tool}")(**arguments)
        # an upload NotebookLM failed to process is an error that still added a source
        applied = result.get("status") == "success" or self._retained is not None
        self.calls.append(CallRecord(tool, _loggable(arguments), applied, str(result.get("status")),
                                     "after" if plan.drop == "after" else None))
        if tool in MUTATING_TOOLS or self._counts_matter() or self.faults.empty_sources_once:
            self._persist(self._changes(tool, arguments, result) if applied else [])
        return result

    def _persist(self, changes: list[dict[str, Any]]) -> None:
        """Journal one call: what it changed, its entry in the call log and the fault counters."""
        if self._journal is None:
            return
        self._journal.append([*changes, {"op": "counters", "counters": self.counters},
                              {"op": "empty_sources_served", "value": self.empty_sources_served},
                              *self._unjournaled_calls()])

    def _unjournaled_calls(self) -> list[dict[str, Any]]:
        """Journal entries for the calls not journaled yet (reads, which journal nothing of their own)."""
        entries = [{"op": "call", "index": i, "call": asdict(self.calls[i])}
                   for i in range(self._journaled, len(self.calls))]
        self._journaled = len(self.calls)
        return entries

    def _changes(self, tool: str, arguments: dict[str, Any], result: dict[str, Any]) -> list[dict[str, Any]]:
        """What a successful call of `tool` changed, as journal entries (each puts or deletes one thing)."""
        if tool == "notebook_create":
            nb = self.notebooks[result["notebook_id"]]
            return [{"op": "notebook", "id": nb.id, "title": nb.title, "created_at": nb.created_at}]
        if tool == "notebook_delete":
            return [{"op": "notebook_deleted", "id": arguments["notebook_id"]}]
        if tool in ("source_add", "source_rename"):
            source_id = result.get("source_id") or self._retained or ""
            notebook = self._notebook_of(source_id)
            source = self.source(source_id)
            if notebook is None or source is None:
                return []
            return [{"op": "source", "notebook_id": notebook.id, "source": asdict(source)}]
        if tool == "source_delete":
            targets = as_list(arguments.get("source_ids")) or [str(arguments.get("source_id") or "")]
            return [{"op": "source_deleted", "id": sid} for sid in targets if sid]
        if tool == "notebook_query":
            conversation_id = result["conversation_id"]
            return [{"op": "conversation", "id": conversation_id,
                     "conversation": self.conversations[conversation_id]}]
        return []

    def _replay(self, change: dict[str, Any]) -> None:
        op = change["op"]
        if op == "notebook":
            self.notebooks.setdefault(change["id"], FakeNotebook(str(change["id"]), str(change["title"]),
                                                                 float(change["created_at"])))
        elif op == "notebook_deleted":
            self.notebooks.pop(change["id"], None)
        elif op == "source":
            notebook = self.notebooks.get(change["notebook_id"])
            if notebook is not None:
                source = FakeSource(**change["source"])
                notebook.sources[source.id] = source
        elif op == "source_deleted":
            notebook = self._notebook_of(change["id"])
            if notebook is not None:
                del notebook.sources[change["id"]]
        elif op == "conversation":
            self.conversations[str(change["id"])] = dict(change["conversation"])
        elif op == "counters":
            self.counters = {str(k): int(v) for k, v in change["counters"].items()}
        elif op == "empty_sources_served":
            self.empty_sources_served = bool(change["value"])
        elif op == "call":
            if int(change["index"]) >= len(self.calls):  # an entry the snapshot already holds is skipped
                self.calls.append(CallRecord(**change["call"]))
        else:
            raise ValueError(f"unknown change {op!r} in the journal")

    def _counts_matter(self) -> bool:
        """Whether a fault depends on call numbers, so the counters must survive a restart at once."""
        return bool(self.faults.drops or any(r.nth for r in self.faults.errors)
                    or any(r.nth for r in self.faults.rate_limits) or self.faults.expire_login_after is not None
                    or self.faults.login_back_after is not None)

    def record_dropped(self, tool: str, arguments: dict[str, Any]) -> None:
        """Log a call dropped before it was applied."""
        self.calls.append(CallRecord(tool, _loggable(arguments), False, "dropped", "before"))
        self._persist([])

    def source(self, source_id: str) -> FakeSource | None:
        for notebook in self.notebooks.values():
            if source_id in notebook.sources:
                return notebook.sources[source_id]
        return None

    def _notebook_of(self, source_id: str) -> FakeNotebook | None:
        return next((nb for nb in self.notebooks.values() if source_id in nb.sources), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": STATE_FORMAT,
            "version": STATE_VERSION,
            "notebooks": [{"id": nb.id, "title": nb.title, "created_at": nb.created_at,
                           "sources": [asdict(s) for s in nb.sources.values()]} for nb in self.notebooks.values()],
            "conversations": self.conversations,
            "counters": self.counters,
            "empty_sources_served": self.empty_sources_served,
            "calls": [asdict(c) for c in self.calls],
        }

    def close(self) -> None:
        """End the process that reads the files uploads name (the next upload starts another)."""
        self.files.close()

    def save(self) -> None:
        """Bring the state file up to date (nothing without a state path): the calls not journaled yet go to
        the journal; the whole state is written as the snapshot (atomically) and the journal emptied only when
        there is no snapshot yet or the journal has grown to `COMPACT_JOURNAL_AT` of it — so stopping after a
        few calls costs their size, not the notebook's."""
        if self.state_path is None or self._journal is None:
            return
        pending = self._unjournaled_calls()
        if pending:
            self._journal.append(pending)
        try:
            snapshot = self.state_path.stat().st_size
        except FileNotFoundError:
            snapshot = 0
        if snapshot and self._journal.size() < snapshot * COMPACT_JOURNAL_AT:
            return
        write_snapshot(self.state_path, self.to_json())
        self._journal.clear()

    def _load(self, path: Path) -> None:
        try:
            if path.exists():
                data = json.loads(path.read_text(encoding="utf-8"))
                if not isinstance(data, dict) or data.get("format") != STATE_FORMAT:
                    raise ValueError("not a fake NotebookLM state file")
                if data.get("version") != STATE_VERSION:
                    raise ValueError(f"unsupported version {data.get('version')!r}")
                for nb in data["notebooks"]:
                    notebook = FakeNotebook(str(nb["id"]), str(nb["title"]), float(nb["created_at"]))
                    for src in nb["sources"]:
                        notebook.sources[src["id"]] = FakeSource(**src)
                    self.notebooks[notebook.id] = notebook
                self.conversations = dict(data["conversations"])
                self.counters = {str(k): int(v) for k, v in data["counters"].items()}
                self.empty_sources_served = bool(data["empty_sources_served"])
                self.calls = [CallRecord(**c) for c in data["calls"]]
            if self._journal is not None:
                for change in self._journal.entries():
                    self._replay(change)
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
            raise InputError(f"{path}: cannot read fake server state: {exc}") from None

    # ----- tools (same names, arguments and result shapes as the real server) -----

    def _tool_server_info(self) -> dict[str, Any]:
        return {"status": "success", "version": FAKE_VERSION, "latest_version": FAKE_VERSION,
                "update_available": False, "auth_status": account.auth_status(self.faults, self.counters),
                "server": "nlmsync fake NotebookLM"}

    def _tool_refresh_auth(self, profile: str | None = None) -> dict[str, Any]:
        return account.refresh_auth(self.faults, self.counters)

    def _tool_usage_get(self, profile: str | None = None) -> dict[str, Any]:
        return account.usage_get(self.faults, self.clock())

    def _notebook_summary(self, nb: FakeNotebook) -> dict[str, Any]:
        return {"id": nb.id, "title": nb.title, "source_count": len(nb.sources),
                "url": f"https://notebooklm.google.com/notebook/{nb.id}"}

    def _tool_notebook_list(self, max_results: int = 100) -> dict[str, Any]:
        notebooks = [{**self._notebook_summary(nb), "ownership": "owned", "is_shared": False}
                     for nb in list(self.notebooks.values())[:max(max_results, 0)]]
        return {"status": "success", "notebooks": notebooks, "count": len(notebooks),
                "owned_count": len(notebooks), "shared_count": 0}

    def _tool_notebook_get(self, notebook_id: str) -> dict[str, Any]:
        nb = self.notebooks.get(notebook_id)
        if nb is None:
            return not_found("Notebook", notebook_id)
        sources = [{"id": s.id, "title": s.title} for s in nb.sources.values()]
        if self.faults.empty_sources_once and sources and not self.empty_sources_served:
            self.empty_sources_served = True
            sources = []
        summary = self._notebook_summary(nb)
        summary["source_count"] = len(sources)
        return {"status": "success", "notebook": summary, "sources": sources}

    def _tool_notebook_create(self, title: str = "") -> dict[str, Any]:
        nb = FakeNotebook(str(uuid.uuid4()), title.strip() or "Untitled notebook", time.time())
        self.notebooks[nb.id] = nb
        summary = self._notebook_summary(nb)
        return {"status": "success", "notebook_id": nb.id,
                "notebook": {"id": nb.id, "title": nb.title, "url": summary["url"]},
                "message": f"Created notebook: {nb.title}"}

    def _tool_notebook_delete(self, notebook_id: str, confirm: bool = False) -> dict[str, Any]:
        if not confirm:
            return error("Deletion not confirmed. Set confirm=True only after user approval.",
                         warning="This action is IRREVERSIBLE.")
        if self.notebooks.pop(notebook_id, None) is None:
            return not_found("Notebook", notebook_id)
        return {"status": "success", "message": f"Notebook {notebook_id} has been permanently deleted."}

    def _tool_source_add(self, notebook_id: str, source_type: str, url: str | None = None,
                         urls: str | list[str] | None = None, text: str | None = None, title: str | None = None,
                         file_path: str | None = None, document_id: str | None = None, doc_type: str = "doc",
                         wait: bool = False, wait_timeout: float = 120.0) -> dict[str, Any]:
        nb = self.notebooks.get(notebook_id)
        if source_type == "file":
            return self._add_file(nb, notebook_id, file_path, title, wait, wait_timeout)
        if source_type == "text":
            if not text:
                return error("text is required for source_type='text'")
            content, default_title = text, "Pasted Text"
        elif source_type == "url":
            if not url:
                return error("url is required for source_type='url'")
            content, default_title = url, url
        else:
            return error(f"Unknown source_type '{source_type}' (the fake server accepts text, url and file)")
        if nb is None:
            return not_found("Notebook", notebook_id)
        if len(content.encode("utf-8")) > MAX_TEXT_BYTES:
            return error(f"Text too large: {len(content.encode('utf-8'))} bytes (maximum {MAX_TEXT_BYTES} bytes "
                         "per request)")

        chosen = title if title else default_title
        if len(chosen) > MAX_TITLE_CHARS:
            return error(f"Invalid title: {len(chosen)} characters (maximum {MAX_TITLE_CHARS})")
        if len(nb.sources) >= self.capacity:
            return notebook_full(notebook_id, len(nb.sources), self.capacity)
        source = FakeSource(str(uuid.uuid4()), chosen, content, source_type)
        nb.sources[source.id] = source
        return {"status": "success", "ready": wait, "source_type": source_type, "source_id": source.id,
                "title": source.title}

    def _add_file(self, nb: FakeNotebook | None, notebook_id: str, file_path: str | None, title: str | None,
                  wait: bool, wait_timeout: float = 120.0) -> dict[str, Any]:
        """A file uploaded as the real server uploads it: named after the file, its text read as nlmsync reads it
        (none for a scanned PDF or an image, which NotebookLM reads itself and the fake cannot), then given `title`
        by a rename (which `file_titles_ignored` makes not take). A file NotebookLM cannot process (`processed`,
        or named by `processing_fails`) stays in the notebook as a source that failed to process, holding no text,
        which an add that waits reports. An audio or video file under `processing_polls` is left processing: the
        server's runner waits for it (`take_processing`, `poll`) before it answers."""
        if not file_path:
            return error("file_path is required for source_type='file'")
        refusal = file_outside_allowed_dirs(file_path)
        if refusal is not None:
            return error(refusal)
        problem, document = self.files.read(file_path)
        if problem is not None:
            return error(f"Could not add file source: {problem}",
                         hint="File paths must be accessible on the machine running nlm or the MCP server. "
                              f"Received path: {file_path}")
        assert document is not None
        if nb is None:
            return error(f"Could not add file source: Notebook {notebook_id} not found.")
        if len(nb.sources) >= self.capacity:
            return notebook_full(notebook_id, len(nb.sources), self.capacity)
        name = Path(file_path).name
        fails = self.faults.fails_processing(file_path) or not processed(document)
        source = FakeSource(str(uuid.uuid4()), name, "" if fails else document.text, "file")
        nb.sources[source.id] = source
        if fails and (wait or title):
            # the real server waits before it renames: a file NotebookLM cannot process fails that wait
            self._retained = source.id
            return error(f"Source {source.id} failed to process in NotebookLM.",
                         hint="The failed source entry was retained for inspection. Delete it with "
                              f"'nlm source delete {source.id}' if it is no longer needed.")
        if (wait or title) and self.faults.processing_polls and is_media(name):
            # the real server waits for the processing before it renames (a title makes it wait)
            self._processing = Processing(source.id, file_path, title, wait_timeout, self.faults.processing_polls,
                                          record=len(self.calls))
            return {"status": "success", "ready": False, "source_type": "file", "source_id": source.id,
                    "title": name}
        return self._processed(source, title, wait)

    def _processed(self, source: FakeSource, title: str | None, wait: bool) -> dict[str, Any]:
        """The answer to the add of a file source processed: `title` applied by a rename first, unless
        `file_titles_ignored` makes it not take."""
        if title and not self.faults.file_titles_ignored:
            source.title = title.strip()
        return {"status": "success", "ready": wait, "source_type": "file", "source_id": source.id,
                "title": title or source.title}

    def take_processing(self) -> Processing | None:
        """The file the call just applied left processing for its add to wait for (once), or None."""
        processing, self._processing = self._processing, None
        return processing

    def poll(self, processing: Processing) -> dict[str, Any] | None:
        """One status poll of a waiting add: its answer once the file is processed (titled, and journaled) or the
        wait has run out (the source stays, named after its file, as the real server leaves it); None while it
        goes on."""
        processing.polls += 1
        processing.left -= 1
        source = self.source(processing.source_id)
        if source is None:  # deleted meanwhile: the real server's wait would end in an error too
            return error(f"Could not add file source: Source {processing.source_id} not found.")
        if processing.left <= 0:
            answer = self._processed(source, processing.title, True)
            self._persist(self._changes("source_rename", {}, {"source_id": source.id}))
            return answer
        if not processing.timed_out():
            return None
        self.calls[processing.record] = replace(self.calls[processing.record], status="error")
        return error(f"Could not add file source: Source {source.id} not ready after {processing.wait_timeout}s",
                     hint="File paths must be accessible on the machine running nlm or the MCP server. "
                          f"Received path: {processing.file_path}")

    def _tool_source_delete(self, source_id: str | None = None, source_ids: str | list[str] | None = None,
                            confirm: bool = False) -> dict[str, Any]:
        if not confirm:
            return error("Deletion not confirmed. Set confirm=True after user approval.",
                         warning="This action is IRREVERSIBLE.")
        targets = as_list(source_ids) or ([source_id] if source_id else [])
        if not targets:
            return error("Either source_id or source_ids is required.")
        missing = next((sid for sid in targets if self._notebook_of(sid) is None), None)
        if missing is not None:
            return not_found("Source", missing)
        for sid in targets:
            notebook = self._notebook_of(sid)
            if notebook is not None:
                del notebook.sources[sid]
        if source_ids:
            return {"status": "success", "message": f"{len(targets)} sources have been permanently deleted.",
                    "deleted_count": len(targets)}
        return {"status": "success", "message": f"Source {targets[0]} has been permanently deleted."}

    def _tool_source_rename(self, notebook_id: str, source_id: str, new_title: str) -> dict[str, Any]:
        if not new_title.strip():
            return error("new_title cannot be empty.")
        nb = self.notebooks.get(notebook_id)
        if nb is None:
            return not_found("Notebook", notebook_id)
        source = nb.sources.get(source_id)
        if source is None:
            return not_found("Source", source_id)
        source.title = new_title.strip()
        return {"status": "success", "source_id": source.id, "title": source.title}

    def _tool_source_describe(self, source_id: str) -> dict[str, Any]:
        source = self.source(source_id)
        if source is None:
            return not_found("Source", source_id)
        keywords = [word for word, _ in Counter(t for t in tokenize(source.text) if len(t) > 3).most_common(5)]
        summary = " ".join(source.text.split()[:60])
        return {"status": "success", "summary": summary, "keywords": keywords}

    def _tool_source_get_content(self, source_id: str, wait: bool = False, wait_timeout: float = 120.0,
                                 poll_interval: float = 3.0) -> dict[str, Any]:
        source = self.source(source_id)
        if source is None:
            return not_found("Source", source_id)
        content = indexed_text(source.text)
        return {"status": "success", "content": content, "title": source.title,
                "source_type": source.source_type, "char_count": len(content)}

    def _tool_notebook_query(self, notebook_id: str, query: str, source_ids: str | list[str] | None = None,
                             conversation_id: str | None = None, timeout: float | None = None,
                             new_conversation: bool = False) -> dict[str, Any]:
        if not query.strip():
            return error("Please provide a question to ask.")
        nb = self.notebooks.get(notebook_id)
        if nb is None:
            return not_found("Notebook", notebook_id)
        wanted = as_list(source_ids)
        if wanted is None:
            chosen = list(nb.sources.values())
        else:
            unknown = next((sid for sid in wanted if sid not in nb.sources), None)
            if unknown is not None:
                return error(f"Source {unknown} not found in notebook {notebook_id}.")
            chosen = [nb.sources[sid] for sid in dict.fromkeys(wanted)]
        if not chosen:
            return error(f"Notebook {notebook_id} has no sources to query.")
        if conversation_id is not None:
            conversation = self.conversations.get(conversation_id)
            if conversation is None or conversation["notebook_id"] != notebook_id:
                return error(f"Conversation {conversation_id} not found.")
        else:
            conversation_id = str(uuid.uuid4())
            conversation = self.conversations[conversation_id] = {"notebook_id": notebook_id, "turns": []}
        answer = compose_answer(query, [(s.id, s.text) for s in chosen])
        conversation["turns"].append([query, answer["answer"]])
        return {"status": "success", **answer, "question": query, "conversation_id": conversation_id,
                "turn_number": len(conversation["turns"]), "is_follow_up": len(conversation["turns"]) > 1}

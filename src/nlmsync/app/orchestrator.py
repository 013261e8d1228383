"""The Orchestrator: select → ensure sources → query → record. Used by the CLI, `watch` and `serve`.

One `Orchestrator` serves one run: it holds the settings, the state store and a connected NotebookLM
client. Every run that writes holds the store's cross-process writer lock, reads the notebook once
(`notebook_get`), levels the state file with it (`sync.level_with_notebook`), reconciles the registry, retries
deletions earlier runs left behind, and only then makes its own changes through `ensure_sources_for_paths`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from nlmsync.app.allowance import Allowance, plan_capacity
from nlmsync.app.citations import map_citations
from nlmsync.app.messages import partial_failure_message
from nlmsync.app.notebooks import notebook_not_found, planned_title, resolve_notebook
from nlmsync.app.progress import ProgressSink
from nlmsync.app.refresh_notes import all_notes_scope, named_notes, synced_notes, vault_notes
from nlmsync.app.results import (
    AskResult,
    ReconcileReport,
    SelectedNote,
    StatusReport,
)
from nlmsync.app.servers import connect_server
from nlmsync.app.status import status_report
from nlmsync.app.writer import held_writer
from nlmsync.config import Settings
from nlmsync.errors import (
    InputError,
    NlmsyncError,
    NotFoundError,
    PartialFailure,
    RateLimitedError,
    ServerError,
    ServerValidationError,
    UsageError,
)
from nlmsync.notebooklm import PLAN_CAPACITIES, NotebookDetails, NotebookLMClient, QueryAnswer
from nlmsync.store import Capacity, StateStore
from nlmsync.sync import (
    Branch,
    NoteOutcome,
    PackOutcome,
    RefreshReport,
    RemoteView,
    SyncDeps,
    accounted_ids,
    ensure_sources_for_paths,
    given_capacity,
    history_source_ids,
    level_with_notebook,
    lookalike_notice,
    notes_done,
    orphan_ids,
    packs_done,
    read_remote,
    retry_pending_deletions,
    sources_layout,
)
from nlmsync.vault import SkippedNote

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from nlmsync.search import NoteIndex, Selection
    from nlmsync.sync.adopt import Levelled


WEAK_MATCH_NOTICE = ("nothing in the vault matches the question well: no note was uploaded for it, and the question "
                     "went to the notebook as it is")


def _dedup(ids: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ids))



class Orchestrator:
    """`refresh`, `ask`, `status`, `reconcile` over one vault, state file and notebook server."""

    def __init__(self, settings: Settings, store: StateStore, client: NotebookLMClient, *,
                 progress: ProgressSink | None = None, index: NoteIndex | None = None,
                 allowance: Allowance | None = None) -> None:
        self.settings = settings
        self.store = store
        self.client = client
        self.progress = progress
        self._index = index
        self.allowance = allowance or Allowance()
        """The plan's usage allowance as last read (`serve` hands every run the one it keeps)."""
        self._fallback: Capacity | None = None
        self.plan: str | None = None  # the plan's name once `_default_capacity` read it (None: not known)
        self.vault_root = Path(settings.vault)
        self._notebook_notices: list[str] = []
        self._levelled: Levelled | None = None
        self._held: dict[str, int] = {}

    @classmethod
    @asynccontextmanager
    async def open(cls, settings: Settings, *, server: str | MCPServer | None = None,
                   progress: ProgressSink | None = None) -> AsyncIterator[Orchestrator]:
        """Open the state file and connect to the server (`server` overrides `settings.server`).

        Raises:
            InputError: the vault is not a directory.
            StateError: the state file cannot be used.
            NotebookLMError: the server cannot be reached.
        """
        if not Path(settings.vault).is_dir():
            raise InputError(f"{settings.vault}: the vault is not a directory")
        store = StateStore.open(settings.state_path, settings)
        try:
            async with connect_server(settings, server) as client:
                yield cls(settings, store, client, progress=progress)
        finally:
            store.close()

    @property
    def index(self) -> NoteIndex:
        """The search index, loaded on first use: a refresh of paths or of the whole vault never pays for it."""
        if self._index is None:
            from nlmsync.search import NoteIndex

            self._index = NoteIndex(self.vault_root, self.store.db, self.settings)
        return self._index

    def _selection(self, query: str) -> Selection:
        """What the selection rule makes of `query`: the notes it picks, or that nothing matches it well; an index
        that must be brought up to date first (a fresh vault of thousands of notes takes a while) reports its
        progress."""
        return self.index.selection(query, on_progress=self.progress.indexing if self.progress is not None else None)

    # --- notebook and remote -------------------------------------------------------------------
    async def _notebook(self, *, create: bool, planned: bool = False) -> tuple[str, NotebookDetails | None]:
        """The notebook of this run, and its `notebook_get` answer when reading it was needed (`resolve_notebook`)."""
        return await resolve_notebook(self.client, self.store, (self.settings.notebook or "").strip(),
                                      create=create, planned=planned, notice=self._notebook_notices.append)

    async def _remote(self, notebook_id: str, first: NotebookDetails | None) -> RemoteView:
        """The run's picture of the notebook.

        Raises:
            NotebookNotFoundError: the server has no notebook `notebook_id` (bad input, exit 2).
        """
        expect = self.store.has_active_mapping(notebook_id)
        try:
            remote = await read_remote(self.client, notebook_id, expect_sources=expect, first=first)
            self._held[notebook_id] = len(remote)
            return remote
        except NotFoundError:
            raise await notebook_not_found(self.client, notebook_id,
                                           given=bool((self.settings.notebook or "").strip())) from None

    def _notices(self, remote: RemoteView) -> list[str]:
        """What a run tells the user beyond its notes: the notebook adopted from the server, look-alike sources
        left alone, rate-limit pauses."""
        notices = [*dict.fromkeys(self._notebook_notices)]
        if self._levelled is not None and (said := self._levelled.notice()):
            notices.append(said)
        self._levelled = None
        notices.extend(lookalike_notice(i, t) for i, t in remote.foreign.items())
        self._notebook_notices.clear()
        paced = self.client.add_rate_notice()
        return [*notices, paced] if paced else notices

    async def _default_capacity(self, notebook_id: str | None = None) -> None:
        """The one place the plan's figure becomes the capacity a run falls back to when none is given for it
        (`plan_capacity`: the sources per notebook of the tier the server reports, the default 50 when it does not
        say); read once per run, and not at all when a capacity is given — now, or on an earlier run for
        `notebook_id` (the user's word wins over the plan, so a refresh or a question then costs no usage read;
        `status` names `notebook_id` None, since it shows the plan)."""
        remembered = notebook_id is not None and self.store.remembered_capacity(notebook_id) is not None
        if self._fallback is None and given_capacity(self.settings) is None and not remembered:
            plan = await plan_capacity(self.client, self.allowance)
            self._fallback, self.plan = Capacity(plan.capacity, "plan" if plan.plan else "default"), plan.plan

    def _deps(self, notebook_id: str) -> SyncDeps:
        return SyncDeps(self.client, self.store, self.vault_root, self.settings, notebook_id,
                        on_progress=self.progress.advance if self.progress else None,
                        on_phase=self.progress.start if self.progress else None,
                        on_reading=self.progress.reading if self.progress else None,
                        limit=self.capacity(notebook_id))

    def capacity(self, notebook_id: str) -> Capacity:
        """How many sources the notebook may hold, and where the figure comes from (`StateStore.capacity`): the
        capacity given for this run, else the one given before for this notebook, else the plan's
        (`_default_capacity`) or the default — or, for a notebook read to hold more than that, the smallest plan's
        that allows what it holds; fewer once the server refused an add as full."""
        fallback = self._fallback or Capacity(self.settings.capacity, "default")
        held = self._held.get(notebook_id, 0)
        if held > fallback.value:
            fallback = Capacity(next((n for n in PLAN_CAPACITIES if n >= held), held), "held")
        return self.store.capacity(notebook_id, given_capacity(self.settings), fallback)

    def _mark_adopted(self, notes: Sequence[NoteOutcome], packs: Sequence[PackOutcome]) -> None:
        """The notes and packs the run took from the notebook rather than uploading say so (`adopted`)."""
        if self._levelled is None:
            return
        paths, ids = set(self._levelled.notes), set(self._levelled.packs)
        for note in notes:
            if note.branch == Branch.REUSED and note.path in paths:
                note.adopted = True
        for pack in packs:
            if pack.branch == Branch.REUSED and pack.source_id in ids:
                pack.adopted = True

    def _remember(self, notebook_id: str) -> None:
        """What a run that writes keeps for the notebook it worked on: it becomes the vault's notebook (later runs
        need no --notebook), and a capacity given for it holds on later runs that give none."""
        if self.store.default_notebook() != notebook_id:
            self.store.set_default_notebook(notebook_id)
        given = given_capacity(self.settings)
        if given is not None:
            self.store.remember_capacity(notebook_id, given)

    async def _prepare_run(self, notebook_id: str, first: NotebookDetails | None, *,
                           dry_run: bool) -> tuple[RemoteView, int, int]:
        await self._default_capacity(notebook_id)
        if dry_run and (title := planned_title(notebook_id)) is not None:
            return RemoteView(notebook_id, title), 0, 0
        remote = await self._remote(notebook_id, first)
        if not dry_run:
            self._remember(notebook_id)
            if self.store.reconcile_needed(notebook_id, remote.ids()):
                self.store.reconcile(notebook_id, remote.ids())
        # the state file is a cache of the notebook: what another machine or an interrupted run uploaded is
        # adopted before anything is planned (a dry run too, so that its plan is the real one)
        self._levelled = await level_with_notebook(self._deps(notebook_id), remote)
        if dry_run:
            return remote, 0, len(self.store.pending_deletions(notebook_id))
        done, left = await retry_pending_deletions(self._deps(notebook_id), remote)
        return remote, done, left

    # --- refresh -------------------------------------------------------------------------------
    async def refresh(self, paths: Sequence[str] = (), *, query: str | None = None, all_notes: bool = False,
                      dry_run: bool = False) -> RefreshReport:
        """Make notes live sources: the given paths (vault-relative notes or folders; the command line makes its
        arguments so), the notes `query` selects, every note of the vault (`all_notes`, which also removes the
        sources of notes that left the vault — only under the given paths when there are some), or — with
        none of these — the notes already synced.

        Returns the report; when some notes failed, raises `PartialFailure` carrying it instead.

        Raises:
            PartialFailure: some notes failed, the rest were done and recorded (exit 6).
            CapacityError: the requested notes cannot fit, or no managed source may be evicted (exit 3).
            InputError: a path is not a note of the vault.
            NotebookNotFoundError: the server has no such notebook (exit 2; the hint lists its notebooks).
            NotebookLMError: the server cannot be used any more.
            An error that stops the run once notes were handled carries the `RefreshReport` of what was
            done and recorded in its `report`.
        """
        report = RefreshReport(notebook_id=(self.settings.notebook or "").strip(), dry_run=dry_run,
                               capacity=self.settings.capacity)
        try:
            selected = await self._refresh_into(report, paths, query, all_notes, dry_run)
        except NlmsyncError as exc:
            # Stopped (capacity, server gone, login needed …): the report says what was done and recorded before.
            exc.report = report
            raise
        if report.failed or report.failed_packs:
            raise PartialFailure(partial_failure_message(report, len(selected)), report=report)
        return report

    async def _refresh_into(self, report: RefreshReport, paths: Sequence[str], query: str | None, all_notes: bool,
                            dry_run: bool) -> list[str]:
        """The work of `refresh`, recorded in `report` as it goes; returns the notes it was asked to refresh."""
        async with held_writer(self.store):
            # bad paths are refused before the server is touched; `--all` also takes paths no longer in the vault
            named, roots = named_notes(self.vault_root, paths, gone_ok=all_notes)
            notebook_id, first = await self._notebook(create=not dry_run, planned=dry_run)
            report.notebook_id = notebook_id
            remote, report.pending_deletions_done_count, report.pending_deletions_left_count = await self._prepare_run(
                notebook_id, first, dry_run=dry_run)
            selected, found, passed_over, stats = self._refresh_paths(notebook_id, named, query, all_notes, report)
            scope = all_notes_scope(self.store, notebook_id, paths, roots, selected) if all_notes else None
            try:
                if self.progress:
                    self.progress.start("refresh", len(selected))
                prepared = await ensure_sources_for_paths(self._deps(notebook_id), selected, remote,
                                                          dry_run=dry_run, found=found, all_notes=scope,
                                                          stats=stats)
                self._mark_adopted(prepared.notes, prepared.packs)
                report.notes.extend(prepared.notes)
                report.notes.extend(NoteOutcome(path=skip.path, branch=Branch.EXCLUDED, reason=skip.reason)
                                    for skip in passed_over)
                report.packs.extend(prepared.packs)
            except NlmsyncError as exc:
                report.notes.extend(notes_done(exc))
                report.packs.extend(packs_done(exc))
                raise
            finally:
                report.source_count = len(remote)
                limit = self.capacity(notebook_id)
                report.capacity, report.capacity_source = limit.value, limit.source
                if not dry_run:  # what this run could not delete waits with what earlier runs left
                    report.pending_deletions_left_count = len(self.store.pending_deletions(notebook_id))
                report.notices.extend(self._notices(remote))
                if not dry_run:
                    report.layout = sources_layout(self.store, notebook_id, remote)
        return selected

    async def keep_current(self, paths: Sequence[str]) -> RefreshReport | None:
        """Refresh those of `paths` that are already synced to the notebook (watch mode) — in a packed notebook
        every note of `paths` that is in the vault, since each note belongs in a pack; None if none are.

        Raises:
            PartialFailure, CapacityError: as `refresh`.
        """
        notebook_id, _ = await self._notebook(create=False)
        synced = {m.path for m in self.store.all_mappings(notebook_id)} | set(self.store.pack_members(notebook_id))
        packed = self.store.has_packs(notebook_id)
        wanted = [p for p in paths if p in synced or (packed and (self.vault_root / p).is_file())]
        return await self.refresh(wanted) if wanted else None

    def _refresh_paths(self, notebook_id: str, named: list[tuple[str, bool]] | None, query: str | None,
                       all_notes: bool, report: RefreshReport
                       ) -> tuple[list[str], set[str], list[SkippedNote], dict[str, tuple[int, int]]]:
        """The notes to refresh, which of them were found by walking the vault rather than named, (for the whole
        vault) the note files the walk passed over, which the report lists with the reason, and the modification
        time and size the walk found the notes' files with. A `query` nothing matches well adds no note, and the
        report says so."""
        if all_notes and named is None:
            walked, passed_over = vault_notes(self.vault_root, self.settings.exclude)
            stats = {path: stat for path, stat in walked.items() if stat is not None}
            return list(walked), set(walked), passed_over, stats
        if named is None and query is None:
            named = [(note, False) for note in synced_notes(self.store, self.vault_root, notebook_id)]
        chosen = [note for note, _ in named or ()]
        if query is not None:
            selection = self._selection(query)
            chosen.extend(hit.path for hit in selection.chosen)
            if selection.weak:
                report.weak_match = True
                report.notices.append(WEAK_MATCH_NOTICE)
        unique = list(dict.fromkeys(chosen))
        return unique, set(unique) - {note for note, by_name in named or () if by_name}, [], {}

    # --- ask -----------------------------------------------------------------------------------
    async def ask(self, question: str, conversation_id: str | None = None, new: bool = False) -> AskResult:
        """Select notes for `question`, make them live, query with the sources the conversation carries over, record the turn.

        Continues the notebook's latest conversation unless `new` or `conversation_id` says otherwise.

        Raises:
            UsageError: the question is empty.
            CapacityError: the selected notes cannot be made live.
            NotebookLMError: the query failed.
        """
        if not question.strip():
            raise UsageError("the question is empty")
        await self.allowance.check(self.client)  # before anything is uploaded for a question not sent
        async with held_writer(self.store):  # sources are prepared by one run at a time …
            notebook_id, first = await self._notebook(create=True)
            remote, _, _ = await self._prepare_run(notebook_id, first, dry_run=False)
            selection = self._selection(question)
            hits = selection.chosen
            if self.progress:
                self.progress.start("preparing sources", len(hits))
            prepared = await ensure_sources_for_paths(self._deps(notebook_id), [h.path for h in hits], remote)
            outcomes = prepared.notes
            self._mark_adopted(outcomes, prepared.packs)
            result = AskResult(notebook_id=notebook_id, question=question, answer="", conversation_id=None,
                               selected_notes=[SelectedNote(path=h.path, score=h.score) for h in hits], notes=outcomes,
                               packs=prepared.packs, weak_match=selection.weak,
                               question_language=selection.language or None)
            if selection.weak:
                result.notices.append(WEAK_MATCH_NOTICE)
            live = [o for o in outcomes if o.branch in (Branch.REUSED, Branch.REPLACED, Branch.RENAMED, Branch.ADDED)]
            result.notices.extend(f"{o.path}: {o.error}" for o in outcomes if o.branch == Branch.FAILED)
            result.notices.extend(self._notices(remote))
            conversation = None if new else (conversation_id or self.store.latest_conversation(notebook_id))
            earlier: set[str] = set()
            if conversation is not None:
                records = self.store.query_records(notebook_id, conversation)
                earlier = {path for record in records for path in record.selected_paths}
                result.carried_over_source_ids = history_source_ids([r.source_ids for r in records],
                                                         self.store.resolve_source_id, remote.ids(),
                                                         self.settings.carry_over_cap)
            result.source_ids = _dedup([sid for o in live for sid in o.source_ids] + result.carried_over_source_ids)
        # … but the query, which may take minutes, holds no lock: a scheduled refresh is not refused meanwhile.
        if not result.source_ids:
            if not len(remote) and not hits:
                raise InputError(f"no note of the vault matches the question, and notebook {notebook_id} holds no "
                                 "source to ask instead", hint="ask about something the vault's notes say, or "
                                 "upload notes first with 'nlmsync refresh'")
            if not selection.weak:
                result.notices.append("no note matched the question; asking the whole notebook")
        if self.progress:
            self.progress.start(f"asking NotebookLM ({len(result.source_ids)} sources)", 1)
        answer, conversation = await self._query(notebook_id, question, result.source_ids or None,
                                                 conversation, result)
        result.answer = answer.answer
        result.conversation_id = answer.conversation_id or conversation
        result.citations = map_citations(self.store, self.vault_root, notebook_id, answer, live,
                                         self._citation_preference(selection, earlier))
        if result.conversation_id:
            async with held_writer(self.store):
                self.store.record_turn(notebook_id, result.conversation_id, question, answer.answer,
                                       result.source_ids, [o.path for o in live], answer.citations)
        return result

    def _citation_preference(self, selection: Selection,
                             earlier: set[str]) -> Callable[[str], tuple[bool, bool, bool, float]]:
        """Which of several notes of a pack that hold a quote alike a citation names: the note selected for the
        question, then one in the question's language, then one the conversation already used, then the one
        ranking best for the question; pack order only when nothing tells them apart."""
        chosen = {hit.path for hit in selection.chosen}
        scores = {hit.path: hit.score for hit in selection.hits}
        languages: dict[str, str] = {}

        def key(path: str) -> tuple[bool, bool, bool, float]:
            if path not in languages:
                fact = self.index.facts([path]).get(path)
                languages[path] = fact.lang if fact is not None else ""
            other = bool(selection.language) and languages[path] != selection.language
            return path not in chosen, other, path not in earlier, -scores.get(path, 0.0)

        return key

    async def _query(self, notebook_id: str, question: str, source_ids: list[str] | None,
                     conversation: str | None, result: AskResult) -> tuple[QueryAnswer, str | None]:
        """The answer, and the conversation it continued (None once the server rejected `conversation`)."""
        timeout = self.settings.query_timeout
        try:
            return await self.client.notebook_query(notebook_id, question, source_ids=source_ids,
                                                    conversation_id=conversation, timeout=timeout), conversation
        except RateLimitedError as exc:
            raise await self.allowance.refused(self.client, exc) from None
        except (NotFoundError, ServerValidationError, ServerError) as exc:
            if conversation is None or (isinstance(exc, ServerError) and "conversation" not in str(exc).lower()):
                raise
            result.notices.append(f"the server rejected conversation {conversation} ({exc}); "
                                  "asked again in a new conversation")
            return await self.client.notebook_query(notebook_id, question, source_ids=source_ids,
                                                    conversation_id=None, timeout=timeout), None

    # --- status and reconcile ------------------------------------------------------------------
    async def listing(self, *, level: bool = False) -> tuple[str, RemoteView]:
        """The notebook of this run and a fresh listing of it; with `level`, the state file is first brought level
        with what the notebook holds and it does not know yet (`status`, `sources`), and a vault that has no
        notebook yet (a fresh machine, a lost state file) takes this one: its next command needs no --notebook.
        A vault that has one keeps it: looking at another notebook does not rebind the vault."""
        notebook_id, first = await self._notebook(create=False)
        remote = await self._remote(notebook_id, first)
        if level:
            async with held_writer(self.store):
                await self._level(notebook_id, remote)
        return notebook_id, remote

    async def _level(self, notebook_id: str, remote: RemoteView) -> None:
        """For a command that looks at the notebook (under the writer lock): the state file brought level with what
        the notebook holds, and the notebook taken as the vault's when it has none yet (see `listing`)."""
        if self.store.default_notebook() is None:
            self.store.set_default_notebook(notebook_id)
        await level_with_notebook(self._deps(notebook_id), remote)

    async def status(self, paths: Sequence[str] = ()) -> StatusReport:
        """The registry against the remote listing and the vault, with the next steps, and for each of `paths`
        (vault-relative notes) the source that holds it; changes nothing."""
        notebook_id, remote = await self.listing(level=True)
        await self._default_capacity()
        return status_report(self.store, self.settings, notebook_id, remote, limit=self.capacity(notebook_id),
                             plan=self.plan, allowance=await self.allowance.read(self.client), paths=paths)

    async def reconcile(self) -> ReconcileReport:
        """Reconciliation against one fresh listing: mark mappings active (canonical ids) or stale."""
        async with held_writer(self.store):
            notebook_id, remote = await self.listing()
            await self._level(notebook_id, remote)
            result = self.store.reconcile(notebook_id, remote.ids())
            orphans = orphan_ids(remote, accounted_ids(self.store, notebook_id))
        return ReconcileReport(notebook_id=notebook_id, active_count=len(result.active),
                               stale_paths=[m.path for m in result.stale],
                               canonicalized_paths=[m.path for m in result.canonicalized],
                               orphan_source_ids=orphans)

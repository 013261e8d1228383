"""The Orchestrator: select → ensure sources → query → record. Used by the CLI, `watch` and `serve`.

One `Orchestrator` serves one run: it holds the settings, the state store and a connected NotebookLM
client. Every run that writes holds the store's cross-process writer lock (waited for without blocking the event
loop: `serve` keeps answering searches, and `watch` keeps taking file events, while another run finishes), reads the notebook once
(`notebook_get`), levels the state file with it (`sync.level_with_notebook`), reconciles the registry, retries
deletions earlier runs left behind, and only then makes its own changes through `ensure_sources_for_paths`.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import ExitStack, asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import anyio

from nlmsync.app.allowance import Allowance, PlanCapacity, plan_capacity
from nlmsync.app.citations import map_citations
from nlmsync.app.follow_up import FOLLOWED_TURNS, follows_up, well_matched
from nlmsync.app.messages import partial_failure_message
from nlmsync.app.notebooks import notebook_not_found, planned_title, resolve_notebook
from nlmsync.app.progress import ProgressSink
from nlmsync.app.refresh_notes import RefreshNotes, all_notes_scope, named_notes, synced_notes, vault_notes
from nlmsync.app.results import (
    AskResult,
    ReconcileReport,
    SelectedNote,
    StatusReport,
)
from nlmsync.app.servers import connect_server
from nlmsync.app.status import status_report
from nlmsync import vault as vault_files
from nlmsync.config import Settings
from nlmsync.errors import (
    AuthenticationRequiredError,
    ConnectionProblem,
    InputError,
    NlmsyncError,
    NotFoundError,
    PartialFailure,
    RateLimitedError,
    ServerCommandNotFoundError,
    ServerError,
    ServerValidationError,
    StateLockedError,
    UsageError,
)
from nlmsync.notebooklm import PLAN_CAPACITIES, NotebookDetails, NotebookLMClient, QueryAnswer
from nlmsync.store import StateStore
from nlmsync.sync import (
    AllNotesScope,
    Branch,
    Capacity,
    KnownCapacity,
    NoteOutcome,
    RefreshReport,
    RemoteView,
    SyncDeps,
    SyncRun,
    accounted_ids,
    decide_capacity,
    ensure_sources_for_paths,
    given_capacity,
    history_source_ids,
    level_with_notebook,
    lookalike_notice,
    orphan_ids,
    read_remote,
    retry_pending_deletions,
    sources_layout,
)

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from nlmsync.search import NoteIndex, SearchHit, Selection


WEAK_MATCH_NOTICE = ("nothing in the vault matches the question well: no note was uploaded for it, and the question "
                     "went to the notebook as it is")


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


def _dedup(ids: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ids))


class Notebook(NamedTuple):
    """The notebook a run works on (`resolve_notebook`): its id, its `notebook_get` answer when finding it read one,
    and what finding it has to tell the user (a notebook of the server's adopted)."""

    notebook_id: str
    first: NotebookDetails | None
    notices: list[str]


class Listing(NamedTuple):
    """A notebook, a fresh listing of it, its capacity as the listing shows it (the plan not read), and what levelling
    the state file with it says (None: nothing, or not levelled)."""

    notebook_id: str
    remote: RemoteView
    capacity: Capacity
    levelled: str | None = None


def plan_figure(plan: PlanCapacity | None) -> int | None:
    """The sources per notebook of the plan, None when the plan was not read or names no tier nlmsync knows."""
    return plan.capacity if plan is not None and plan.plan else None


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
        self._allowance = allowance
        self.vault_root = Path(settings.vault)

    @property
    def allowance(self) -> Allowance:
        """The plan's usage allowance as last read (`serve` hands every run the one it keeps); made when first
        needed, since a run whose capacity is given reads no allowance."""
        if self._allowance is None:
            self._allowance = Allowance()
        return self._allowance

    @allowance.setter
    def allowance(self, allowance: Allowance) -> None:
        self._allowance = allowance

    @property
    def _attachments(self) -> frozenset[str]:
        """The extensions of the attachments a refresh syncs (the `attachments` setting's kinds)."""
        return vault_files.attachment_suffixes(self.settings.attachments)

    @classmethod
    @asynccontextmanager
    async def open(cls, settings: Settings, *, server: str | MCPServer | None = None,
                   progress: ProgressSink | None = None) -> AsyncIterator[Orchestrator]:
        """Open the state file and connect to the server (`server` overrides `settings.server`).

        Raises:
            StateError: the state file cannot be used.
            NotebookLMError: the server cannot be reached.
        """
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

    # --- notebook, capacity and the run ----------------------------------------------------------
    async def _notebook(self, *, create: bool, planned: bool = False) -> Notebook:
        """The notebook of this run (`resolve_notebook`)."""
        notices: list[str] = []
        notebook_id, first = await resolve_notebook(self.client, self.store, (self.settings.notebook or "").strip(),
                                                    vault=self.vault_root, create=create, planned=planned,
                                                    notice=notices.append)
        return Notebook(notebook_id, first, notices)

    async def _remote(self, notebook: Notebook) -> RemoteView:
        """The run's picture of the notebook.

        Raises:
            NotebookNotFoundError: the server has no notebook `notebook_id` (bad input, exit 2).
        """
        expect = self.store.has_active_mapping(notebook.notebook_id)
        try:
            return await read_remote(self.client, notebook.notebook_id, expect_sources=expect, first=notebook.first)
        except NotFoundError:
            raise await notebook_not_found(self.client, notebook.notebook_id,
                                           given=bool((self.settings.notebook or "").strip())) from None

    def _known_capacity(self, notebook_id: str) -> KnownCapacity:
        return replace(KnownCapacity.read(self.store, notebook_id, self.settings), plans=PLAN_CAPACITIES)

    async def _plan(self, read: bool) -> PlanCapacity | None:
        """The plan the capacity may come from (`plan_capacity`: the sources per notebook of the tier the server
        reports), when `read`."""
        return await plan_capacity(self.client, self.allowance) if read else None

    def _deps(self, notebook_id: str, capacity: Capacity | None = None) -> SyncDeps:
        return SyncDeps(self.client, self.store, self.vault_root, self.settings, notebook_id,
                        on_progress=self.progress.advance if self.progress else None,
                        on_phase=self.progress.start if self.progress else None,
                        on_reading=self.progress.reading if self.progress else None, decided=capacity)

    def _remember(self, notebook_id: str) -> None:
        """What a run that writes keeps for the notebook it worked on: it becomes the vault's notebook (later runs
        need no --notebook), and a capacity given for it holds on later runs that give none."""
        if self.store.default_notebook() != notebook_id:
            self.store.set_default_notebook(notebook_id)
        given = given_capacity(self.settings)
        if given is not None:
            self.store.remember_capacity(notebook_id, given)

    async def _prepare_run(self, notebook: Notebook, report: RefreshReport, *, dry_run: bool) -> SyncRun:
        """The run, built once: the notebook read once (`notebook_get`), its capacity decided (the plan read only
        when no capacity is given now or before: the user's word wins, so a refresh or a question then costs no
        usage read), the state file levelled with what the notebook holds, the deletions earlier runs left tried
        again; what the run says of them goes into `report`, which the run adds to."""
        notebook_id = notebook.notebook_id
        report.notebook_id = notebook_id
        known = self._known_capacity(notebook_id)
        plan = await self._plan(known.plan_decides)
        title = planned_title(notebook_id) if dry_run else None
        remote = RemoteView(notebook_id, title) if title is not None else await self._remote(notebook)
        if not dry_run:
            self._remember(notebook_id)
            if self.store.reconcile_needed(notebook_id, remote.ids()):
                self.store.reconcile(notebook_id, remote.ids())
        deps = self._deps(notebook_id, decide_capacity(replace(known, plan=plan_figure(plan), held=len(remote))))
        run = SyncRun(deps, remote, dry_run, report_to=report)
        if title is not None:
            return run  # a notebook the dry run would create: nothing to level, nothing waiting to be deleted
        # the state file is a cache of the notebook: what another machine or an interrupted run uploaded is
        # adopted before anything is planned (a dry run too, so that its plan is the real one)
        run.levelled = await level_with_notebook(deps, remote)
        queued = self.store.pending_deletions(notebook_id)
        if dry_run or not queued:
            report.pending_deletions_left_count = len(queued)
        else:
            report.pending_deletions_done_count, report.pending_deletions_left_count = \
                await retry_pending_deletions(deps, remote, queued)
        return run

    async def _read_notebook(self, report: RefreshReport, *, dry_run: bool) -> tuple[Notebook, SyncRun]:
        """The run's notebook and the run prepared on it (`_prepare_run`). A dry run that cannot read the notebook —
        no Google login yet, the server not reachable or not installed — plans for an empty notebook and says so
        in the report's notices, so the plan for a vault is known before the login works."""
        try:
            notebook = await self._notebook(create=not dry_run, planned=dry_run)
            return notebook, await self._prepare_run(notebook, report, dry_run=dry_run)
        except (AuthenticationRequiredError, ConnectionProblem, ServerCommandNotFoundError) as exc:
            if not dry_run:
                raise
            notebook_id = (self.settings.notebook or "").strip() or self.store.default_notebook() or ""
            report.notebook_id = notebook_id
            report.notices.append(f"the notebook could not be read ({exc.message}): this is the plan for an empty "
                                  "notebook")
            remote = RemoteView(notebook_id, planned_title(notebook_id) or "")
            deps = self._deps(notebook_id, decide_capacity(self._known_capacity(notebook_id)))
            return Notebook(notebook_id, None, []), SyncRun(deps, remote, dry_run, report_to=report)

    def _notices(self, notebook: Notebook, run: SyncRun) -> list[str]:
        """What a run tells the user beyond its notes: the notebook adopted from the server, what levelling adopted
        and deleted, look-alike sources left alone, rate-limit pauses."""
        notices = list(dict.fromkeys(notebook.notices))
        if said := run.levelled.notice():
            notices.append(said)
        notices.extend(lookalike_notice(i, t) for i, t in run.remote.foreign.items())
        paced = self.client.add_rate_notice()
        return [*notices, paced] if paced else notices

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
            An error that stops the run carries the `RefreshReport` of what was done and recorded in its
            `report`.
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
            raise PartialFailure(partial_failure_message(report, selected), report=report)
        return report

    async def _refresh_into(self, report: RefreshReport, paths: Sequence[str], query: str | None, all_notes: bool,
                            dry_run: bool) -> list[str]:
        """The work of `refresh`, added to `report` as it goes; returns the notes it was asked to refresh."""
        async with held_writer(self.store):
            # bad paths are refused before the server is touched; `--all` also takes paths no longer in the vault
            named, roots = named_notes(self.vault_root, paths, gone_ok=all_notes, attachments=self._attachments)
            notebook, run = await self._read_notebook(report, dry_run=dry_run)
            notebook_id = notebook.notebook_id
            chosen = self._refresh_notes(notebook_id, named, query, all_notes, report)
            scope = all_notes_scope(self.store, notebook_id, paths, roots, chosen.paths) if all_notes else None
            finished = False
            try:
                if self.progress:
                    self.progress.start("refresh", len(chosen.paths))
                await ensure_sources_for_paths(run, chosen.paths, found=chosen.found, all_notes=scope,
                                               stats=chosen.stats)
                run = await self._again_if_left_out(notebook, run, report, chosen, scope)
                report.notes.extend(NoteOutcome(path=skip.path, branch=Branch.EXCLUDED, reason=skip.reason)
                                    for skip in chosen.passed_over)
                finished = True
            finally:
                report.source_count = len(run.remote)
                report.capacity, report.capacity_source = run.deps.capacity.value, run.deps.capacity.source
                if not dry_run:  # what this run could not delete waits with what earlier runs left
                    report.pending_deletions_left_count = len(self.store.pending_deletions(notebook_id))
                report.notices.extend(self._notices(notebook, run))
                if not dry_run:  # a run that changed nothing has the registry as it read it
                    report.layout = sources_layout(self.store, notebook_id, run.remote,
                                                   run.registry if finished and not report.changed_notebook else None)
        return chosen.paths

    async def _again_if_left_out(self, notebook: Notebook, run: SyncRun, report: RefreshReport, chosen: RefreshNotes,
                                 scope: AllNotesScope | None) -> SyncRun:
        """A run that changed the notebook reads it again before it declares success: when another device deleted a
        source the run counts on meanwhile, one more pass puts those notes back (and says so); returns the run whose
        listing the report's figures come from.

        Raises:
            PartialFailure: the sources were deleted again during the second pass.
        """
        if run.dry_run or not report.changed_notebook:
            return run
        listing = await read_remote(self.client, notebook.notebook_id, expect_sources=True)
        gone = report.counted_on() - set(listing.ids())
        if not gone:
            return run
        again = await self._prepare_run(notebook._replace(first=None), RefreshReport(notebook_id=notebook.notebook_id),
                                        dry_run=False)
        await ensure_sources_for_paths(again, chosen.paths, found=chosen.found, all_notes=scope, stats=chosen.stats)
        report.add_pass(again.report, gone)
        left = report.counted_on() - set(again.remote.ids())
        report.notices.append(f"another device changed the notebook during this run: {len(gone)} "
                              f"{'source' if len(gone) == 1 else 'sources'} this run counted on "
                              f"{'was' if len(gone) == 1 else 'were'} deleted, and their notes uploaded again")
        if left:
            raise PartialFailure(f"{len(left)} {'source' if len(left) == 1 else 'sources'} this run counted on "
                                 "left the notebook while it ran (another device at work)",
                                 hint="run 'nlmsync refresh' again once the other device is done", report=report)
        return again

    async def keep_current(self, paths: Sequence[str]) -> RefreshReport | None:
        """Refresh those of `paths` that are already synced to the notebook (watch mode) — in a packed notebook
        every note of `paths` that is in the vault, since each note belongs in a pack; None if none are.

        Raises:
            PartialFailure, CapacityError: as `refresh`.
        """
        notebook_id = (await self._notebook(create=False)).notebook_id
        synced = {m.path for m in self.store.all_mappings(notebook_id)} | set(self.store.pack_members(notebook_id))
        packed = self.store.has_packs(notebook_id)
        wanted = [p for p in paths if p in synced or (packed and (self.vault_root / p).is_file())]
        return await self.refresh(wanted) if wanted else None

    def _refresh_notes(self, notebook_id: str, named: list[tuple[str, bool]] | None, query: str | None,
                       all_notes: bool, report: RefreshReport) -> RefreshNotes:
        """The notes a refresh covers (`RefreshNotes`): every note of the vault, the notes named (and those `query`
        selects), or the notes already synced. A `query` nothing matches well adds no note, and the report says
        so."""
        if all_notes and named is None:
            walked, passed_over = vault_notes(self.vault_root, self.settings.exclude, self._attachments)
            stats = {path: stat for path, stat in walked.items() if stat is not None}
            return RefreshNotes(list(walked), set(walked), passed_over, stats)
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
        return RefreshNotes(unique, set(unique) - {note for note, by_name in named or () if by_name})

    # --- ask -----------------------------------------------------------------------------------
    async def ask(self, question: str, conversation_id: str | None = None, new: bool = False,
                  continue_latest: bool = False) -> AskResult:
        """Select notes for `question`, make them live, query with the sources the conversation carries over, record the turn.

        Goes to `conversation_id`, or a new conversation with `new`; else continues the notebook's latest
        conversation when the question follows it up (`follow_up`; always with `continue_latest`), and starts a new
        one when it does not, saying so.

        Raises:
            UsageError: the question is empty.
            CapacityError: the selected notes cannot be made live.
            NotebookLMError: the query failed.
        """
        if not question.strip():
            raise UsageError("the question is empty")
        await self.allowance.check(self.client)  # before anything is uploaded for a question not sent
        async with held_writer(self.store):  # sources are prepared by one run at a time …
            notebook = await self._notebook(create=True)
            notebook_id = notebook.notebook_id
            run = await self._prepare_run(notebook, RefreshReport(notebook_id=notebook_id), dry_run=False)
            remote = run.remote
            selection = self._selection(question)
            hits = selection.chosen
            if self.progress:
                self.progress.start("preparing sources", len(hits))
            prepared = await ensure_sources_for_paths(run, [h.path for h in hits])
            outcomes = prepared.notes
            result = AskResult(notebook_id=notebook_id, question=question, answer="", conversation_id=None,
                               selected_notes=[SelectedNote(path=h.path, score=h.score) for h in hits], notes=outcomes,
                               packs=prepared.packs, weak_match=selection.weak,
                               question_language=selection.language or None)
            if selection.weak:
                result.notices.append(WEAK_MATCH_NOTICE)
            live = [o for o in outcomes if o.branch.live]
            result.notices.extend(f"{o.path}: {o.error}" for o in outcomes if o.branch == Branch.FAILED)
            result.notices.extend(self._notices(notebook, run))
            conversation = None if new else (conversation_id or self._latest_followed_up(
                notebook_id, question, hits, continue_latest, result.notices))
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
        result.continued = conversation is not None
        result.citations = map_citations(self.store, self.vault_root, notebook_id, answer, live,
                                         self._citation_preference(selection, earlier))
        if result.conversation_id:
            async with held_writer(self.store):
                self.store.record_turn(notebook_id, result.conversation_id, question, answer.answer,
                                       result.source_ids, [o.path for o in live], answer.citations)
        return result

    def _latest_followed_up(self, notebook_id: str, question: str, hits: list[SearchHit], always: bool,
                            notices: list[str]) -> str | None:
        """The notebook's latest conversation when `question` (its notes: `hits`) follows it up (`follows_up`, or
        `always`), else None — a new conversation, said in `notices` when there was one to continue."""
        from nlmsync.search import names_nothing  # loaded with the index a question is selected by

        latest = self.store.latest_conversation(notebook_id)
        if latest is None or always:
            return latest
        ratio = self.settings.cutoff_ratio
        recent = dict.fromkeys(r.question for r in self.store.query_records(notebook_id, latest)[:FOLLOWED_TURNS])
        earlier = {path for asked in recent for path in well_matched(self._selection(asked).chosen, ratio)}
        if follows_up(well_matched(hits, ratio), earlier, names_nothing=names_nothing(question)):
            return latest
        notices.append(f"a new conversation: the question shares no note with the latest one ({latest}), which "
                       "it follows up when asked to (--continue, or that conversation's id)")
        return None

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
    async def listing(self, *, level: bool = False) -> Listing:
        """The notebook of this run, a fresh listing of it and its capacity (the plan not read); with `level`, the
        state file is first brought level with what the notebook holds and it does not know yet (`status`,
        `sources`), and a vault that has no notebook yet (a fresh machine, a lost state file) takes this one: its
        next command needs no --notebook. A vault that has one keeps it: looking at another notebook does not
        rebind the vault."""
        notebook = await self._notebook(create=False)
        notebook_id = notebook.notebook_id
        remote = await self._remote(notebook)
        capacity = decide_capacity(replace(self._known_capacity(notebook_id), held=len(remote)))
        levelled = None
        if level:
            async with held_writer(self.store):
                levelled = await self._level(notebook_id, remote, capacity)
        return Listing(notebook_id, remote, capacity, levelled)

    async def _level(self, notebook_id: str, remote: RemoteView, capacity: Capacity) -> str | None:
        """For a command that looks at the notebook (under the writer lock): the state file brought level with what
        the notebook holds, and the notebook taken as the vault's when it has none yet (see `listing`); returns
        what it says of what it adopted and deleted (None: nothing)."""
        if self.store.default_notebook() is None:
            self.store.set_default_notebook(notebook_id)
        return (await level_with_notebook(self._deps(notebook_id, capacity), remote)).notice()

    async def status(self, paths: Sequence[str] = ()) -> StatusReport:
        """The registry against the remote listing and the vault, with the next steps, and for each of `paths`
        (vault-relative notes) the source that holds it; changes nothing."""
        notebook_id, remote, _, levelled = await self.listing(level=True)
        known = self._known_capacity(notebook_id)
        plan = await self._plan(known.setting is None)  # shown, even when a capacity given before decides
        capacity = decide_capacity(replace(known, plan=plan_figure(plan), held=len(remote)))
        report = status_report(self.store, self.settings, notebook_id, remote, limit=capacity,
                               plan=plan.plan if plan is not None else None,
                               allowance=await self.allowance.read(self.client), paths=paths)
        report.notices = [levelled] if levelled else []
        return report

    async def reconcile(self) -> ReconcileReport:
        """Reconciliation against one fresh listing: mark mappings active (canonical ids) or stale."""
        async with held_writer(self.store):
            notebook_id, remote, capacity, _ = await self.listing()
            await self._level(notebook_id, remote, capacity)
            result = self.store.reconcile(notebook_id, remote.ids())
            orphans = orphan_ids(remote, accounted_ids(self.store, notebook_id))
        return ReconcileReport(notebook_id=notebook_id, active_count=len(result.active),
                               stale_paths=[m.path for m in result.stale],
                               canonicalized_paths=[m.path for m in result.canonicalized],
                               orphan_source_ids=orphans)

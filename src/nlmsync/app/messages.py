"""What a run says in words: the next steps `status` proposes (each with the command that takes it), and the
one line of a refresh where some notes failed (exit 6)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from nlmsync.app.results import NextStep, StatusReport
from nlmsync.sync import Branch, RefreshReport
from nlmsync.vault import is_note_path


def _counted(count: int, singular: str, plural: str) -> str:
    return f"{count} {singular if count == 1 else plural}"


def next_steps(report: StatusReport, orphan_paths: Sequence[str]) -> list[NextStep]:
    """What to do about what `status` found, most pressing first (`orphan_paths`: the vault notes the orphans'
    titles name; an orphan of a note that left the vault is listed by `status`, and only NotebookLM removes it)."""
    steps: list[NextStep] = []
    if report.source_count > report.capacity:
        steps.append(NextStep(
            why=f"the notebook holds {report.source_count} sources, capacity is {report.capacity}",
            command="set 'capacity' to your plan's limit (50 free, 100 Plus, 300 Pro, 600 Ultra) in "
                    ".nlmsync/config.toml or NLMSYNC_CAPACITY"))
    changed = [c for c in report.local_changes if c.change in ("modified", "renamed")]
    if changed:
        targets = " ".join(dict.fromkeys(c.command.removeprefix("nlmsync refresh ") for c in changed))
        steps.append(NextStep(why=f"{_counted(len(changed), 'synced note', 'synced notes')} changed in the vault",
                              command=f"nlmsync refresh {targets}"))
    new = [c for c in report.local_changes if c.change == "added"]
    if new:
        steps.append(NextStep(why=f"{_counted(len(new), 'note of the vault is', 'notes of the vault are')} in no "
                                  "source of the packed notebook",
                              command="nlmsync refresh --all (puts each in its pack)"))
    gone = [c for c in report.local_changes if c.change in ("deleted", "excluded")]
    if gone:
        steps.append(NextStep(why=f"{_counted(len(gone), 'synced note was', 'synced notes were')} deleted or "
                                  "excluded; their sources stay",
                              command="nlmsync refresh --all (mirrors the vault: also uploads notes not synced yet)"))
    lost = [p for p in report.packs if not p.live]
    if lost:
        held = sum(p.note_count for p in lost)
        steps.append(NextStep(why=f"{_counted(len(lost), 'pack', 'packs')} holding "
                                  f"{_counted(held, 'note', 'notes')} {'is' if len(lost) == 1 else 'are'} "
                                  "missing from the notebook",
                              command="nlmsync refresh (uploads them again)"))
    if report.stale_sources:
        paths = " ".join(shlex.quote(p) for p in dict.fromkeys(e.path for e in report.stale_sources))
        missing = _counted(len(report.stale_sources), "synced source is", "synced sources are")
        steps.append(NextStep(why=f"{missing} missing from the notebook",
                              command=f"nlmsync refresh {paths}"))
    if orphan_paths:
        orphans = _counted(len(orphan_paths), "source titled by nlmsync for a note of the vault is",
                           "sources titled by nlmsync for notes of the vault are")
        paths = " ".join(shlex.quote(p) for p in dict.fromkeys(orphan_paths))
        steps.append(NextStep(why=f"{orphans} not in the state file; refreshing the notes adopts them",
                              command=f"nlmsync refresh {paths}"))
    if report.pending_deletions:
        waiting = _counted(len(report.pending_deletions), "source waits", "sources wait")
        steps.append(NextStep(why=f"{waiting} to be deleted",
                              command="nlmsync refresh (retries them first)"))
    return steps


def _failed_of(failed: int, requested: int, one: str, many: str) -> str:
    if failed == requested:
        return f"the one {one}" if requested == 1 else f"all {requested} {many}"
    return f"{failed} of {requested} {many}"


def partial_failure_message(report: RefreshReport, requested: Sequence[str]) -> str:
    """One line for a refresh where some notes, attachments (or packs) failed, saying truly what else happened
    (exit 6); `requested` are the run's paths, its notes and its attachments counted apart."""
    if not report.failed:
        packs = report.failed_packs
        fine = [p for p in report.packs if p.branch != Branch.FAILED]
        said = f"{len(packs)} of {len(packs) + len(fine)} packs failed" if fine else (
            "the one pack failed" if len(packs) == 1 else f"all {len(packs)} packs failed")
        rest = "the rest were done and recorded" if fine or report.notes else "nothing was done"
        return f"{said}; {rest} (first: {packs[0].title}: {packs[0].error})"
    failed = report.failed
    first = failed[0]
    why = first.error or ""
    where = why if why.startswith(first.path) else f"{first.path}: {why}"
    done = [n for n in report.notes if n.branch not in (Branch.FAILED, Branch.EXCLUDED)]
    files = {p for p in requested if not is_note_path(p)}
    failed_files = sum(1 for n in failed if n.path in files)
    counts = [(len(failed) - failed_files, len(requested) - len(files), "note", "notes"),
              (failed_files, len(files), "attachment", "attachments")]
    said = " and ".join(_failed_of(*count) for count in counts if count[0]) + " failed"
    if not done:
        rest = "nothing was done"
    elif all(n.branch in (Branch.EVICTED, Branch.REMOVED) for n in done):
        rest = "only the removals before them were done and recorded"
    else:
        rest = "the rest were done and recorded"
    return f"{said}; {rest} (first: {where})"

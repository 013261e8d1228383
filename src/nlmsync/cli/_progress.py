"""Progress displays on stderr: a labelled line while the total is unknown, then done/total with an ETA.

Imported by the commands that show progress, when they run (it imports rich).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.progress import BarColumn, Progress, ProgressColumn, SpinnerColumn, Task, TextColumn
from rich.text import Text

from nlmsync.cli._output import stderr_console


def duration(seconds: float) -> str:
    """`m:ss`, or `h:mm:ss` from an hour on."""
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class CountsColumn(ProgressColumn):
    """`done/total` and, once rich can estimate it, `ETA m:ss`; nothing while the total is unknown."""

    def render(self, task: Task) -> Text:
        if task.total is None:
            return Text("")
        counts = f"{int(task.completed)}/{int(task.total)}"
        remaining = task.time_remaining
        if remaining is not None and not task.finished and task.completed:
            counts += f" · ETA {duration(remaining)}"
        return Text(counts, style="progress.percentage")


def new_progress(get_time: Callable[[], float] | None = None) -> Progress:
    """A transient progress display on stderr: spinner, label, bar, done/total and ETA."""
    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), CountsColumn(),
                    console=stderr_console(), transient=True, get_time=get_time)


@contextmanager
def index_progress(label: str) -> Iterator[Callable[[int, int], None]]:
    """A display for `NoteIndex.sync(on_progress=…)`: `label` while the vault is walked, then the notes read
    as done/total with an ETA, then "saving the index" while the changes are merged and written."""
    with new_progress() as progress:
        task: Any = progress.add_task(f"{label}: scanning the vault", total=None)
        phase = "scanning"

        def on_progress(done: int, total: int) -> None:
            nonlocal task, phase
            if done < total:
                progress.update(task, description=f"{label}: reading notes", total=total, completed=done,
                                refresh=phase == "scanning")  # each new phase is shown at once
                phase = "reading"
            elif phase != "saving":
                phase = "saving"
                progress.remove_task(task)
                task = progress.add_task(f"{label}: saving the index", total=None)
                progress.refresh()

        yield on_progress
